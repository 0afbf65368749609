"""Stand-in for the SageMaker training toolkit (`sagemaker_training`) in local jobs (see launcher/local/job_modules.py):
`environment.Environment` built from the job's SM_TRAINING_ENV, the facts its SM_* variables come from;
`entry_point.run`/`install` starting a script as the container does; `runner` and `errors` under the toolkit's names."""
