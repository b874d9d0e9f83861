"""The pipeline doctor: any ``tf.data`` pipeline's chain, each stage's cost and memory,
measured advice.

>>> from datakit import doctor
>>> doctor.diagnose.__module__
'datakit.doctor.diagnosis'
"""

from typing import TYPE_CHECKING

from datakit.core.faces import lazy_names

if TYPE_CHECKING:  # the real types of the names _HOME loads on first use
    from datakit.doctor.advice import Advice, advise
    from datakit.doctor.diagnosis import Report, Stage, diagnose, plot_report
    from datakit.doctor.memory_advice import MemoryAdvice, memory_advice
    from datakit.doctor.memory_use import MemoryReport, memory_report, plot_memory

__all__ = ["diagnose", "plot_report", "Report", "Stage", "advise", "Advice", "memory_report",
           "plot_memory", "MemoryReport", "memory_advice", "MemoryAdvice"]

#: Each re-exported name and the module it lives in (imported on first use).
_HOME = {
    "diagnose": "diagnosis",
    "plot_report": "diagnosis",
    "Report": "diagnosis",
    "Stage": "diagnosis",
    "advise": "advice",
    "Advice": "advice",
    "memory_report": "memory_use",
    "plot_memory": "memory_use",
    "MemoryReport": "memory_use",
    "memory_advice": "memory_advice",
    "MemoryAdvice": "memory_advice",
}

if not TYPE_CHECKING:  # to mypy, a name not imported above is an error, not Any
    __getattr__, __dir__ = lazy_names(__name__, _HOME)
