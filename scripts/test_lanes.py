"""The whole suite as four pytest processes at once, one per lane (what `bash scripts/run_tests.sh` runs when it is
given no pytest arguments; README, *Tests by tier*).

One pytest process keeps the two cores only about 64 % busy: a local job's ranks spend much of their life waiting on
each other, a moto request or a process start, and the unit and integration tests use one core. The lanes split the
suite where nothing is shared between them, so that no session fixture runs twice: the torchrun launches and SMP
examples of tests/modelparallel (the `_launches` area, the example jobs), the local jobs of tests/local, every other
slow test (the session's trained RoBERTa, profiled jobs, the planner's live runs, the browser), and the unit and
integration tiers. Together they select every test exactly once (tests/foundation/test_lanes.py checks it).

Each lane is its own session: its own run folder and HOME (tests/conftest.py), its own moto server, its own
`--durations` report. Lines are printed as they come, each behind its lane's name; the lanes' own summaries close
the output. The command fails when any lane fails. The lanes end with this process: each runs in its own session, so a
Ctrl-C reaches it once, passed on from here as SIGTERM is, and it gets SIGTERM if this process dies without passing
anything on.
"""

from __future__ import annotations

import ctypes
import re
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass

PR_SET_PDEATHSIG = 1  # prctl(2): the signal a process gets when its parent dies
FINAL_LINE = re.compile(r"^=+ .* in [\d.]+s")  # pytest's last summary line: "==== 3 passed in 1.2s ===="


@dataclass(frozen=True)
class Lane:
    name: str
    args: tuple[str, ...]  # what selects the lane's tests


LANES = (
    Lane("modelparallel", ("tests/modelparallel", "-m", "slow")),
    Lane("local", ("tests/local", "-m", "slow")),
    Lane("jobs", ("-m", "slow", "--ignore=tests/modelparallel", "--ignore=tests/local")),
    Lane("fast", ("-m", "not slow")),
)
DURATIONS = 25  # each lane's slowest tests (setup, call and teardown each) close its output


def _die_with_parent() -> None:
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


@dataclass
class Running:
    lane: Lane
    process: subprocess.Popen
    started: float
    summary: str = "(no summary line)"
    ended: float = 0.0


def _relay(running: Running, width: int, out_lock: threading.Lock) -> None:
    """Print the lane's lines behind its name; keep pytest's summary line for the closing summary (warnings printed
    at the interpreter's exit may follow it)."""
    assert running.process.stdout is not None
    for line in running.process.stdout:
        with out_lock:
            sys.stdout.write(f"{running.lane.name:<{width}} | {line}")
            sys.stdout.flush()
        if FINAL_LINE.match(line):
            running.summary = line.strip()
    running.process.wait()
    running.ended = time.monotonic()


def run(python: str, extra: list[str], lanes: tuple[Lane, ...] = LANES, cwd: str | None = None) -> int:
    """Run the lanes with `python -m pytest`; `extra` goes to every lane, with `{lane}` replaced by the lane's name
    (`--cost-report=costs-{lane}.jsonl`: one file per lane). Returns the command's exit status."""
    runs = []
    for lane in lanes:
        command = [python, "-u", "-m", "pytest", f"--durations={DURATIONS}", *lane.args,
                   *(arg.replace("{lane}", lane.name) for arg in extra)]
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=cwd,
                                   start_new_session=True, preexec_fn=_die_with_parent)
        runs.append(Running(lane, process, time.monotonic()))

    def pass_on(signum: int, _frame: object) -> None:
        for running in runs:
            if running.process.poll() is None:
                running.process.send_signal(signum)

    saved = {signum: signal.signal(signum, pass_on) for signum in (signal.SIGTERM, signal.SIGINT)}
    out_lock = threading.Lock()
    width = max(len(lane.name) for lane in lanes)
    relays = [threading.Thread(target=_relay, args=(running, width, out_lock)) for running in runs]
    for relay in relays:
        relay.start()
    for relay in relays:
        relay.join()
    for signum, handler in saved.items():
        signal.signal(signum, handler)

    print("\nlanes (each its own pytest session; README, Tests by tier):")
    status = 0
    for running in runs:
        code = running.process.returncode
        print(f"  {running.lane.name:<{width}}  exit {code:>3}  {running.ended - running.started:7.1f} s  "
              f"{running.summary}")
        if code == 5:  # pytest collected no test: a lane that selects nothing is a broken split
            code = 1
        status = status or code
    return status


if __name__ == "__main__":
    sys.exit(run(sys.argv[1], sys.argv[2:]))
