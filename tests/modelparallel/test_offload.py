"""offload_activations' prefetch schedule (in process, CPU: the copies are no-ops, the scheduling is real)."""

from __future__ import annotations

import pytest
import torch

from modelparallel.offload import ActivationOffloader, layer_stack
from tests.modelparallel.models import BUILDERS, forward_loss, global_batch


def _grads(model_name: str, horizon: int | None, microbatches: int = 1):
    model = BUILDERS[model_name](0)
    offloader = None
    if horizon is not None:
        offloader = ActivationOffloader(torch.device("cpu"), horizon)
        offloader.attach(layer_stack(model))
    batch = global_batch(model_name, 0, 8)
    for mb in range(microbatches):
        part = {k: v.chunk(microbatches)[mb] for k, v in batch.items()}
        if offloader is None:
            loss = forward_loss(model_name, model, part)
        else:
            with offloader.context():
                loss = forward_loss(model_name, model, part)
        (loss / microbatches).backward()
    grads = {n: p.grad.clone() for n, p in model.named_parameters()}
    return grads, offloader


@pytest.mark.parametrize("model_name,horizon,microbatches",
                         [("mlp", 1, 1), ("mlp", 2, 2), ("roberta", 1, 1), ("roberta", 2, 1), ("roberta", 3, 2)])
def test_prefetch_stays_within_the_horizon_and_gradients_match(model_name, horizon, microbatches):
    reference, _ = _grads(model_name, None, microbatches)
    grads, offloader = _grads(model_name, horizon, microbatches)
    for name, want in reference.items():
        assert (grads[name] - want).abs().max().item() <= 1e-5, name
    stats = offloader.stats
    units = len(layer_stack(BUILDERS[model_name](0)))
    assert stats["groups"] == units * microbatches  # one group per module run
    assert 1 <= stats["max_resident_ahead"] <= horizon  # prefetched ahead, never more than the horizon
    # only the last module of each forward is fetched when backward reaches it; the others were prefetched
    assert stats["prefetched"] >= (units - 1) * microbatches
    assert not offloader._resident  # everything fetched was used and released


def test_horizon_below_one_is_rejected():
    with pytest.raises(ValueError, match="activation_loading_horizon=0"):
        ActivationOffloader(torch.device("cpu"), 0)
