"""Names a v2 notebook imports for features SageMaker has retired: importable, refused when used."""

from __future__ import annotations

from typing import Any

from sagelaunch.estimators.explain import RETIRED_ARGUMENTS
from sagelaunch.jobspec.errors import SagelaunchError


class TrainingCompilerConfig:
    """`from sagemaker.pytorch import TrainingCompilerConfig` keeps importing; making one says why it cannot run."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise SagelaunchError(f"TrainingCompilerConfig is refused: {RETIRED_ARGUMENTS['compiler_config']}",
                              field="compiler_config", value="TrainingCompilerConfig", allowed="none (retired)",
                              fix=RETIRED_ARGUMENTS["compiler_config"])
