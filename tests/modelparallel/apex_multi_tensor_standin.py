"""NVIDIA apex's `multi_tensor_applier` and the two `amp_C` kernels the May 2022 GPT-2 example's fp16 utilities call
(tests/data/smp_examples/gpt2_2022/fp16), as plain torch ops: apex is CUDA-only and not installable here. A module
of its own name, copied beside the example, never a package named `apex` or `amp_C` (that would shadow a real
installation). The arithmetic is apex's: every kernel computes in fp32 and writes in the output's dtype;
`multi_tensor_scale` raises the no-op flag when a scaled value is not finite; `multi_tensor_l2norm` returns the global
L2 norm (and the per-tensor norms when asked) as fp32 tensors."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, Callable

import torch


def _scale(chunk_size: int, noop_flag: torch.Tensor, tensor_lists: list[list[torch.Tensor]], scale: float) -> None:
    """out[i] = in[i] * scale for tensor_lists == [ins, outs] (apex: csrc/multi_tensor_scale_kernel.cu)."""
    sources, outputs = tensor_lists
    for source, output in zip(sources, outputs, strict=True):
        scaled = source.float() * scale
        if not torch.isfinite(scaled).all():
            noop_flag.fill_(1)
        output.copy_(scaled)


def _l2norm(chunk_size: int, noop_flag: torch.Tensor, tensor_lists: list[list[torch.Tensor]],
            per_tensor: bool = False) -> tuple[torch.Tensor, torch.Tensor]:
    """(the L2 norm of all tensors of tensor_lists[0] together, their per-tensor norms or an empty tensor), in fp32
    (apex: csrc/multi_tensor_l2norm_kernel.cu)."""
    norms = torch.stack([torch.linalg.vector_norm(t.float()) for t in tensor_lists[0]])
    total = torch.linalg.vector_norm(norms).reshape(1)
    if not torch.isfinite(total).all():
        noop_flag.fill_(1)
    return total, norms if per_tensor else torch.empty(0)


amp_C = SimpleNamespace(multi_tensor_scale=_scale, multi_tensor_l2norm=_l2norm)
CHUNK_SIZE = 2048 * 32  # apex's default chunk size; the plain-torch kernels do not chunk


def multi_tensor_applier(op: Callable[..., Any], noop_flag_buffer: torch.Tensor,
                         tensor_lists: list[list[torch.Tensor]], *args: Any) -> Any:
    """apex.multi_tensor_apply.multi_tensor_applier: op(chunk_size, noop_flag_buffer, tensor_lists, *args)."""
    return op(CHUNK_SIZE, noop_flag_buffer, tensor_lists, *args)
