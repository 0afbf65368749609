"""AWS access both halves use: clients (retrying boto3 clients that honour AWS_ENDPOINT_URL), errors (botocore
errors → one clear message), limits, s3 (default bucket, uploads; local jobs read and write S3 too), console.
The SageMaker-only parts (training, watch, logs, identity) are launcher.sagemaker's. Job names are jobspec.names'.
boto3 is imported inside these modules only, never by `import sagelaunch.launcher`.
"""
