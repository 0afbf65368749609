"""`TensorFlow(...)`: the SageMaker SDK's TensorFlow estimator arguments, validated offline."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import field_validator

from sagelaunch.estimators.base import FrameworkEstimator
from sagelaunch.estimators.framework_model import TensorFlowModel
from sagelaunch.estimators.trained_model import trained_job_of, trained_model_data, vpc_config_of
from sagelaunch.jobspec.errors import SagelaunchError
from sagelaunch.jobspec.names import job_name

if TYPE_CHECKING:
    from sagelaunch.estimators.framework_model import TensorFlowModel


class TensorFlow(FrameworkEstimator):
    """SDK v2's sagemaker.tensorflow.TensorFlow: a TensorFlow training job; FrameworkEstimator's arguments and
    model_dir."""

    framework: ClassVar[str] = "tensorflow"

    # SDK v2's TensorFlow.__init__(py_version, framework_version, model_dir, image_uri, distribution, …):
    # entry_point and the rest are keyword arguments there
    POSITIONAL: ClassVar[tuple[str, ...]] = ("py_version", "framework_version", "model_dir", "image_uri",
                                             "distribution")

    # the `model_dir` hyperparameter: None sends v2's default (s3://<output>/<job>/model, /opt/ml/model under
    # MPI) on SageMaker; a path sends that path; False sends none
    model_dir: str | bool | None = None
    """TensorFlow's `model_dir` hyperparameter: None sends v2's default (the job's S3 model folder; /opt/ml/model
    under MPI), a path sends that path, False sends none."""

    @field_validator("model_dir")
    @classmethod
    def _model_dir(cls, v: str | bool | None) -> str | bool | None:
        if v is True or v == "":
            raise SagelaunchError(f"model_dir={v!r}: allowed: an S3 URI or container path such as s3://bucket/model, "
                                  "False (send no model_dir), or None (the default s3://<output_path>/<job>/model)",
                                  field="model_dir", value=v,
                                  allowed="an S3 URI or container path, False, or None",
                                  fix="pass s3://bucket/model, False or None")
        return v

    def _framework_spec_fields(self, local: bool) -> dict[str, Any]:
        if isinstance(self.model_dir, str):
            return {"model_dir": self.model_dir}
        # a local job gets no default: its script saves to SM_MODEL_DIR (an S3 URI would not be writable here)
        return {"default_model_dir": self.model_dir is None and not local}

    def create_model(self, role: str | None = None, vpc_config_override: Any = "VPC_CONFIG_DEFAULT",
                     entry_point: str | None = None, source_dir: str | None = None,
                     dependencies: list[str] | None = None, **kwargs: Any) -> TensorFlowModel:
        """v2's TensorFlow.create_model: a TensorFlowModel (TF Serving) of the trained model; unlike PyTorch,
        no training code is attached unless entry_point is given."""
        job = trained_job_of(self.latest_training_job)
        kwargs["name"] = kwargs.get("name") or job_name(self._default_base_job_name())
        kwargs.setdefault("image_uri", self.image_uri)
        isolation = self.enable_network_isolation  # a method in v2, a field or method here
        kwargs.setdefault("enable_network_isolation", isolation() if callable(isolation) else isolation)
        kwargs.setdefault("region", self.resolved.region)
        return TensorFlowModel(
            model_data=trained_model_data(job), role=role or self.role, container_log_level=self.container_log_level,
            framework_version=self.resolved.framework_version,
            sagemaker_session=getattr(self, "sagemaker_session", None),
            vpc_config=vpc_config_of(self, vpc_config_override), entry_point=entry_point, source_dir=source_dir,
            dependencies=dependencies, **kwargs)
