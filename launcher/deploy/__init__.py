"""Packaging and serving trained models: model.tar.gz, a local endpoint, SageMaker endpoints."""

from launcher.deploy.package import package_model

__all__ = ["package_model"]
