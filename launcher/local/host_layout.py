"""The /opt/ml tree of one local host (SageMaker's container paths), rooted in the job folder."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from sagelaunch.jobspec.contract import PROFILER_CONFIG_FILE, PROFILER_OUTPUT_SUBDIR


@dataclass(frozen=True)
class HostLayout:
    """The /opt/ml tree of one host, rooted in the job folder."""

    root: Path

    @property
    def input_dir(self) -> Path:
        return self.root / "input"

    @property
    def config_dir(self) -> Path:
        return self.root / "input" / "config"

    @property
    def data_dir(self) -> Path:
        return self.root / "input" / "data"

    @property
    def code_dir(self) -> Path:
        return self.root / "code"

    @property
    def model_dir(self) -> Path:
        return self.root / "model"

    @property
    def output_dir(self) -> Path:
        return self.root / "output"

    @property
    def output_data_dir(self) -> Path:
        return self.root / "output" / "data"

    @property
    def intermediate_dir(self) -> Path:
        return self.root / "output" / "intermediate"

    @property
    def failure_file(self) -> Path:
        return self.root / "output" / "failure"

    @property
    def profiler_dir(self) -> Path:
        return self.root.joinpath(*PROFILER_OUTPUT_SUBDIR)

    @property
    def checkpoints_dir(self) -> Path:
        return self.root / "checkpoints"

    @property
    def profiler_config_file(self) -> Path:
        return self.config_dir / PROFILER_CONFIG_FILE

    def channel_dir(self, channel: str) -> Path:
        return self.data_dir / channel

    def create(self) -> None:
        """Make the folders (checkpoints/ and channels are laid out by the backend)."""
        for folder in (self.config_dir, self.data_dir, self.code_dir, self.model_dir,
                       self.output_data_dir, self.intermediate_dir, self.profiler_dir):
            folder.mkdir(parents=True, exist_ok=True)
