"""Partial checkpoints under both of SMP v1's file namings, by the SMP release the job's framework version ships:
the older f"{name}_{mp_rank}" (PyTorch 1.6/1.7 DLCs; the BERT example removes its old checkpoints by that name) and
f"{name}_{pp_rank}_{tp_rank}"; each written as its release did, read under either, removable as scripts do."""

from __future__ import annotations

import pytest

from sagelaunch.jobspec.smp import checkpoint_names
from tests.modelparallel import area


def test_the_framework_version_picks_its_smp_releases_naming():
    assert [checkpoint_names(v) for v in ("1.6.0", "1.7.1", "1.8.1", "1.13.1", "2.0.1", None)] == [
        "mp_rank", "mp_rank", "pp_tp", "pp_tp", "pp_tp", "pp_tp"]


GROUP = area.register(__name__, "checkpoint_names_worker", {2: []})


@pytest.fixture(scope="module")
def ranks(_launches):
    return _launches.ranks(GROUP, 2)


@pytest.mark.slow
def test_both_namings_are_written_read_and_removed_as_their_releases_do(ranks):
    assert [r["mp_rank"] for r in ranks] == [0, 1]  # pp=2: one stage each
    for rank in ranks:
        assert rank["old_names"] == ["ckpt_1.pt_0", "ckpt_1.pt_1"]
        assert rank["after_removal"] == []  # os.remove(f"{ckpt}_{smp.mp_rank()}") found each rank's file
        assert rank["new_names"] == ["ckpt_2.pt_0_0", "ckpt_2.pt_1_0"]
        assert rank["own"]  # each stage holds parameters, and reads back its own under either naming
        assert rank["old_read"] == rank["old_read_by_new"] == rank["new_read_by_old"] == rank["own"]
    assert set(ranks[0]["own"]).isdisjoint(ranks[1]["own"])  # the two files are different stages' parts

