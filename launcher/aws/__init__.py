"""Small AWS helpers shared by the SageMaker backend and endpoint deployment.

clients (retrying boto3 clients that honour AWS_ENDPOINT_URL), s3 (default bucket, uploads),
logs (CloudWatch log streaming), errors (botocore errors → one clear message), training (role, inputs, code upload,
CreateTrainingJob), watch (waiting for a job). Job names are jobspec.names'.
boto3 is imported inside these modules only, never by `import sagelaunch.launcher`.
"""
