"""smp.nn: SMP v1's layers. One file per layer family; add new ones by importing them here."""

from modelparallel.nn.layer_norm import FusedLayerNorm  # noqa: F401
from modelparallel.nn import huggingface  # noqa: F401
