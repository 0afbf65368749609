"""`import smppy` in a local job is sagelaunch's profiler under SageMaker Profiler's name: the same module
object as `sagelaunch.profiler.smprof`, so `SMProfiler.instance()`, `Config` and `annotate` work unchanged
(launcher/local/job_modules.py)."""

import sys

from sagelaunch.profiler import smprof

sys.modules[__name__] = smprof
