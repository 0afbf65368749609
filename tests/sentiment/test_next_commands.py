"""The main job's closing lines name commands that work from a fresh shell: no venv on PATH, nothing exported."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO_ROOT / "scripts"))

import launch_local_finetune  # noqa: E402

PROFILE = REPO_ROOT / "tests" / "data" / "profiler" / "artifact_v1"


def _fresh_shell(command: str, tmp_path: Path) -> subprocess.CompletedProcess:
    """bash in the repository root with what a new login has: no venv on PATH, no PYTHONPATH, no VIRTUAL_ENV."""
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(tmp_path), "LANG": "C.UTF-8",
           "SAGELAUNCH_HOME": str(tmp_path / "home")}
    return subprocess.run(["bash", "-c", command], cwd=REPO_ROOT, env=env, capture_output=True, text=True,
                          timeout=600)


def _commands(model: str | Path, monkeypatch) -> dict[str, str]:
    monkeypatch.chdir(REPO_ROOT)  # the main job runs from the repository root (scripts/main_job.sh cds there)
    return {purpose: command for command, purpose in launch_local_finetune.next_commands(str(model), str(PROFILE))}


def test_the_printed_commands_run_the_venvs_python_by_its_path(monkeypatch):
    commands = _commands("model.tar.gz", monkeypatch)
    python = os.path.relpath(sys.executable, REPO_ROOT)
    python = python if not python.startswith("..") else sys.executable
    assert all(command.startswith(f"{python} ") for command in commands.values())
    assert commands["classify a few tweets"] == f"{python} scripts/test_trained_model.py model.tar.gz"
    assert commands["findings: what to change"] == f"{python} -m sagelaunch profile analyze {PROFILE}"


def test_profile_analyze_as_printed_works_in_a_fresh_shell(monkeypatch, tmp_path):
    answer = _fresh_shell(_commands("unused", monkeypatch)["findings: what to change"], tmp_path)
    assert answer.returncode == 0, answer.stderr[-2000:]
    assert "algo-1" in answer.stdout


def test_the_model_test_as_printed_works_in_a_fresh_shell(sentiment_archive, monkeypatch, tmp_path):
    answer = _fresh_shell(_commands(sentiment_archive, monkeypatch)["classify a few tweets"], tmp_path)
    assert answer.returncode == 0, answer.stderr[-2000:]
    assert "positive" in answer.stdout or "negative" in answer.stdout, answer.stdout
