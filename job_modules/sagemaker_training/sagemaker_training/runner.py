"""The toolkit's runner types (`sagemaker_training.runner`). A local job runs the Process runner; the MPI,
SMDataParallel and PyTorchXLA runners are refused by entry_point.run, naming the estimator setting that runs them."""

from __future__ import annotations

import enum


class RunnerType(enum.Enum):
    MPI = "MPI"
    Process = "Process"
    SMDataParallel = "SMDataParallel"
    PyTorchXLA = "PyTorchXLA"


ProcessRunnerType = RunnerType.Process
MPIRunnerType = RunnerType.MPI
SMDataParallelRunnerType = RunnerType.SMDataParallel
PyTorchXLARunnerType = RunnerType.PyTorchXLA
