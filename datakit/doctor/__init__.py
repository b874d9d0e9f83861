"""The pipeline doctor: any ``tf.data`` pipeline's chain, each stage's cost and memory,
measured advice.

>>> from datakit import doctor
>>> doctor.diagnose.__module__
'datakit.doctor.diagnosis'
"""

from typing import TYPE_CHECKING

from datakit.core.faces import lazy_face

if TYPE_CHECKING:  # each name the face re-exports, loaded on first use
    from datakit.doctor.advice import advise
    from datakit.doctor.diagnosis import diagnose, plot_report
    from datakit.doctor.input_wait import input_wait
    from datakit.doctor.memory_advice import memory_advice
    from datakit.doctor.memory_use import memory_report, plot_memory

__all__ = lazy_face(__name__)
