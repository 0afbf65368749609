"""Packaging and serving trained models: model.tar.gz, a local endpoint, SageMaker endpoints."""

from sagelaunch.launcher.deploy.package import package_model

__all__ = ["package_model"]
