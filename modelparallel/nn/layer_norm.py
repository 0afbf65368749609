"""smp.nn.FusedLayerNorm: SMP's (apex-derived) fused LayerNorm. The fusion is a CUDA kernel detail; the maths
is torch.nn.LayerNorm's, so it is that module (scripts also use it as a type, e.g. to exempt its parameters
from weight decay)."""

from __future__ import annotations

import torch


class FusedLayerNorm(torch.nn.LayerNorm):
    def __init__(self, normalized_shape, eps: float = 1e-5, elementwise_affine: bool = True, **kwargs):
        super().__init__(normalized_shape, eps=eps, elementwise_affine=elementwise_affine, **kwargs)
