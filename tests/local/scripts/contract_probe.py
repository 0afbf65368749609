"""Reports what a rank sees (SM_* variables, arguments, ranks, channels) and touches every output place."""
import json
import os
import sys
from pathlib import Path

# torchrun (a distributed job) names the rank; one process per host (no distribution, as SageMaker's toolkit runs
# it) has no RANK: the script takes its host's index, as AWS's multi-host examples do
hosts = json.loads(os.environ["SM_HOSTS"])
rank = int(os.environ["RANK"]) if "RANK" in os.environ else hosts.index(os.environ["SM_CURRENT_HOST"])
world_size = int(os.environ["WORLD_SIZE"]) if "WORLD_SIZE" in os.environ else len(hosts)
base = Path(os.environ["SAGEMAKER_BASE_DIR"])
channels = {}
for name in json.loads(os.environ["SM_CHANNELS"]):
    folder = Path(os.environ[f"SM_CHANNEL_{name.upper()}"])
    channels[name] = sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())
checkpoint = base / "checkpoints" / f"runs-rank{rank}.txt"
runs = int(checkpoint.read_text()) + 1 if checkpoint.exists() else 1
checkpoint.write_text(str(runs))
allreduce_sum = None
if "--allreduce" in sys.argv:  # a real collective across hosts (imports torch only when asked)
    import torch
    import torch.distributed as dist

    dist.init_process_group("gloo", rank=rank, world_size=world_size)  # at MASTER_ADDR:MASTER_PORT
    value = torch.tensor([float(dist.get_rank())])
    dist.all_reduce(value)
    allreduce_sum = value.item()
    dist.destroy_process_group()
report = {
    "allreduce_sum": allreduce_sum,
    "env": {k: v for k, v in os.environ.items() if k.startswith(("SM_", "SAGE", "TF_CONFIG", "TRAINING_JOB"))},
    "argv": sys.argv[1:],
    "rank": rank,
    "world_size": world_size,
    "torchrun": "RANK" in os.environ,
    "local_rank": int(os.environ.get("LOCAL_RANK", "0")),
    "cwd": os.getcwd(),
    "pid": os.getpid(),
    "channels": channels,
    "checkpoint_runs": runs,
}
out = Path(os.environ["SM_OUTPUT_DATA_DIR"])
(out / f"rank{rank}.json").write_text(json.dumps(report))
if rank == 0:
    Path(os.environ["SM_MODEL_DIR"], "model.txt").write_text("weights")
print(f"hello from rank {rank}")
print(f"stderr line from rank {rank}", file=sys.stderr)
