"""StepOutput: one returned tensor's values across the microbatches of a smp.step call."""

from __future__ import annotations

from typing import Any


class StepOutput:
    def __init__(self, outputs: list[Any]):
        self._outputs = list(outputs)

    @property
    def outputs(self) -> list[Any]:
        """The per-microbatch tensors, in microbatch order."""
        return self._outputs

    def reduce_mean(self):
        import torch

        return torch.stack([o.float() if not o.is_floating_point() else o for o in self._outputs]).mean(dim=0)

    def reduce_sum(self):
        import torch

        return torch.stack(self._outputs).sum(dim=0)

    def concat(self):
        import torch

        return torch.cat(self._outputs, dim=0)

    def stack(self):
        import torch

        return torch.stack(self._outputs, dim=0)

    def __len__(self) -> int:
        return len(self._outputs)

    def __repr__(self) -> str:
        return f"StepOutput({len(self._outputs)} microbatches)"


def merge_microbatch_results(results: list[Any], detach: bool) -> Any:
    """Turn [fn result of mb0, mb1, ...] into one result whose tensors are StepOutputs (SMP's return shape)."""
    import torch

    first = results[0]
    if isinstance(first, torch.Tensor):
        return StepOutput([r.detach() if detach else r for r in results])
    if isinstance(first, tuple) and hasattr(first, "_fields"):  # namedtuple
        return type(first)(*(merge_microbatch_results([r[i] for r in results], detach) for i in range(len(first))))
    if isinstance(first, (list, tuple)):
        return type(first)(merge_microbatch_results([r[i] for r in results], detach) for i in range(len(first)))
    if isinstance(first, dict):
        merged = {k: merge_microbatch_results([r[k] for r in results], detach) for k in first}
        try:
            return type(first)(**merged)
        except TypeError:
            return merged
    if all(r is None for r in results):
        return None  # a step function that returns nothing
    return list(results)  # plain Python values (numbers, strings): one per microbatch, as SMP returns them
