"""sagelaunch launcher: runs a jobspec.TrainingJobSpec — the request compiler, the local and SageMaker backends
(behind launcher.backends), the local registry, model deployment, and the probes of this machine."""
