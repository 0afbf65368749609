# Sourced by the README's two commands: make .venv if missing, install the CPU build of torch first
# (pinned: a bare torch requirement would pull a multi-GB CUDA build), then the project with the
# extra named in $1 ("local" or "test"), at the versions the suite last passed with (constraints/project.txt: the
# package's own ranges stay open for users; a new upstream release reaches CI when that file is bumped on purpose).
# Sets PY to the venv's python and UV to the installer the other venvs use.
TORCH_PIN="torch==2.13.0"
UV_PIN="uv==0.13.10"
[ -x .venv/bin/python ] || python3 -m venv .venv
PY=.venv/bin/python
# everything but torch goes through uv: the same pins in a fraction of pip's time (README, Tests)
[ -x .venv/bin/uv ] || $PY -m pip install -q "$UV_PIN"
UV=.venv/bin/uv
# a caller may name a function to run in the background from here on, beside the installs below (run_tests.sh: the
# oracles' venvs); its process id is left in BESIDE_PID for the caller to wait on
if [ -n "${BESIDE_INSTALLS:-}" ]; then "$BESIDE_INSTALLS" & BESIDE_PID=$!; fi
# torch through pip: pip finds the CPU build this machine keeps on disk (its find-links), uv does not look there
$PY -c "import torch" 2>/dev/null || $PY -m pip install -q "$TORCH_PIN"
# torch named again so that no package's range can move it off the CPU build installed above;
# --compile-bytecode: pip writes each module's bytecode at install, uv only when asked; without it every process
# the suite starts recompiles transformers, botocore, moto... (a RoBERTa worker's imports: 8.4 s, compiled 4.8 s),
# and PYTHONDONTWRITEBYTECODE, where it is set, keeps it from ever being cached
$UV pip install -q --compile-bytecode --python "$PY" -c constraints/project.txt -e ".[$1]" "$TORCH_PIN"
