"""offload_activations' prefetch schedule (in process, CPU: the copies are no-ops, the scheduling is real)."""

from __future__ import annotations

import contextlib

import pytest
import torch

from sagelaunch.modelparallel.activations.checkpointing import set_activation_checkpointing
from sagelaunch.modelparallel.activations.offload import ActivationOffloader, layer_stack
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


def _checkpointed_run(model_name: str, strategy: str, horizon: int | None):
    """Checkpointing (and offloading when horizon is set), backward inside the offload context as smp.step does;
    returns the gradients, the offloader and the non-parameter bytes autograd kept outside both hooks."""
    model = BUILDERS[model_name](0)
    target = model if model_name == "mlp" else model.roberta.encoder.layer
    set_activation_checkpointing(target, strategy=strategy)
    offloader = None
    if horizon is not None:
        offloader = ActivationOffloader(torch.device("cpu"), horizon)
        offloader.attach(layer_stack(model))
    kept = {"bytes": 0}

    def record(t):  # outermost: sees only what neither the checkpoint nor the offloader took
        if not isinstance(t, torch.nn.Parameter):
            kept["bytes"] += t.numel() * t.element_size()
        return t

    with torch.autograd.graph.saved_tensors_hooks(record, lambda t: t):
        with offloader.context() if offloader else contextlib.nullcontext():
            loss = forward_loss(model_name, model, global_batch(model_name, 0, 8))
            loss.backward()
    return {n: p.grad.clone() for n, p in model.named_parameters()}, offloader, kept["bytes"]


@pytest.mark.parametrize("model_name,strategy,horizon,units",
                         [("mlp", "each", 2, 7), ("mlp", "group_2", 1, 4), ("roberta", "each", 2, 4)])
def test_checkpointed_inputs_are_offloaded_and_prefetched_within_the_horizon(model_name, strategy, horizon, units):
    reference, _ = _grads(model_name, None)
    _, _, checkpoint_only = _checkpointed_run(model_name, strategy, None)
    grads, offloader, outside = _checkpointed_run(model_name, strategy, horizon)
    for name, want in reference.items():
        assert (grads[name] - want).abs().max().item() <= 1e-5, name
    stats = offloader.stats
    assert checkpoint_only > 0  # checkpointing alone keeps the checkpointed modules' inputs (and the head's)
    # on the device: what escaped the offloader plus what it declined to move; the inputs went to host memory
    assert outside + stats["kept_bytes"] <= 0.01 * checkpoint_only, stats
    assert stats["packed_bytes"] >= 0.99 * checkpoint_only, stats
    assert stats["groups"] == units  # one group per checkpointed module/region run, none for the recompute
    # backward brings the inputs back ahead of the recompute, never more than `horizon` groups ahead
    assert 1 <= stats["max_resident_ahead"] <= horizon, stats
    assert stats["prefetched"] >= units - 1, stats
    assert not offloader._resident
