"""smp.nn: SMP v1's distributed transformer layers (transformer.py); importing is cheap (torch on first use)."""

from __future__ import annotations

import importlib
from typing import Any

_LAZY = {name: "modelparallel.nn.transformer" for name in (
    "DistributedAttentionLayer", "DistributedTransformerOutputLayer", "DistributedTransformerLayer",
    "DistributedTransformer", "DistributedTransformerLMHead")}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'modelparallel.nn' has no attribute {name!r}")
