"""`smdistributed.modelparallel` in a local job: sagelaunch's modelparallel (see launcher/local/job_modules.py)."""

from sagelaunch.modelparallel import __version__  # noqa: F401  (scripts print smdistributed.modelparallel.__version__)
