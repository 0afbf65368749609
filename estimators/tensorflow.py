"""`TensorFlow(...)`: the SageMaker SDK's TensorFlow estimator arguments, validated offline."""

from __future__ import annotations

from typing import ClassVar

from estimators.base import FrameworkEstimator


class TensorFlow(FrameworkEstimator):
    framework: ClassVar[str] = "tensorflow"
