"""Writes <marks>/started, waits (at most 120 s) for <marks>/go, writes --model_bytes of random bytes as its model,
prints a line and exits 0: a test changes the job's folders while it waits."""
import argparse
import os
import time
from pathlib import Path

parser = argparse.ArgumentParser()
parser.add_argument("--marks", required=True)
parser.add_argument("--model_bytes", type=int, default=16)
args, _ = parser.parse_known_args()

Path(args.marks, "started").write_text(str(os.getpid()))
deadline = time.monotonic() + 120
while not Path(args.marks, "go").exists() and time.monotonic() < deadline:
    time.sleep(0.02)
if args.model_bytes:  # random bytes: gzip cannot shrink them
    Path(os.environ["SM_MODEL_DIR"], "weights.bin").write_bytes(os.urandom(args.model_bytes))
print("trained", flush=True)
