# Sourced by the README's two commands: make .venv if missing, install the CPU build of torch first
# (pinned: a bare torch requirement would pull a multi-GB CUDA build), then the project with the
# extra named in $1 ("local" or "test"), at the versions the suite last passed with (constraints/project.txt: the
# package's own ranges stay open for users; a new upstream release reaches CI when that file is bumped on purpose).
# Sets PY to the venv's python.
[ -x .venv/bin/python ] || python3 -m venv .venv
PY=.venv/bin/python
$PY -c "import torch" 2>/dev/null || $PY -m pip install -q torch==2.13.0
$PY -m pip install -q -c constraints/project.txt -e ".[$1]"
