"""The job's SMP settings travel in the profile: the in-job profiler records pipeline_parallel_degree and
microbatches from SM_HP_MP_PARAMETERS into the artifact's metadata, and the pipeline_bubble finding reads them
back without --pipeline-parallel-degree / --microbatches (which still fill in for profiles without them, and win
when given)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from sagelaunch.profiler import artifact
from sagelaunch.profiler.loader import load_profile
from sagelaunch.profiler.schema import SCHEMA_VERSION, TraceMeta
from tests.profiler import synthetic as syn
from tests.profiler.conftest import REPO, BARE_ENV

CAPTURE = textwrap.dedent('''
    import sagelaunch.profiler as smprof
    smprof.configure(smprof.Config(output_dir=__import__("sys").argv[1]))
    smprof.start_profiling()
    with smprof.annotate("train_step"):
        sum(range(1000))
    smprof.stop_profiling()
    print("trained")
''')


def capture(tmp_path, mp_parameters: str | None):
    """A script profiled by our in-job profiler in a fresh process, as a job runs it; the profile it wrote."""
    env = {k: v for k, v in os.environ.items() if k not in ("SM_HP_MP_PARAMETERS", "SAGELAUNCH_PROFILER_CONFIG")}
    env.update(PYTHONPATH=str(REPO), SM_CURRENT_HOST="algo-1", RANK="0")
    if mp_parameters is not None:
        env["SM_HP_MP_PARAMETERS"] = mp_parameters
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, "-c", CAPTURE, str(out)], capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0 and "trained" in proc.stdout, proc.stderr
    return load_profile(out)


def test_the_in_job_profiler_records_the_smp_settings(tmp_path):
    # SMP v1's older name "partitions" is the pipeline degree; other parameters are not recorded
    profile = capture(tmp_path, '{"partitions": 2, "microbatches": 1, "ddp": true, "optimize": "speed"}')
    (rank,) = profile.ranks.values()
    assert rank.meta.job_settings == {"pipeline_parallel_degree": 2, "microbatches": 1}
    assert "train_step" in rank.names


@pytest.mark.parametrize("value", [None, "not json", '["a list"]', '{"pipeline_parallel_degree": "two"}'])
def test_no_or_unusable_smp_parameters_record_nothing_and_training_goes_on(tmp_path, value):
    (rank,) = capture(tmp_path, value).ranks.values()
    assert rank.meta.job_settings == {}


def idle_pipeline_stage(root, job_settings: dict):
    """A stage that waits half the time (GPU idle 50%), written as our artifact with these recorded settings."""
    rt = syn.healthy(busy=0.5).trace()
    rt.meta.job_settings = job_settings
    artifact.write_events(rt, root / "algo-1" / "rank-0" / "trace-0000.parquet")
    return root


def analyze_cli(root, *flags: str) -> dict:
    env = dict(BARE_ENV)
    out = subprocess.run([sys.executable, "-m", "sagelaunch.profiler.cli", "analyze", str(root), "--json", *flags],
                         capture_output=True, text=True, env=env, timeout=120, cwd=REPO)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_pipeline_bubble_from_the_profile_without_flags(tmp_path):
    root = idle_pipeline_stage(tmp_path / "pp2", {"pipeline_parallel_degree": 2, "microbatches": 1})
    doc = analyze_cli(root)
    (f,) = [f for f in doc["findings"] if f["rule"] == "pipeline_bubble"]
    assert f["evidence"]["pipeline_parallel_degree"] == 2 and f["evidence"]["microbatches"] == 1
    assert f["evidence"]["expected_bubble_share"] == pytest.approx(0.5)  # (pp - 1) / (mb + pp - 1)
    assert "microbatches=1" in f["summary"] and '"microbatches": 8' in f["fix"]
    assert doc["context"] == {"pipeline_parallel_degree": 2, "microbatches": 1}
    # a flag given on the command line wins over the recorded value
    assert "pipeline_bubble" not in {f["rule"] for f in analyze_cli(root, "--pipeline-parallel-degree", "1")["findings"]}
    assert analyze_cli(root, "--microbatches", "4")["context"] == {"pipeline_parallel_degree": 2, "microbatches": 4}


def test_a_folder_of_many_ranks_analysed_in_workers_reads_them_too(tmp_path):
    from sagelaunch.profiler.analysis import parallel
    from tests.profiler.conftest import analysis_json

    root = tmp_path / "pp4"
    for r in range(parallel.MIN_RANKS):
        rt = syn.healthy(rank=r, busy=0.5).trace()
        rt.meta.job_settings = {"pipeline_parallel_degree": 4, "microbatches": 2}
        artifact.write_events(rt, root / "algo-1" / f"rank-{r}" / "trace-0000.parquet")
    assert parallel.worth_it(root) or (os.cpu_count() or 1) < 2
    result = analysis_json(root)
    assert result["context"] == {"pipeline_parallel_degree": 4, "microbatches": 2}
    (f,) = [f for f in result["findings"] if f["rule"] == "pipeline_bubble"]
    assert len(f["evidence"]["stage_idle_share"]) == parallel.MIN_RANKS


def test_without_recorded_settings_the_flags_fill_in(tmp_path):
    root = idle_pipeline_stage(tmp_path / "old", {})
    assert "pipeline_bubble" not in {f["rule"] for f in analyze_cli(root)["findings"]}
    doc = analyze_cli(root, "--pipeline-parallel-degree", "2", "--microbatches", "2")
    assert "pipeline_bubble" in {f["rule"] for f in doc["findings"]}
    # a GPU trace of an interleaved run: the stages per rank set the expected share, (p-1)/(v*m+p-1)
    doc = analyze_cli(root, "--pipeline-parallel-degree", "2", "--microbatches", "2", "--virtual-stages", "2")
    (f,) = [f for f in doc["findings"] if f["rule"] == "pipeline_bubble"]
    assert f["evidence"]["expected_bubble_share"] == pytest.approx(0.2) and f["evidence"]["virtual_stages"] == 2


def test_the_report_and_browser_data_show_it_too(tmp_path):
    import re

    from sagelaunch.profiler.report.html import write_report

    root = idle_pipeline_stage(tmp_path / "pp2", {"pipeline_parallel_degree": 2, "microbatches": 1})
    html = write_report(root, tmp_path / "r.html").read_text()
    data = json.loads(re.search(r'<script id="dashboard-data" type="application/json">(.*?)</script>', html, re.S)
                      .group(1).replace("<\\/", "</"))
    assert "pipeline_bubble" in [f["rule"] for f in data["findings"]]


def test_the_schema_stays_readable_both_ways(tmp_path):
    """The field is additive: the schema version is unchanged, a file without it reads as no settings, and its
    metadata stays a plain JSON object an older reader's from_dict takes key by key."""
    import pyarrow.parquet as pq

    root = idle_pipeline_stage(tmp_path / "p", {"pipeline_parallel_degree": 2})
    path = root / "algo-1" / "rank-0" / "trace-0000.parquet"
    md = pq.read_schema(path).metadata
    assert md[b"sagelaunch.schema"].decode() == SCHEMA_VERSION == "sagelaunch.profile/1"
    meta = json.loads(md[b"sagelaunch.meta"])
    assert meta["job_settings"] == {"pipeline_parallel_degree": 2}
    del meta["job_settings"]  # as written before the field existed
    assert TraceMeta.from_dict(meta).job_settings == {}
    assert TraceMeta.from_dict({**meta, "job_settings": "garbage"}).job_settings == {}


JOB_SCRIPT = textwrap.dedent('''
    import sagelaunch.modelparallel as smp
    import sagelaunch.profiler as smprof

    smp.init()  # a model-parallel job: a local job whose ranks never call smp.init() ends Failed

    smprof.start_profiling()
    for step in range(1, 4):
        with smprof.annotate(f"step_{step}"):
            sum(range(10_000))
    smprof.stop_profiling()
    print("profiled", flush=True)
''')


@pytest.mark.slow  # a real local job: torchrun, two processes, the monitor sidecar
@pytest.mark.timeout(300)
def test_a_profiled_model_parallel_job_records_its_settings_on_every_rank(tmp_path, monkeypatch):
    """estimator distribution → SM_HP_MP_PARAMETERS (local backend) → the profile's metadata → analyze's context."""
    from sagelaunch.estimators import PyTorch
    from tests.profiler.conftest import analysis_json
    from sagelaunch.profiler_config import ProfilerConfig

    monkeypatch.setenv("SAGELAUNCH_HOME", str(tmp_path / "home"))
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "train.py").write_text(JOB_SCRIPT)
    estimator = PyTorch(
        entry_point="train.py", source_dir=str(tmp_path / "src"), framework_version="2.0.0", py_version="py310",
        instance_type="local", output_path=str(tmp_path / "out"),
        profiler_config=ProfilerConfig(system_monitor_interval_millis=100),
        distribution={"smdistributed": {"modelparallel": {"enabled": True, "parameters": {"partitions": 2, "microbatches": 1}}},
                      "mpi": {"enabled": True, "processes_per_host": 2}},
    )
    job = estimator.fit(wait=True, logs=False)
    record = job.describe()
    assert record["TrainingJobStatus"] == "Completed", record.get("FailureReason")
    profile = load_profile(job.profiler_output)
    assert sorted(profile.ranks) == [0, 1]
    for rank in profile.ranks.values():
        assert rank.meta.job_settings == {"pipeline_parallel_degree": 2, "microbatches": 1}
    assert analysis_json(profile)["context"] == {"pipeline_parallel_degree": 2, "microbatches": 1}
