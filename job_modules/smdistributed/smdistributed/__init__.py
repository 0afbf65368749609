"""Stand-in for the `smdistributed` namespace in local jobs (see launcher/local/job_modules.py)."""
