#!/usr/bin/env bash
# The README's main job: fine-tune RoBERTa for tweet sentiment through estimator.fit on this machine,
# profiled (ProfilerConfig), offline (tiny RoBERTa + the shipped dataset), then print where the model,
# logs and profile are. Usage: bash scripts/main_job.sh [--epochs N] [--model HUB_ID] ...
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/ensure_venv.sh local
exec $PY scripts/launch_local_finetune.py "$@"
