"""What both halves of the launcher share: the request compilers, the job handle, code files, archives,
AWS clients and S3, model packaging and predictors, this machine's region and GPUs."""
