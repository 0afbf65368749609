"""transformers' Trainer in a local job with SMP enabled: it takes its SMP path (smdistributed is importable), and
that path is CUDA-only. Shown here, not patched: on a CPU-only torch its TrainingArguments choose cuda:0."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from launcher.local.job_modules import JOB_MODULES_ROOT

PROBE = """
import json, os, torch
from transformers import TrainingArguments
from transformers.utils import is_sagemaker_mp_enabled
args = TrainingArguments(output_dir=os.environ["PROBE_OUT"], report_to=[])
print(json.dumps({"smp_path": is_sagemaker_mp_enabled(), "device": str(args.device),
                  "cuda": torch.cuda.is_available()}))
"""


def test_trainer_takes_its_smp_path_which_is_cuda_only(tmp_path):
    env = {**os.environ, "SM_HP_MP_PARAMETERS": '{"partitions": 1, "ddp": true}',  # as a local SMP job sets them
           "SM_FRAMEWORK_PARAMS": '{"sagemaker_mpi_enabled": true}', "PROBE_OUT": str(tmp_path),
           "PYTHONPATH": os.pathsep.join([str(JOB_MODULES_ROOT.parent), str(JOB_MODULES_ROOT / "smdistributed")])}
    out = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["smp_path"] is True  # smdistributed resolves to sagelaunch's modelparallel
    if not got["cuda"]:
        assert got["device"] == "cuda:0"  # transformers' SMP path: torch.device("cuda", smp.local_rank())
