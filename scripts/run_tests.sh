#!/usr/bin/env bash
# Install everything the tests need into .venv and run the whole suite.
# Usage: bash scripts/run_tests.sh [pytest args]   (one tier: -m unit | -m integration | -m slow; README, Tests)
# Without arguments it runs the whole suite in four lanes at once (scripts/test_lanes.py); with any, one pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
# each oracle's venv is installed at the versions the suite passed with (constraints/sdk-v*.txt), beside the
# project's own installs (ensure_venv.sh starts this once uv is there; the installs took 70 s against 74 s one after
# another: compiling bytecode keeps both cores busy either way)
install_oracles() {
  # the SageMaker Python SDK v3, in its own venv, only as the reference for the image-URI parity test
  [ -x .venv-sagemaker/bin/python ] || { python3 -m venv .venv-sagemaker && $UV pip install -q --compile-bytecode --python .venv-sagemaker/bin/python -c constraints/sdk-v3.txt "sagemaker>=3,<4"; } || return 1
  # the SageMaker Python SDK v2, in its own venv, only as the oracle of the v2 parity tests (tests/parity_v2)
  [ -x .venv-sagemaker-v2/bin/python ] || { python3 -m venv .venv-sagemaker-v2 && $UV pip install -q --compile-bytecode --python .venv-sagemaker-v2/bin/python -c constraints/sdk-v2.txt "sagemaker>=2.250,<3"; } || return 1
}
BESIDE_INSTALLS=install_oracles
source scripts/ensure_venv.sh test
# Debian's packages the tests drive: headless Chromium for the browser tests (Playwright cannot download browsers
# here) and btrfs-progs for the copy-on-write channel test (a btrfs filesystem in a loop file)
missing=""
command -v chromium >/dev/null 2>&1 || missing="$missing chromium"
command -v mkfs.btrfs >/dev/null 2>&1 || missing="$missing btrfs-progs"
if [ -n "$missing" ]; then
  if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
  $SUDO apt-get update -qq && $SUDO apt-get install -y -qq $missing >/dev/null
fi
wait "$BESIDE_PID" || { echo "installing the SageMaker SDK oracles' venvs failed" >&2; exit 1; }
set +e
if [ $# -eq 0 ]; then
  # the whole suite: four pytest processes at once, one per lane, each closing with its 25 slowest tests
  $PY scripts/test_lanes.py "$PY"
else
  # the 25 slowest tests (setup, call and teardown each) close the run's output: where the time goes
  $PY -m pytest --durations=25 "$@"
fi
rc=$?
set -e
# pytest exits 5 when it collected no test: that is a failure here
[ "$rc" = 5 ] && { echo "pytest collected no tests" >&2; exit 1; }
exit "$rc"
