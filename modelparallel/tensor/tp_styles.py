"""DTensor parallel styles for Hugging Face's `Conv1D` (GPT-2, GPT, ...): a Linear with its weight stored
transposed ([in, out]), which torch's ColwiseParallel / RowwiseParallel refuse (they take nn.Linear/Embedding).

Column-wise: weight Shard(1), bias Shard(0); row-wise: weight Shard(0), bias replicated. A fused projection
(GPT-2's c_attn = [q | k | v] along the output) is sharded with `_StridedShard(split_factor=3)`: each rank holds
its slice of q, of k and of v, so the split heads compute the same function, and `full_tensor()` (checkpoints)
puts the columns back in the original order. The module's own forward runs on the DTensors (addmm + view).
"""

from __future__ import annotations

from functools import partial

import torch.nn as nn
from torch.distributed.tensor import Replicate, Shard, distribute_tensor
from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel
from torch.distributed.tensor.parallel.style import distribute_module
from torch.distributed.tensor.placement_types import _StridedShard


def is_conv1d(module) -> bool:
    """transformers.pytorch_utils.Conv1D (checked by name: transformers need not be importable)."""
    return type(module).__name__ == "Conv1D" and hasattr(module, "nf") and hasattr(module, "nx")


def _register(module, name: str, placement, mesh, src_data_rank) -> None:
    param = getattr(module, name)
    module.register_parameter(name, nn.Parameter(
        distribute_tensor(param, mesh, [placement], src_data_rank=src_data_rank), requires_grad=param.requires_grad))


class Conv1DColwiseParallel(ColwiseParallel):
    """ColwiseParallel for Conv1D; `fused` > 1 shards each of the `fused` equal output blocks separately."""

    def __init__(self, fused: int = 1):
        super().__init__()
        self.fused = fused

    def _partition(self, name, module, mesh):
        weight = _StridedShard(1, split_factor=self.fused) if self.fused > 1 else Shard(1)
        bias = _StridedShard(0, split_factor=self.fused) if self.fused > 1 else Shard(0)
        _register(module, "weight", weight, mesh, self.src_data_rank)
        _register(module, "bias", bias, mesh, self.src_data_rank)

    @staticmethod
    def _local_output(mod, outputs, device_mesh):
        # the output is sharded like the weight's columns (strided when fused): this rank's q, k, v slices,
        # which is what the attention splits; redistributing to Shard(-1) would reorder them
        return outputs.to_local()

    def _apply(self, module, device_mesh):
        return distribute_module(
            module, device_mesh, self._partition,
            partial(self._prepare_input_fn, self.input_layouts, self.desired_input_layouts), self._local_output)


class Conv1DRowwiseParallel(RowwiseParallel):
    def _partition(self, name, module, mesh):
        _register(module, "weight", Shard(0), mesh, self.src_data_rank)
        _register(module, "bias", Replicate(), mesh, self.src_data_rank)

    def _apply(self, module, device_mesh):
        self.desired_input_layouts = (Shard(-1),)
        return distribute_module(
            module, device_mesh, self._partition,
            partial(self._prepare_input_fn, self.input_layouts, self.desired_input_layouts),
            partial(self._prepare_output_fn, self.output_layouts, self.use_local_output))
