#!/usr/bin/env bash
# The GPU figures in one command, on a machine with one NVIDIA GPU (about 5 minutes on an H200; safe to rerun):
#     bash scripts/gpu_check.sh            → docs/gpu_figures.json and a summary (scripts/gpu_check.py says what)
# Without CUDA it runs the CPU paths at tiny sizes and says per section what it skips; `--cpu` forces that,
# `--out FILE` writes the JSON elsewhere. Wheels in .whl/ (made by scripts/gpu_wheels.sh where pip can reach
# PyPI) are installed first into a private folder, for machines that cannot download anything.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if compgen -G ".whl/*.whl" >/dev/null; then
  SITE=${TMPDIR:-/tmp}/sagelaunch-gpu-check-site
  if "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target "$SITE" .whl/*.whl; then
    export PYTHONPATH="$SITE${PYTHONPATH:+:$PYTHONPATH}"
  else  # e.g. another Python than the CPython 3.12 they were fetched for: go on with what is installed
    echo "gpu_check: the wheels in .whl/ were not installed (see pip's message); using $PY's own packages" >&2
  fi
fi
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1 TOKENIZERS_PARALLELISM=false
# 8 minutes at most: the JSON is rewritten after each section, so a cut run still leaves what it measured
exec timeout --signal=INT --kill-after=30 480 "$PY" scripts/gpu_check.py "$@"
