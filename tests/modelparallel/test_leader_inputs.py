"""The @smp.step arguments a pipeline's later rank runs on: pp_rank 0's, as in SMP v1 (modelparallel/pipeline/
leader_inputs.py). The collectives are stood in for by the leader's side of them, in process; the BERT example at
pp=2 (test_bert_example.py) runs the same code over real torchrun processes."""

from __future__ import annotations

import argparse
import warnings

import pytest
import torch

from sagelaunch.modelparallel.errors import SMPValidationError
from sagelaunch.modelparallel.pipeline import leader_inputs


class LeaderSide:
    """torch.distributed as a follower of a two-rank pipeline sees it: the leader's description, then its tensors."""

    def __init__(self, leader_args: tuple, leader_kwargs: dict):
        from torch.utils._pytree import tree_flatten

        leaves, spec = tree_flatten((leader_args, leader_kwargs))
        self.described = (str(spec), [leader_inputs._describe(leaf) for leaf in leaves])
        self.tensors = [leaf for leaf in leaves if isinstance(leaf, torch.Tensor)]

    def get_world_size(self, group):
        return 2

    def all_gather_object(self, out, mine, group):
        out[:] = [self.described, mine]

    def broadcast(self, tensor, src, group):
        tensor.copy_(self.tensors.pop(0))


@pytest.fixture
def fresh_warning(monkeypatch):
    monkeypatch.setattr(leader_inputs, "_warned", False)


def test_a_later_stage_runs_on_the_first_stages_tensors_and_values_keeping_its_own_objects(monkeypatch,
                                                                                        fresh_warning):
    namespace = argparse.Namespace(fp16=False)
    leader = ((namespace, torch.arange(6).view(2, 3), [torch.ones(2)], 7), {"labels": torch.tensor([1, 0])})
    mine = ((namespace, torch.zeros(2, 3, dtype=torch.int64), [torch.full((2,), 5.0)], 9),
            {"labels": torch.tensor([0, 0])})
    monkeypatch.setattr(leader_inputs, "dist", LeaderSide(*leader))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        args, kwargs = leader_inputs.leader_arguments(*mine, group=None, leader=0, pp_rank=1)
    assert args[0] is namespace and args[3] == 7
    assert torch.equal(args[1], leader[0][1]) and torch.equal(args[2][0], leader[0][2][0])
    assert torch.equal(kwargs["labels"], leader[1]["labels"])
    assert ["pp_rank 1 passed other data than pp_rank 0" in str(w.message) for w in caught] == [True]


def test_the_same_data_on_every_stage_passes_without_a_warning(monkeypatch, fresh_warning):
    same = ((torch.arange(4.0),), {})
    monkeypatch.setattr(leader_inputs, "dist", LeaderSide(*same))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        args, _ = leader_inputs.leader_arguments(*same, group=None, leader=0, pp_rank=1)
    assert torch.equal(args[0], same[0][0])


def test_arguments_that_cannot_be_lined_up_with_the_leaders_are_refused_by_name(monkeypatch, fresh_warning):
    monkeypatch.setattr(leader_inputs, "dist", LeaderSide((torch.ones(2), torch.ones(2)), {}))
    with pytest.raises(SMPValidationError, match="different structure") as refused:
        leader_inputs.leader_arguments((torch.ones(2), None), {}, group=None, leader=0, pp_rank=1)
    assert refused.value.value == "pp_rank 1" and "pp_rank 0" in refused.value.fix
