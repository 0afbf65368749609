"""custom_mpi_options in local jobs: -x variables reach every rank; transport options are named as without effect."""

from __future__ import annotations

import pytest

from sagelaunch.estimators import PyTorch
from sagelaunch.launcher.local.mpi_options import exported_environment

NOTEBOOK_OPTIONS = ("-x NCCL_DEBUG=WARN -x SMDEBUG_LOG_LEVEL=ERROR -x SMP_DISABLE_D2D=1 "
                    "--mca btl_vader_single_copy_mechanism none -x FROM_LAUNCHER")


def test_x_variables_are_exported_and_other_options_noted():
    variables, notes = exported_environment(NOTEBOOK_OPTIONS, {"FROM_LAUNCHER": "here"})
    assert variables == {"NCCL_DEBUG": "WARN", "SMDEBUG_LOG_LEVEL": "ERROR", "SMP_DISABLE_D2D": "1",
                         "FROM_LAUNCHER": "here"}
    assert len(notes) == 1 and "--mca btl_vader_single_copy_mechanism none" in notes[0]
    assert exported_environment("", {}) == ({}, [])


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_x_variables_reach_every_rank_of_a_local_job(tmp_path, monkeypatch):
    monkeypatch.setenv("SAGELAUNCH_HOME", str(tmp_path / "home"))
    src = tmp_path / "src"
    src.mkdir()
    (src / "show_env.py").write_text("import os\nprint('RANK', os.environ['RANK'], 'SMP_DISABLE_D2D', "
                                     "os.environ.get('SMP_DISABLE_D2D'))\n")
    job = PyTorch(entry_point="show_env.py", source_dir=str(src), framework_version="2.0.0", py_version="py310",
                  instance_type="local", output_path=str(tmp_path / "out"),
                  distribution={"mpi": {"enabled": True, "processes_per_host": 2,
                                        "custom_mpi_options": NOTEBOOK_OPTIONS}}).fit(wait=True, logs=False)
    assert job.describe()["TrainingJobStatus"] == "Completed"
    lines = list(job.logs())
    assert sum("SMP_DISABLE_D2D 1" in line for line in lines) == 2  # both ranks
    assert any("--mca btl_vader_single_copy_mechanism none" in line and "without effect" in line for line in lines)
