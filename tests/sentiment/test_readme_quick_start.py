"""README.md's "Quick start" python block runs as written (only the epochs made small), from the repository root."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
HYPERPARAMETERS = '"epochs": 8}'
SMALL_RUN = '"epochs": 1, "max_train_samples": 200, "max_eval_samples": 64}'


def quick_start_block() -> str:
    readme = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Quick start", 1)[1]
    match = re.search(r"```python\n(.*?)```", section, re.S)
    assert match, "README's Quick start has no ```python block"
    return match.group(1)


def test_quick_start_block_asks_for_all_three_channels():
    code = quick_start_block()
    for split in ("train", "validation", "test"):
        assert f'"{split}": "scripts/sentiment_data/{split}.jsonl"' in code


@pytest.mark.timeout(180)
@pytest.mark.slow  # a local training job
def test_readme_quick_start_runs_as_written(tmp_path):
    code = quick_start_block()
    assert code.count(HYPERPARAMETERS) == 1, "the Quick start's hyperparameters changed: update this test's substitution"
    code = code.replace(HYPERPARAMETERS, SMALL_RUN)
    env = dict(os.environ, SAGELAUNCH_HOME=str(tmp_path / "home"), PYTHONUNBUFFERED="1", TOKENIZERS_PARALLELISM="false")
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT, env=env, capture_output=True, text=True,
                          timeout=170)
    assert done.returncode == 0, (done.stdout[-3000:], done.stderr[-3000:])
    model_data = done.stdout.strip().splitlines()[-1]  # the block's last print
    assert model_data.endswith("model.tar.gz") and Path(model_data.removeprefix("file://")).is_file(), model_data
    assert (tmp_path / "home" / "jobs").is_dir()  # the job ran in the private registry, not the user's
    assert "test_recall" in done.stdout + done.stderr  # the test channel reached the script
