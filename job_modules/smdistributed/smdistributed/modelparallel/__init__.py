"""`smdistributed.modelparallel` in a local job: sagelaunch's modelparallel (see launcher/local/job_modules.py)."""
