"""Batch transform: the CreateTransformJob request as SDK v2 sends it, the SageMaker job and its local run."""
