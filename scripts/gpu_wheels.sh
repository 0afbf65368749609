#!/usr/bin/env bash
# Wheels for a GPU machine that cannot download: its python3 (CPython 3.12, x86-64) has torch + CUDA, transformers,
# pyarrow, psutil, nvidia-ml-py, typer, rich, pyyaml, pandas, numpy, networkx, packaging, narwhals, urllib3 and
# python-dateutil, but not what follows. Run here (where pip reaches PyPI); scripts/gpu_check.sh installs .whl/
# there (--no-index --no-deps --target, then PYTHONPATH). .whl/ is git-ignored; carry it with the working tree.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
# the versions the test environment runs; one version of each (two stop the install there). Dependencies are
# named here because --no-deps fetches none: pydantic's, boto3's, and HTA's (its jupyterlab/pydot/pytest
# requirements are for notebooks and tests, not the analyses gpu_check.py calls)
WHEELS=(
  pydantic==2.14.4 pydantic-core==2.50.5 annotated-types==0.8.0 typing-inspection==0.4.5 typing-extensions==4.16.0
  boto3==1.44.8 botocore==1.44.8 s3transfer==0.19.3 jmespath==1.1.0
  msgspec==0.23.0 orjson==3.13.0 plotly==7.1.0
  holistictraceanalysis==0.5.0
)
PLATFORMS=()
for p in manylinux_2_28_x86_64 manylinux_2_27_x86_64 manylinux_2_17_x86_64 manylinux2014_x86_64 manylinux1_x86_64; do
  PLATFORMS+=(--platform "$p")
done
mkdir -p .whl
"$PY" -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp "${PLATFORMS[@]}" \
  -d .whl "${WHEELS[@]}"
ls -1 .whl
du -sh .whl
