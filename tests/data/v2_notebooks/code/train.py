"""Training script of the v2-style notebook (SageMaker runs it; the parity test only submits the job)."""
import argparse
import json
import os

parser = argparse.ArgumentParser()
parser.add_argument("--epochs", type=int, default=1)
args = parser.parse_args()
rows = [json.loads(line) for line in open(os.path.join(os.environ["SM_CHANNEL_TRAINING"], "train.jsonl"))]
print(f"{len(rows)} rows, {args.epochs} epoch(s)")
open(os.path.join(os.environ["SM_MODEL_DIR"], "model.json"), "w").write(json.dumps({"rows": len(rows)}))
