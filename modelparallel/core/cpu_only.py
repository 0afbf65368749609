"""SMP scripts are written for GPUs: they call `torch.cuda.set_device(smp.local_rank())` right after smp.init.
On a torch without CUDA that call fails, although the rank's device is well defined (the CPU, as smp.init chose).
So on such a torch smp.init makes `torch.cuda.set_device` accept the call and leave the device as it is; every
other CUDA call still fails as torch makes it fail (the script then needs a CPU path)."""

from __future__ import annotations

import logging

log = logging.getLogger(__name__)


def tolerate_cuda_device_calls() -> None:
    import torch

    if torch.cuda.is_available() or getattr(torch.cuda.set_device, "_smp_cpu_only", False):
        return

    def set_device(device: object) -> None:
        log.info("torch.cuda.set_device(%r) ignored: this torch has no CUDA, the rank runs on the CPU", device)

    set_device.__dict__["_smp_cpu_only"] = True
    torch.cuda.set_device = set_device
