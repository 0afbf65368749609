"""The analysis result is the typed records of profiler/records.py: every analysis of the reference traces,
of a folder of ranks and of the labelled set's jobs converts to them strictly (msgspec), and a record that breaks
its type is named by its path."""

from __future__ import annotations

import os

import msgspec
import pytest

from profiler.analysis import analyze
from profiler.records import check
from tests.profiler.conftest import REPO, TRACES

SET = REPO / "tests" / "data" / "profiler" / "findings_set"


def test_every_reference_trace_analysis_is_the_typed_records(analyses):
    for name, result in analyses.items():
        typed = check(result)
        assert typed["findings"] == result["findings"] and typed["ranks"].keys() == result["ranks"].keys(), name


@pytest.mark.parametrize("case", ["ddp_input_straggler", "leak", "checkpoint_every_50", "hf_slow_loader"])
def test_the_labelled_jobs_analyses_are_the_typed_records(case):
    result = analyze(SET / case)
    typed = check(result)
    assert typed["ranks"]["0"]["loop"]["count"] > 0 and typed["findings"]


def test_a_folder_of_ranks_is_the_typed_records(tmp_path):
    for name in ("sampled_rank0.pt.trace.json.gz", "sampled_rank1.pt.trace.json.gz"):
        os.symlink(TRACES / name, tmp_path / name)
    assert check(analyze(tmp_path))["ranks_compared"]["largest"]


def test_a_record_that_breaks_its_type_is_named(analyses):
    result = analyses["sampled_rank0.pt.trace.json.gz"]
    bad = {**result, "findings": [{**result["findings"][0], "severity": "urgent"}]}
    with pytest.raises(msgspec.ValidationError, match=r"findings\[0\]\.severity"):
        check(bad)
