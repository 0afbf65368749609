"""`import smppy` in a local job is sagelaunch's profiler under SageMaker Profiler's name: the same module
object as `profiler.smprof`, so `SMProfiler.instance()`, `Config` and `annotate` work unchanged
(launcher/local/job_modules.py)."""

import sys

from profiler import smprof

sys.modules[__name__] = smprof
