"""Writes <pid_dir>/<host>-rank<R>.pid, then holds until killed (or --fail_rank exits with an error)."""
import argparse
import json
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
parser.add_argument("--stubborn_rank", type=int, default=-1, help="this rank ignores SIGTERM and leaves a detached "
                    "grandchild (its own session) that ignores SIGTERM too")
args = parser.parse_args()

host = os.environ["SM_CURRENT_HOST"]
hosts = json.loads(os.environ["SM_HOSTS"])
# torchrun names the rank; one process per host (no distribution) takes its host's index
rank = int(os.environ["RANK"]) if "RANK" in os.environ else hosts.index(host)
Path(args.pid_dir, f"{host}-rank{rank}.pid").write_text(str(os.getpid()))
if rank == args.stubborn_rank:
    import signal
    import subprocess

    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # inherited by the grandchild
    code = ("import os, pathlib, time; pathlib.Path(os.environ['PID_FILE']).write_text(str(os.getpid())); "
            "time.sleep(600)")
    subprocess.Popen([sys.executable, "-c", code], start_new_session=True,
                     env={**os.environ, "PID_FILE": str(Path(args.pid_dir, f"{host}-rank{rank}-grandchild.pid"))})
print(f"rank {rank} holding", flush=True)
if rank == args.fail_rank:
    # wait for every rank to be up, so the test can see the others being ended
    world = int(os.environ.get("WORLD_SIZE", len(hosts))) + (1 if args.stubborn_rank >= 0 else 0)  # + its grandchild
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
