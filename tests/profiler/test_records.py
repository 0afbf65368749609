"""The analysis result is the typed records of profiler/records.py: analyze() returns them (the findings and the
figures read their attributes), their JSON is the document `profile analyze --json` prints and converts back to
them strictly, and a value that breaks its record is named by its path."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import msgspec
import pytest

from sagelaunch.profiler.analysis import analyze
from sagelaunch.profiler.records import AnalysisResult, Finding, Loop, RankAnalysis, check, convert, to_json
from tests.profiler.conftest import REPO, TRACES, BARE_ENV

SET = REPO / "tests" / "data" / "profiler" / "findings_set"


def test_every_reference_trace_analysis_is_the_typed_records(analyses):
    for name, document in analyses.items():
        typed = check(document)  # the JSON document converts back, strictly, to the records
        assert isinstance(typed, AnalysisResult) and all(isinstance(r, RankAnalysis) for r in typed.ranks.values())
        assert msgspec.to_builtins(typed) == document, name  # and back again, key for key


@pytest.mark.parametrize("case", ["ddp_input_straggler", "leak", "checkpoint_every_50", "hf_slow_loader"])
def test_the_labelled_jobs_analyses_are_the_typed_records(case):
    result = analyze(SET / case)
    assert isinstance(result.ranks["0"].loop, Loop) and result.ranks["0"].loop.count > 0
    assert result.findings and all(isinstance(f, Finding) for f in result.findings)
    assert check(json.loads(to_json(result))) == result


def test_the_cli_json_is_the_records_json(tmp_path):
    trace = TRACES / "sampled_rank0.pt.trace.json.gz"
    env = BARE_ENV
    out = subprocess.run([sys.executable, "-m", "sagelaunch.profiler.cli", "analyze", str(trace), "--json"], capture_output=True,
                         env=env, timeout=120, cwd=REPO, check=True).stdout
    assert check(json.loads(out)) == analyze(trace)


def test_optional_fields_are_left_out_and_inapplicable_sections_are_null(analyses):
    doc = analyses["cpu_only.pt.trace.json.gz"]
    (rank,) = doc["ranks"].values()
    assert rank["temporal"] is None and rank["overlap"] is None and "queue" in rank["launch"]  # written, null
    assert set(rank["kernels"]) == {"count", "total_us", "distinct"}  # no kernels: their statistics left out
    figures = msgspec.to_builtins(analyze(SET / "leak").figures)  # a host's figures have no rank, a rank's no host
    assert {"rank" in f for f in figures if "host" in f} == {False} and {"host" in f for f in figures if "rank" in f} == {False}


def test_a_folder_of_ranks_is_the_typed_records(tmp_path):
    for name in ("sampled_rank0.pt.trace.json.gz", "sampled_rank1.pt.trace.json.gz"):
        os.symlink(TRACES / name, tmp_path / name)
    compared = analyze(tmp_path).ranks_compared
    assert compared is not None and set(compared.largest) == {c.key for c in compared.columns}


def test_a_record_that_breaks_its_type_is_named(analyses):
    document = analyses["sampled_rank0.pt.trace.json.gz"]
    bad = {**document, "findings": [{**document["findings"][0], "severity": "urgent"}]}
    with pytest.raises(msgspec.ValidationError, match=r"findings\[0\]\.severity"):
        check(bad)
    rank = document["ranks"]["0"]
    with pytest.raises(msgspec.ValidationError, match=r"\$\.launch\.queue\.mean"):
        convert({**rank, "launch": {**rank["launch"], "queue": {**rank["launch"]["queue"], "mean": "long"}}}, RankAnalysis)
