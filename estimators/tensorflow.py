"""`TensorFlow(...)`: the SageMaker SDK's TensorFlow estimator arguments, validated offline."""

from __future__ import annotations

from typing import ClassVar

from estimators.base import FrameworkEstimator


class TensorFlow(FrameworkEstimator):
    framework: ClassVar[str] = "tensorflow"

    # SDK v2's TensorFlow.__init__(py_version, framework_version, model_dir, image_uri, distribution, …):
    # entry_point and the rest are keyword arguments there
    POSITIONAL: ClassVar[tuple[str, ...]] = ("py_version", "framework_version", "model_dir", "image_uri",
                                             "distribution")

    model_dir: str | bool | None = None
