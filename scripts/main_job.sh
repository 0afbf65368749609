#!/usr/bin/env bash
# The README's main job: fine-tune RoBERTa for tweet sentiment through estimator.fit on this machine,
# profiled (ProfilerConfig), offline (tiny RoBERTa + the shipped dataset), then print where the model,
# logs and profile are. Usage: bash scripts/main_job.sh [--epochs N] [--model HUB_ID] ...
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x .venv/bin/python ] || python3 -m venv .venv
PY=.venv/bin/python
# torch first, pinned to the release the project is tested with (never upgraded by the extras)
$PY -c "import torch" 2>/dev/null || $PY -m pip install -q torch==2.13.0
$PY -m pip install -q -e ".[local]"
exec $PY scripts/launch_local_finetune.py "$@"
