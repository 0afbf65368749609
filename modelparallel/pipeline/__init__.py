"""Pipeline parallelism and smp.step: microbatches, partitioning into stages (a layer stack or any module tree),
the torch.distributed.pipelining schedules, StepOutput."""
