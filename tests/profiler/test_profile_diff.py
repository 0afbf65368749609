"""`sagelaunch profile diff A B`: what got slower or faster, by phase (per step), annotation and GPU kernel; the
kernels' counts and totals equal HTA 0.5's TraceDiff.compare_traces on the reference traces."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from sagelaunch.profiler.analysis.diff import diff
from tests.profiler.conftest import REPO, TRACES, BARE_ENV

SET = REPO / "tests" / "data" / "profiler" / "findings_set"


def test_kernels_equal_hta_trace_diff(hta_reference_doc):
    ref = hta_reference_doc["trace_diff"]
    result = diff(TRACES / ref["control"], TRACES / ref["test"], top=0)
    ours = {r.name: r for r in result.kernels}
    assert set(ours) == set(ref["kernels"]) and len(ours) > 100
    for name, r in ref["kernels"].items():
        o = ours[name]
        assert (o.a_count, o.b_count) == (r["a_count"], r["b_count"]), name
        assert o.a_total_us == pytest.approx(r["a_total_us"], abs=1e-6), name
        assert o.b_total_us == pytest.approx(r["b_total_us"], abs=1e-6), name
        assert o.diff_duration_us == pytest.approx(r["b_total_us"] - r["a_total_us"], abs=1e-6)
    # largest change first
    changes = [abs(r.diff_duration_us) for r in result.kernels]
    assert changes == sorted(changes, reverse=True)


def test_cli_says_the_input_wait_is_what_got_slower():
    env = {**BARE_ENV, "COLUMNS": "160"}
    a, b = SET / "docs_healthy", SET / "docs_slow_loader"  # the same loop, a slow Dataset in B
    out = subprocess.run([sys.executable, "-m", "sagelaunch.profiler.cli", "diff", str(a), str(b), "--json", "--top", "3"],
                         capture_output=True, text=True, env=env, timeout=120, cwd=REPO)
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    phases = {p["phase"]: p for p in doc["phases"]}
    assert doc["phases"][0]["phase"] == "cycle" and phases["cycle"]["diff_us_per_step"] > 0
    assert phases["input"]["diff_us_per_step"] > 0.5 * phases["cycle"]["diff_us_per_step"]  # the input explains it
    assert len(doc["annotations"]) == 3 and doc["kernels"] == []  # CPU jobs: no GPU kernels to compare
    text = subprocess.run([sys.executable, "-m", "sagelaunch.profiler.cli", "diff", str(a), str(b)], capture_output=True,
                          text=True, env=env, timeout=120, cwd=REPO).stdout
    assert "input" in text and "slower" in text


def test_a_path_that_is_not_a_profile_is_one_line(tmp_path):
    env = BARE_ENV
    out = subprocess.run([sys.executable, "-m", "sagelaunch.profiler.cli", "diff", str(tmp_path / "nothing"), str(SET / "leak")],
                         capture_output=True, text=True, env=env, timeout=120, cwd=REPO)
    assert out.returncode == 2 and out.stderr.startswith("error: ") and len(out.stderr.strip().splitlines()) == 1
