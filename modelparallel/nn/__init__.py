"""smp.nn: SMP v1's layers, one file per family (layer_norm.py, transformer.py, huggingface/); importing is cheap
(torch on first use of a layer)."""

from __future__ import annotations

import importlib
from typing import Any

from sagelaunch.modelparallel.nn import huggingface  # noqa: F401  (the translate_* functions; no torch at import)

_LAZY = {"FusedLayerNorm": "sagelaunch.modelparallel.nn.layer_norm", **{name: "sagelaunch.modelparallel.nn.transformer" for name in (
    "DistributedAttentionLayer", "DistributedTransformerOutputLayer", "DistributedTransformerLayer",
    "DistributedTransformer", "DistributedTransformerLMHead")}}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'sagelaunch.modelparallel.nn' has no attribute {name!r}")
