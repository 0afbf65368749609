"""`sagelaunch validate JOB.yaml [--request]`, run through the real command line."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import botocore.session
import botocore.validate

GOOD = """
framework: pytorch
entry_point: train.py
source_dir: code
role: arn:aws:iam::123456789012:role/SageMakerRole
region: us-west-2
framework_version: "2.0.0"
instance_type: ml.p4d.24xlarge
instance_count: 2
hyperparameters: {epochs: 1}
profiler_config:
  system_monitor_interval_millis: 500
  profile_params: {cpu_profiling_duration: 60}
distribution:
  torch_distributed: {enabled: true}
inputs: s3://my-data/train
job_name: validate-1
"""

BAD = """
framework: pytorch
entry_point: train.py
region: us-west-2
framework_version: "2.0.7"
instance_type: ml.p4d.24xl
max_run: -5
"""

CROSS = """
framework: pytorch
entry_point: train.py
region: us-west-2
framework_version: "2.0.7"
instance_type: ml.p4d.24xlarge
output_path: /tmp/out
max_wait: 100
"""


def run_cli(*args: str) -> subprocess.CompletedProcess:
    code = "import sys; from sagelaunch.cli import main; sys.argv = ['sagelaunch', *sys.argv[1:]]; main()"
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=120,
                          cwd=Path(__file__).resolve().parents[2])


def test_validate_good_and_bad_jobs_and_request(tmp_path):
    (tmp_path / "code").mkdir()
    (tmp_path / "code" / "train.py").write_text("print('train')\n")
    good, bad = tmp_path / "job.yaml", tmp_path / "bad.yaml"
    good.write_text(textwrap.dedent(GOOD))
    bad.write_text(textwrap.dedent(BAD))

    ok = run_cli("validate", str(good))
    assert ok.returncode == 0, ok.stderr
    assert ok.stdout.startswith("✓ job.yaml: pytorch 2.0.0 (py310) on 2 × ml.p4d.24xlarge")
    assert "8 process(es)/host, torch_distributed" in ok.stdout

    failed = run_cli("validate", str(bad))
    assert failed.returncode == 1
    assert "did you mean 'ml.p4d.24xlarge'?" in failed.stderr
    # every independent problem, although a field is invalid: the checks that don't need it still run
    assert "4 problem(s)" in failed.stderr, failed.stderr
    assert "max_run: Input should be greater than or equal to 1 (value=-5)" in failed.stderr  # the value shown
    assert "framework_version='2.0.7'" in failed.stderr and "role is required" in failed.stderr

    cross = tmp_path / "cross.yaml"
    cross.write_text(textwrap.dedent(CROSS))
    every = run_cli("validate", str(cross))
    assert every.returncode == 1 and "4 problem(s)" in every.stderr, every.stderr
    for needle in ("framework_version='2.0.7'", "role is required", "output_path='/tmp/out'", "max_wait=100"):
        assert needle in every.stderr

    dry = run_cli("validate", str(good), "--request")
    assert dry.returncode == 0, dry.stderr
    req = json.loads(dry.stdout)
    assert req["TrainingJobName"] == "validate-1"
    assert json.loads(req["HyperParameters"]["sagemaker_torch_distributed_enabled"]) is True
    assert req["ProfilerConfig"]["ProfilingParameters"]["CPUProfilingDuration"] == "60"
    shape = botocore.session.get_session().get_service_model("sagemaker").operation_model("CreateTrainingJob").input_shape
    botocore.validate.validate_parameters(req, shape)

    helped = run_cli("validate", "--help")
    assert helped.returncode == 0 and "--request" in helped.stdout


TYPOS = """
framework: pytroch
entry_point: train.py
region: us-west-2
framework_version: 2.0
instance_type: ml.p4d.24xlarge
instance_cout: 2
output_path: s3:/bucket/out
volume_size: big
"""


def test_validate_suggests_fixes_for_typos(tmp_path):
    """Misspelt keys and values get a "did you mean", YAML numbers a quoting hint; all in one run."""
    typos = tmp_path / "typos.yaml"
    typos.write_text(textwrap.dedent(TYPOS))
    out = run_cli("validate", str(typos))
    assert out.returncode == 1
    lines = [line.removeprefix("  - ") for line in out.stderr.splitlines()[1:]]
    expected = [
        "framework='pytroch' is not supported (did you mean 'pytorch'?)",
        "framework_version=2.0 is a number", "quote it: framework_version: '2.0.0'",
        "did you mean 's3://bucket/out'?",
        "volume_size: Input should be a valid integer, unable to parse string as an integer (value='big')",
        "instance_cout: Extra inputs are not permitted", "did you mean 'instance_count'?",
        "role is required",
    ]
    for needle in expected:
        assert any(needle in line for line in lines), (needle, out.stderr)
    assert "6 problem(s)" in out.stderr, out.stderr
