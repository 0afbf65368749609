"""`PyTorch(...)`: the SageMaker SDK's PyTorch estimator arguments, validated offline."""

from __future__ import annotations

from typing import ClassVar

from estimators.base import FrameworkEstimator


class PyTorch(FrameworkEstimator):
    framework: ClassVar[str] = "pytorch"
