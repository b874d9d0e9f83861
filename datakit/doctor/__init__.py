"""The pipeline doctor: any ``tf.data`` pipeline's chain, each stage's cost, measured advice.

>>> from datakit import doctor
>>> doctor.diagnose.__module__
'datakit.doctor.diagnosis'
"""

from datakit.doctor.advice import Advice, advise
from datakit.doctor.diagnosis import Report, Stage, diagnose, plot_report

__all__ = ["diagnose", "plot_report", "Report", "Stage", "advise", "Advice"]
