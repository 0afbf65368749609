"""Hyperparameter tuning: the CreateHyperParameterTuningJob request as SDK v2 sends it and the SageMaker job."""
