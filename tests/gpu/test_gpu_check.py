"""scripts/gpu_check.sh: its CPU path end to end (what runs where no GPU is lent), and the HTA comparison it makes.

The CPU run must measure what it reports (step counts, samples/s, the job's artifact) and leave every GPU figure
null with the reason it was skipped.
"""

from __future__ import annotations

import copy
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

import pytest

from scripts import gpu_check
from tests.profiler.conftest import HTA_REFERENCE, TRACES

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def cpu_run(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("gpu-check")
    out = root / "figures.json"
    env = {**os.environ, "PYTHON": sys.executable, "SAGELAUNCH_HOME": str(root / "home")}
    done = subprocess.run(["bash", str(REPO / "scripts" / "gpu_check.sh"), "--cpu", "--out", str(out),
                           "--work", str(root / "work")], capture_output=True, text=True, timeout=540, env=env,
                          cwd=root)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    return {"report": json.loads(out.read_text()), "stdout": done.stdout, "work": root / "work"}


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_cpu_path_says_what_it_skips_and_fabricates_no_gpu_figure(cpu_run):
    import torch

    report = cpu_run["report"]
    assert report["mode"] == "cpu" and report["gpu"] is None and report["cuda"] is None
    assert "--cpu" in report["gpu_skipped"] and report["torch"] == torch.__version__
    assert report["date"].startswith("20") and report["date"].endswith("+00:00")
    figure_names = {"roberta": gpu_check.ROBERTA_FIGURES, "profiler": gpu_check.PROFILER_FIGURES,
                    "modelparallel": gpu_check.MP_FIGURES}
    assert list(report["sections"]) == list(figure_names)
    for name, section in report["sections"].items():
        assert section["error"] is None, section["error"]
        assert set(section["figures"]) == set(figure_names[name])
        assert all(v is None for v in section["figures"].values()), (name, section["figures"])
        assert section["skipped"].startswith("--cpu given"), section["skipped"]
        assert f"[{name}] SKIPPED GPU figures" in cpu_run["stdout"]
    assert set(report["goals"].values()) == {None}  # no goal judged without its GPU figure
    assert cpu_run["stdout"].count("    skipped: --cpu given") == 3


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_cpu_path_figures_come_from_real_runs(cpu_run):
    from tests.profiler.conftest import analysis_json

    sections = cpu_run["report"]["sections"]
    bench = sections["roberta"]["run"]
    assert [r["variant"] for r in bench["results"]] == ["eager fp32 + AdamW", "torch.compile + bf16 + fused AdamW"]
    assert all(r["samples_per_s"] > 0 and r["peak_mem_gb"] is None and r["mfu"] is None for r in bench["results"])
    assert bench["speedup"] == bench["results"][1]["samples_per_s"] / bench["results"][0]["samples_per_s"]
    assert bench["where_time_goes"]["profiled_steps"] == 3  # the optimized variant's profiled steps, analysed
    assert analysis_json(bench["profile_dir"])["ranks"]["0"]["steps"]["count"] == 3

    job = sections["profiler"]["run"]
    timings = json.loads((cpu_run["work"] / "job" / "timings.json").read_text())  # written by the job itself
    assert job["instance_type"] == "local" and timings["device"] == "cpu"
    for mode in ("unprofiled", "profiled"):
        assert len(timings["step_s"][mode]) == job["steps_per_mode"] == 6
        assert job["median_step_ms"][mode] == pytest.approx(1e3 * statistics.median(timings["step_s"][mode]))
    artifact = analysis_json(job["profile"])
    assert artifact["ranks"]["0"]["steps"]["count"] == job["artifact"]["steps"] == 6  # only the profiled steps
    assert job["artifact"]["annotations"] == ["Backward", "Forward", "Optimizer"]
    assert job["artifact"]["gpu_activity"] == {} and job["artifact"]["launch_count"] == 0
    assert job["artifact"]["counter_samples"]["algo-1"]["cpu_util"] > 0  # the job's monitor sidecar sampled
    assert Path(timings["kineto_trace"]).stat().st_size > 0

    mp = sections["modelparallel"]["run"]
    assert mp["backend"] == "gloo" and mp["world_size"] == 1
    assert list(mp["variants"]) == list(gpu_check.MP_VARIANTS)
    for name, variant in mp["variants"].items():
        assert variant["step_ms"] > 0 and variant["steps"] > 0
        assert "peak_mem_gb" not in variant
        stats = variant["offload_stats"]
        if name.endswith("offload"):
            assert stats["groups"] > 0 and stats["packed_bytes"] > 0 and stats["max_resident_ahead"] >= 1
        else:
            assert stats is None


def _v100_rank0() -> tuple[dict, dict]:
    from tests.profiler.conftest import analysis_json

    name = "v100_rank0.pt.trace.json.gz"
    ref = json.loads(HTA_REFERENCE.read_text())["traces"][name]["ranks"]["0"]
    return analysis_json(TRACES / name)["ranks"]["0"], ref


def test_agreement_with_hta_passes_on_a_reference_trace_and_flags_a_drift():
    ours, ref = _v100_rank0()
    result = gpu_check.agreement(ours, ref)
    assert result["mismatches"] == [] and result["max_rel_diff"] <= gpu_check.REL
    assert len(result["compared"]) == len(ref["temporal"]) + len(ref["kernel_types"]) + 2

    drifted = copy.deepcopy(ref)
    drifted["temporal"]["compute_us"] *= 1.01  # 1% off: outside 0.5%
    drifted["launch"]["mean_launch_delay_us"] = None  # HTA found no launch delay where we did
    result = gpu_check.agreement(ours, drifted)
    assert result["mismatches"] == ["temporal.compute_us", "launch.mean_launch_delay_us"]
    assert result["max_rel_diff"] == pytest.approx(0.01 / 1.01, rel=1e-6)


def test_unknown_section_is_named_with_the_allowed_ones(capsys):
    with pytest.raises(SystemExit) as exc:
        gpu_check.main(["--sections", "roberta,gpus"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "--sections: gpus unknown; allowed: roberta, profiler, modelparallel" in err
