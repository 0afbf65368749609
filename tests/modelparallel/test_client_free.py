"""Inside a training job, `smp.init` loads no client code: the SMP rules it needs come from jobspec only."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# the client: its libraries, the application (every sagelaunch.<x> that is not a job-side or leaf package; the bare
# `sagelaunch` namespace package every module sits under is not one), and AWS's SDK
CLIENT = ("sagelaunch.estimators", "sagelaunch.profiler_config", "sagelaunch.launcher", "boto3", "botocore")
JOB_SIDE = ("sagelaunch", "sagelaunch.jobspec", "sagelaunch.modelparallel", "sagelaunch.profiler")

SCRIPT = f"""
import json, sys
import sagelaunch.modelparallel as smp
smp.init({{"pipeline_parallel_degree": 1, "microbatches": 2}})
world, microbatches = smp.size(), smp.num_microbatches()
def client(m):
    top = ".".join(m.split(".")[:2])
    return top.startswith({CLIENT!r}) or (m.startswith("sagelaunch.") and top not in {JOB_SIDE!r})
loaded = sorted(m for m in sys.modules if client(m))
smp.shutdown()
print(json.dumps({{"world": world, "microbatches": microbatches, "loaded": loaded}}))
"""


def test_smp_init_in_a_one_process_world_loads_no_client_module():
    env = {k: v for k, v in os.environ.items()
           if k not in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT",
                        "SM_HP_MP_PARAMETERS")}
    env.update(PYTHONPATH=str(ROOT), CUDA_VISIBLE_DEVICES="")  # gloo on CPU
    out = subprocess.run([sys.executable, "-c", SCRIPT], cwd=ROOT, env=env, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["world"] == 1 and result["microbatches"] == 2  # smp.init really ran
    assert result["loaded"] == [], f"smp.init loaded client modules: {result['loaded']}"
