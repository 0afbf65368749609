"""`PyTorch(...)`: the SageMaker SDK's PyTorch estimator arguments, validated offline."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from sagelaunch.estimators.base import FrameworkEstimator
from sagelaunch.estimators.framework_model import PyTorchModel
from sagelaunch.estimators.trained_model import trained_job_of, trained_model_data, training_code_of, vpc_config_of
from sagelaunch.jobspec.names import job_name

if TYPE_CHECKING:
    from sagelaunch.estimators.framework_model import PyTorchModel


class PyTorch(FrameworkEstimator):
    """SDK v2's sagemaker.pytorch.PyTorch: a PyTorch training job (torchrun locally); FrameworkEstimator's
    arguments."""

    framework: ClassVar[str] = "pytorch"

    def create_model(self, model_server_workers: int | None = None, role: str | None = None,
                     vpc_config_override: Any = "VPC_CONFIG_DEFAULT", entry_point: str | None = None,
                     source_dir: str | None = None, dependencies: list[str] | None = None, **kwargs: Any) -> PyTorchModel:
        """v2's PyTorch.create_model: a PyTorchModel of the trained model, served with the training code
        (the job's entry_point and source_dir) unless entry_point / source_dir say otherwise."""
        job = trained_job_of(self.latest_training_job)
        kwargs.setdefault("image_uri", self.image_uri)
        kwargs["name"] = kwargs.get("name") or job_name(self._default_base_job_name())
        kwargs.setdefault("region", self.resolved.region)
        trained_entry, trained_source = training_code_of(self, job)
        return PyTorchModel(
            trained_model_data(job), role or self.role, entry_point or trained_entry,
            framework_version=self.resolved.framework_version, py_version=self.resolved.py_version,
            source_dir=source_dir or trained_source, container_log_level=self.container_log_level,
            code_location=getattr(self, "code_location", None), model_server_workers=model_server_workers,
            sagemaker_session=getattr(self, "sagemaker_session", None),
            vpc_config=vpc_config_of(self, vpc_config_override),
            dependencies=dependencies or getattr(self, "dependencies", None), **kwargs)
