"""The training toolkit's `sagemaker_training.environment.Environment` in a local job (the stand-in, given where the
real toolkit is absent): every property from the facts the job's SM_* variables come from, as a script reads them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from sagelaunch.jobspec.spec import InputChannel
from sagelaunch.launcher.backends import submit
from sagelaunch.launcher.local.job_modules import JOB_MODULES_ROOT
from tests.local.conftest import make_spec

SCRIPT = textwrap.dedent("""\
    import json, os
    from sagemaker_training import environment
    env = environment.Environment()
    report = {"hosts": env.hosts, "current_host": env.current_host, "model_dir": env.model_dir,
              "output_data_dir": env.output_data_dir, "channel_input_dirs": env.channel_input_dirs,
              "hyperparameters": env.hyperparameters, "cmd_args": env.to_cmd_args(), "is_master": env.is_master,
              "job_name": env.job_name, "num_cpus": env.num_cpus, "num_gpus": env.num_gpus,
              "user_entry_point": env.user_entry_point, "module_name": env.module_name,
              "sm_vars": env.to_env_vars() == {k: v for k, v in os.environ.items() if k.startswith("SM_")},
              "properties": "resource_config" in env.properties()}
    try:
        env.no_such_property
    except AttributeError as err:
        report["missing"] = str(err)
    open(os.path.join(os.environ["SM_OUTPUT_DATA_DIR"], "env.json"), "w").write(json.dumps(report))
    """)


@pytest.mark.slow
def test_a_script_reads_the_toolkits_environment_in_a_local_job(tmp_path):
    code = tmp_path / "code"
    code.mkdir()
    (code / "train.py").write_text(SCRIPT)
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "a.csv").write_text("1\n")
    spec = make_spec("train.py", source_dir=str(code), output_path=str(tmp_path / "out"),
                     hyperparameters={"epochs": 2, "title": "two words"},
                     inputs=(InputChannel(name="train", uri=str(tmp_path / "data")),))
    job = submit(spec, wait=True, logs=False)
    record = job.describe()
    assert record["TrainingJobStatus"] == "Completed", record.get("FailureReason")
    host = Path(record["JobDir"]) / "algo-1"
    report = json.loads((host / "output" / "data" / "env.json").read_text())
    assert report["hosts"] == ["algo-1"] and report["current_host"] == "algo-1" and report["is_master"]
    assert Path(report["model_dir"]) == host / "model" and Path(report["output_data_dir"]) == host / "output" / "data"
    assert list(report["channel_input_dirs"]) == ["train"]
    assert (Path(report["channel_input_dirs"]["train"]) / "a.csv").read_text() == "1\n"
    assert report["hyperparameters"] == {"epochs": 2, "title": "two words"}
    assert report["cmd_args"] == ["--epochs", "2", "--title", "two words"]
    assert report["job_name"] == spec.job_name and report["user_entry_point"] == "train.py"
    assert report["module_name"] == "train" and report["num_cpus"] >= 1 and report["num_gpus"] == 0
    assert report["sm_vars"] and report["properties"]
    assert "no 'no_such_property'" in report["missing"] and "current_host" in report["missing"]


def test_outside_a_job_the_environment_says_what_is_missing():
    env = {k: v for k, v in os.environ.items() if k != "SM_TRAINING_ENV"}
    env["PYTHONPATH"] = str(JOB_MODULES_ROOT / "sagemaker_training")
    out = subprocess.run([sys.executable, "-c", "from sagemaker_training import environment; environment.Environment()"],
                         env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode != 0 and "SM_TRAINING_ENV is not set" in out.stderr
