"""Writes <pid_dir>/<host>-rank<R>.pid, then holds until killed (or --fail_rank exits with an error)."""
import argparse
import os
import sys
import time
from pathlib import Path

parser = argparse.ArgumentParser()
parser.add_argument("--pid_dir", required=True)
parser.add_argument("--fail_rank", type=int, default=-1)
parser.add_argument("--exit_code", type=int, default=1)
parser.add_argument("--failure_file", default="")
parser.add_argument("--hold_seconds", type=float, default=120)
args = parser.parse_args()

rank = int(os.environ.get("RANK", "0"))
host = os.environ["SM_CURRENT_HOST"]
Path(args.pid_dir, f"{host}-rank{rank}.pid").write_text(str(os.getpid()))
print(f"rank {rank} holding", flush=True)
if rank == args.fail_rank:
    # wait for every rank to be up, so the test can see the others being ended
    world = int(os.environ.get("WORLD_SIZE", "1"))
    deadline = time.monotonic() + 60
    while len(list(Path(args.pid_dir).glob("*.pid"))) < world and time.monotonic() < deadline:
        time.sleep(0.02)
    if args.failure_file:
        Path(os.environ["SM_OUTPUT_DIR"], "failure").write_text(args.failure_file)
    if args.exit_code == 1:
        raise ValueError(f"boom from rank {rank}")
    sys.exit(args.exit_code)
deadline = time.monotonic() + args.hold_seconds
while time.monotonic() < deadline:
    time.sleep(0.05)
