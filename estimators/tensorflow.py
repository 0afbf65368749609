"""`TensorFlow(...)`: the SageMaker SDK's TensorFlow estimator arguments, validated offline."""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import field_validator

from estimators.base import FrameworkEstimator


class TensorFlow(FrameworkEstimator):
    framework: ClassVar[str] = "tensorflow"

    # the `model_dir` hyperparameter: None sends v2's default (s3://<output>/<job>/model, /opt/ml/model under
    # MPI) on SageMaker; a path sends that path; False sends none
    model_dir: str | bool | None = None

    @field_validator("model_dir")
    @classmethod
    def _model_dir(cls, v: str | bool | None) -> str | bool | None:
        if v is True or v == "":
            raise ValueError(f"model_dir={v!r}: allowed: an S3 URI or container path such as s3://bucket/model, "
                             "False (send no model_dir), or None (the default s3://<output_path>/<job>/model)")
        return v

    def _framework_spec_fields(self, local: bool) -> dict[str, Any]:
        if isinstance(self.model_dir, str):
            return {"model_dir": self.model_dir}
        # a local job gets no default: its script saves to SM_MODEL_DIR (an S3 URI would not be writable here)
        return {"default_model_dir": self.model_dir is None and not local}
