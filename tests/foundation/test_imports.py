"""`import sagelaunch.estimators, sagelaunch.profiler_config` stays light: no torch, transformers, boto3 or sagemaker."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

HEAVY = ("torch", "transformers", "boto3", "botocore", "sagemaker", "tensorflow", "yaml", "typer")


def test_fresh_import_pulls_in_nothing_heavy():
    code = (
        "import sys, json; import sagelaunch.estimators, sagelaunch.profiler_config; "
        "from sagelaunch.estimators import PyTorch; from sagelaunch.jobspec.smp import SMPParameters, check_world; "
        "e = PyTorch(entry_point='t.py', framework_version='2.0.0', instance_type='local'); e.to_spec('j'); "
        f"print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         cwd=Path(__file__).resolve().parents[2])
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == []
