"""The SageMaker half of the launcher: the backend, CreateTrainingJob and its waits and logs, endpoints and
transform jobs on SageMaker, the caller's role. boto3 loads only when one of these modules is used."""
