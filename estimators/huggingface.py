"""`HuggingFace(...)`: SDK v2's Hugging Face estimator — a PyTorch job on the Hugging Face DLC.

`transformers_version` + `pytorch_version` + `py_version` choose the image exactly as v2 resolves it
(jobspec.catalog.huggingface_image_uri); the job itself is a PyTorch job (locally: torchrun, as `PyTorch`).
`tensorflow_version` (v2's TensorFlow flavour) is refused by name.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import model_validator

from sagelaunch.estimators.framework_model import HuggingFaceModel
from sagelaunch.estimators.pytorch import PyTorch
from sagelaunch.estimators.trained_model import trained_job_of, vpc_config_of
from sagelaunch.jobspec.catalog import huggingface_image_uri
from sagelaunch.jobspec.errors import SagelaunchError, SagelaunchRuntimeError
from sagelaunch.jobspec.names import job_name

if TYPE_CHECKING:
    from sagelaunch.estimators.framework_model import HuggingFaceModel


class HuggingFace(PyTorch):
    """SDK v2's sagemaker.huggingface.HuggingFace: a PyTorch job on the Hugging Face training image; PyTorch's
    arguments, with transformers_version and pytorch_version choosing the image."""

    # SDK v2's HuggingFace.__init__(py_version, entry_point, transformers_version, tensorflow_version,
    # pytorch_version, source_dir, hyperparameters, image_uri, distribution, compiler_config, **kwargs)
    POSITIONAL: ClassVar[tuple[str, ...]] = ("py_version", "entry_point", "transformers_version", "tensorflow_version",
                                             "pytorch_version", "source_dir", "hyperparameters", "image_uri",
                                             "distribution")

    transformers_version: str | None = None
    """Transformers version of the Hugging Face training image (e.g. '4.28.1')."""
    pytorch_version: str | None = None
    """PyTorch version of the Hugging Face training image (e.g. '2.0.0'); the job's framework_version."""
    tensorflow_version: str | None = None
    """TensorFlow version of v2's TensorFlow flavour; refused by name (sagelaunch runs the PyTorch flavour)."""

    @model_validator(mode="before")
    @classmethod
    def _framework_version_is_pytorchs(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        if data.get("tensorflow_version") is not None:
            raise SagelaunchError(f"tensorflow_version={data['tensorflow_version']!r}: the TensorFlow flavour of the "
                                  "Hugging Face estimator is not supported by sagelaunch; allowed: pytorch_version=... "
                                  "(or the TensorFlow estimator with the Hugging Face image as image_uri)",
                                  field="tensorflow_version", value=data["tensorflow_version"],
                                  allowed="pytorch_version=...",
                                  fix="or the TensorFlow estimator with the Hugging Face image as image_uri")
        if data.get("framework_version") not in (None, data.get("pytorch_version")):  # (assignments re-validate)
            raise SagelaunchError("framework_version is not a HuggingFace argument (v2 takes pytorch_version); "
                                  f"pass pytorch_version={data['framework_version']!r}", field="framework_version",
                                  value=data["framework_version"], allowed="pytorch_version",
                                  fix=f"pass pytorch_version={data['framework_version']!r}")
        if data.get("image_uri") is None and (data.get("transformers_version") is None
                                              or data.get("pytorch_version") is None):
            example = "transformers_version='4.28.1', pytorch_version='2.0.0', py_version='py310'"
            raise SagelaunchError(f"HuggingFace needs transformers_version and pytorch_version (or image_uri), e.g. "
                                  f"{example}", field="transformers_version" if data.get("transformers_version") is None
                                  else "pytorch_version", value=None, allowed="a version, or image_uri",
                                  fix=f"e.g. {example}")
        return {**data, "framework_version": data.get("pytorch_version")}

    def catalog_image(self, version: str, py_version: str, region: str, instance_type: str) -> tuple[str, str, str]:
        transformers, pytorch = self.transformers_version, self.pytorch_version
        if transformers is None or pytorch is None:  # the validator requires both without image_uri
            raise SagelaunchRuntimeError("HuggingFace: transformers_version and pytorch_version are not set")
        uri, py = huggingface_image_uri(transformers, pytorch, self.py_version, region, instance_type)
        return py, uri, uri.rsplit("/", 1)[1].split(":")[0]

    def create_model(self, model_server_workers: int | None = None, role: str | None = None,
                     vpc_config_override: Any = "VPC_CONFIG_DEFAULT", entry_point: str | None = None,
                     source_dir: str | None = None, dependencies: list[str] | None = None, **kwargs: Any) -> HuggingFaceModel:
        """v2's HuggingFace.create_model: a HuggingFaceModel of the trained model (the training code only when
        entry_point is given, as in v2)."""
        job = trained_job_of(self.latest_training_job)
        kwargs.setdefault("image_uri", self.image_uri)
        kwargs["name"] = kwargs.get("name") or job_name(self._default_base_job_name())
        kwargs.setdefault("region", self.resolved.region)
        return HuggingFaceModel(
            role or self.role, job.model_data, entry_point, transformers_version=self.transformers_version,
            pytorch_version=self.pytorch_version, py_version=self.resolved.py_version, source_dir=source_dir,
            container_log_level=self.container_log_level, code_location=getattr(self, "code_location", None),
            model_server_workers=model_server_workers, sagemaker_session=getattr(self, "sagemaker_session", None),
            vpc_config=vpc_config_of(self, vpc_config_override),
            dependencies=dependencies or getattr(self, "dependencies", None), **kwargs)
