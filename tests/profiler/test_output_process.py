"""The profile's output process: a helper writes the windows, so the training process never imports pyarrow or the
trace reader; if the helper dies, the windows are written in the training process and nothing is lost; the
helper never outlives the training process."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import threading
import time

import psutil
import pytest

from sagelaunch.profiler.loader import load_profile
from sagelaunch.profiler.output_process import PROCESS_ENV
from tests.profiler.conftest import run_profiled_script, script_env
from tests.profiler.test_cpu_ops_duty_cycle import steps_holding_operators

LOOP = textwrap.dedent(r'''
    import json, os, sys, torch, psutil
    import sagelaunch.profiler as smprof
    from sagelaunch.profiler.api import SMProfiler
    torch.set_num_threads(1)
    model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU(), torch.nn.Linear(8, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    report = {}

    def train(out, steps, kill_helper_at=None):
        SMProfiler._instance = None
        smprof.configure(smprof.Config(output_dir=out, host="algo-1", rank=0, record_cpu_ops=True,
                                       cpu_ops_steps=2, cpu_ops_every_steps=5))
        smprof.start_profiling()
        prof = SMProfiler.instance()
        helper = prof._output.pid
        report.setdefault("helper_parent", []).append(psutil.Process(helper).ppid() == os.getpid())
        for i in range(steps):
            if i == kill_helper_at:
                os.kill(helper, 9)
                try:
                    os.waitpid(helper, 0)
                except ChildProcessError:  # the writer thread noticed first and reaped it
                    pass
            with smprof.annotate(f"step_{i}"):
                loss = model(torch.randn(4, 8)).sum()
                loss.backward()
                opt.step()
                opt.zero_grad()
        smprof.stop_profiling()
        report.setdefault("failed", []).append(prof.failed)
        try:
            os.waitpid(helper, os.WNOHANG)
            report.setdefault("helper_reaped", []).append(False)
        except ChildProcessError:
            report.setdefault("helper_reaped", []).append(True)

    train(os.path.join(sys.argv[1], "helper"), 12)
    report["imported_after_helper"] = [m for m in ("pyarrow", "sagelaunch.profiler.kineto_reader", "msgspec") if m in sys.modules]
    train(os.path.join(sys.argv[1], "killed"), 23, kill_helper_at=7)
    report["imported_after_kill"] = [m for m in ("pyarrow", "sagelaunch.profiler.kineto_reader") if m in sys.modules]
    print(json.dumps(report))
''')


@pytest.mark.slow  # a torch training process
def test_helper_writes_windows_and_a_dead_helper_loses_nothing(tmp_path):
    proc, report = run_profiled_script(LOOP, tmp_path, timeout=300)
    assert report["helper_parent"] == [True, True]
    assert report["failed"] == [False, False] and report["helper_reaped"] == [True, True]
    # the helper read Kineto's exports and wrote Parquet: the training process loaded neither part
    assert report["imported_after_helper"] == []
    rank = load_profile(tmp_path / "helper" / "algo-1").ranks[0]
    assert steps_holding_operators(rank) == [0, 1, 5, 6, 10, 11]
    # killed before step 7: the rest is written in the training process, every step and operator window is there
    assert "the output process ended" in proc.stderr and "writing in this process" in proc.stderr
    assert report["imported_after_kill"] == ["pyarrow", "sagelaunch.profiler.kineto_reader"]
    rank = load_profile(tmp_path / "killed" / "algo-1").ranks[0]
    names = [rank.names[i] for i in rank["name_id"]]
    assert sorted(int(n[5:]) for n in names if n.startswith("step_")) == list(range(23))
    assert steps_holding_operators(rank) == [0, 1, 5, 6, 10, 11, 15, 16, 20, 21]


WAIT_FOREVER = textwrap.dedent(r'''
    import sys
    import sagelaunch.profiler as smprof
    from sagelaunch.profiler.api import SMProfiler
    smprof.configure(smprof.Config(output_dir=sys.argv[1], host="algo-1", rank=0))
    smprof.start_profiling()
    print(SMProfiler.instance()._output.pid, flush=True)
    sys.stdin.read()  # until the test kills this process
''')


def test_helper_ends_with_the_training_process(tmp_path):
    train = subprocess.Popen([sys.executable, "-c", WAIT_FOREVER, str(tmp_path)], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True, env=script_env())
    try:
        helper = psutil.Process(int(train.stdout.readline()))
        assert helper.ppid() == train.pid and helper.is_running()
        train.send_signal(signal.SIGKILL)
        train.wait(timeout=60)
        ended = threading.Event()
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not ended.is_set():
            try:  # orphaned, it is reaped by init or lingers as a zombie: either means it exited
                if helper.status() == psutil.STATUS_ZOMBIE:
                    ended.set()
            except psutil.NoSuchProcess:
                ended.set()
            ended.wait(0.05)
        assert ended.is_set(), "the output process outlived the training process"
    finally:
        train.kill()
        train.wait()


IN_PROCESS = textwrap.dedent(r'''
    import json, sys
    import sagelaunch.profiler as smprof
    from sagelaunch.profiler.api import SMProfiler
    smprof.configure(smprof.Config(output_dir=sys.argv[1], host="algo-1", rank=0))
    smprof.start_profiling()
    helper = SMProfiler.instance()._output.pid
    with smprof.annotate("step_0"):
        pass
    smprof.stop_profiling()
    print(json.dumps({"helper": helper, "pyarrow": "pyarrow" in sys.modules}))
''')


def test_output_process_can_be_switched_off(tmp_path):
    _, out = run_profiled_script(IN_PROCESS, tmp_path, env={PROCESS_ENV: "0"})
    assert out == {"helper": None, "pyarrow": True}
    rank = load_profile(tmp_path / "algo-1").ranks[0]
    assert [rank.names[i] for i in rank["name_id"]] == ["step_0"]


FORKED = textwrap.dedent(r'''
    import json, os, sys
    import sagelaunch.profiler as smprof
    from sagelaunch.profiler import api
    api.MAX_SPANS_PER_WINDOW = 10
    smprof.configure(smprof.Config(output_dir=sys.argv[1], host="algo-1", rank=0))
    smprof.start_profiling()
    ready_r, ready_w = os.pipe()
    done_r, done_w = os.pipe()
    child = os.fork()
    if child == 0:  # like a DataLoader worker: forked mid-session, annotating in its dataset code
        prof = api.SMProfiler.instance()
        for i in range(100):  # ten windows' worth: nothing may be handed to the parent's writer or helper
            with smprof.annotate("worker"):
                pass
        os.write(ready_w, json.dumps({"active": prof.active, "files": len(prof.files),
                                      "spans": len(prof._recorder.spans)}).encode())
        os.read(done_r, 1)  # holds every inherited descriptor (the helper's stdin too) until the parent is done
        os._exit(0)
    worker = json.loads(os.read(ready_r, 1000))
    for i in range(25):
        with smprof.annotate(f"step_{i}"):
            pass
    out = api.SMProfiler.instance()._output
    smprof.stop_profiling()  # while the child still holds the helper's stdin
    os.write(done_w, b"x")
    os.waitpid(child, 0)
    print(json.dumps({"worker": worker, "helper_exit": out.exit_code, "files": len(api.SMProfiler.instance().files)}))
''')


def test_a_forked_child_neither_records_nor_keeps_the_helper_alive(tmp_path):
    _, out = run_profiled_script(FORKED, tmp_path)
    assert out["worker"] == {"active": False, "files": 0, "spans": 0}
    assert out["helper_exit"] == 0  # it was asked to end, not killed after a wait for an EOF that never came
    assert out["files"] == 3
    rank = load_profile(tmp_path / "algo-1").ranks[0]
    names = [rank.names[i] for i in rank["name_id"]]
    assert "worker" not in names and sorted(n for n in names if n.startswith("step_")) == sorted(
        f"step_{i}" for i in range(25))


START_FAILS = textwrap.dedent(r'''
    import json, sys, threading, psutil, torch
    import sagelaunch.profiler as smprof
    from sagelaunch.profiler.api import SMProfiler

    def refuse(self):  # as Kineto does where CUPTI may not be used (CUPTI_ERROR_INSUFFICIENT_PRIVILEGES)
        raise RuntimeError("CUPTI_ERROR_INSUFFICIENT_PRIVILEGES")

    torch.profiler.profile.start = refuse
    smprof.configure(smprof.Config(output_dir=sys.argv[1], host="algo-1", rank=0, record_cpu_ops=True))
    smprof.start_profiling()  # fails after the output process and the writer thread have started
    with smprof.annotate("step_0"):  # training goes on, with nothing of the profiler left running
        torch.ones(2).sum()
    left = {"children": len(psutil.Process().children()),
            "threads": sorted(t.name for t in threading.enumerate() if t.name.startswith("sagelaunch"))}
    smprof.stop_profiling()  # harmless after the failure
    print(json.dumps({"failed": SMProfiler.instance().failed, **left}))
''')


def test_a_failed_start_ends_what_it_had_started(tmp_path):
    proc, out = run_profiled_script(START_FAILS, tmp_path)
    assert "start_profiling failed; profiling stops, training goes on" in proc.stderr
    assert "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES" in proc.stderr
    assert out == {"failed": True, "children": 0, "threads": []}
