"""The in-script API without torch: annotations, rotation, CPUProfilingDuration, config discovery, failures."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

from sagelaunch.profiler.loader import load_profile
from tests.profiler.conftest import REPO, run_profiled_script

SCRIPT = textwrap.dedent(r'''
    import json, os, sys, time
    import sagelaunch.profiler as smprof
    from sagelaunch.profiler import smprof as smprof2
    from sagelaunch.profiler.api import SMProfiler
    out = {}
    assert smprof2.annotate is smprof.annotate and smprof2.SMProfiler is smprof.SMProfiler

    def deadline_loop(cond, seconds=30):
        end = time.monotonic() + seconds
        n = 0
        while not cond() and time.monotonic() < end:
            with smprof.annotate("tick"):
                n += 1
        return cond()

    # 1. settings come from $SAGELAUNCH_PROFILER_CONFIG, output goes to $SM_PROFILER_OUTPUT_DIR
    from sagelaunch.profiler.settings import profiler_configured
    out["configured"] = profiler_configured()
    prof = SMProfiler.instance()
    c = prof.config
    out["settings"] = [c.system_monitor_interval_millis, c.cpu_profiling_duration, c.file_rotation_secs,
                       c.output_dir, c.host, c.rank]
    prof.start_profiling()

    @smprof.annotate("decorated")
    def work(x):
        return x * 2

    with smprof.annotate("outer"):
        h = smprof.annotation_begin("inner")
        assert work(21) == 42
        smprof.annotation_end(h)
    # 2. rotation: SMPFileRotationSecs=1 -> a second trace file appears while annotating
    out["rotated"] = prof.active and deadline_loop(lambda: len(prof.files) >= 2)
    # 3. CPUProfilingDuration=3 -> the session ends by itself
    out["stopped_by_duration"] = deadline_loop(lambda: not prof.active)
    prof.stop_profiling()
    out["files"] = [str(p) for p in prof.files]
    out["torch_imported"] = "torch" in sys.modules

    # 4. a profiler failure never fails training: output under a regular file cannot be written
    blocker = os.path.join(os.environ["SM_PROFILER_OUTPUT_DIR"], "blocker")
    open(blocker, "w").close()
    SMProfiler._instance = None
    smprof.configure(smprof.Config(output_dir=blocker))
    smprof.start_profiling()
    with smprof.annotate("still-training"):
        pass
    smprof.stop_profiling()
    out["failed_but_alive"] = SMProfiler.instance().failed
    print(json.dumps(out))
''')


def run_script(tmp_path, config: dict, extra_env=None):
    cfg = tmp_path / "profilerconfig.json"
    cfg.write_text(json.dumps(config))
    env = {**os.environ, "PYTHONPATH": str(REPO), "SAGELAUNCH_PROFILER_CONFIG": str(cfg),
           "SM_PROFILER_OUTPUT_DIR": str(tmp_path / "out"), "SM_CURRENT_HOST": "algo-2", "RANK": "3",
           **(extra_env or {})}
    (tmp_path / "out").mkdir()
    return subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, env=env, timeout=120)


def test_api_without_torch_rotation_duration_and_failure(tmp_path):
    proc = run_script(tmp_path, {"ProfilingIntervalInMilliseconds": 100, "DisableProfiler": False,
                                 "ProfilingParameters": {"CPUProfilingDuration": "3", "SMPFileRotationSecs": "1"}})
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["settings"] == [100, 3, 1, str(tmp_path / "out"), "algo-2", 3]
    assert out["configured"] is True
    assert out["rotated"] and out["stopped_by_duration"]
    assert out["torch_imported"] is False
    assert out["failed_but_alive"] is True and "profiling stops, training goes on" in proc.stderr
    files = [os.path.relpath(f, tmp_path / "out") for f in out["files"]]
    assert files[:2] == ["algo-2/rank-3/trace-0000.parquet", "algo-2/rank-3/trace-0001.parquet"]
    profile = load_profile(tmp_path / "out" / "algo-2")
    rank = profile.ranks[3]
    names = [rank.names[i] for i in rank["name_id"]]
    for expected in ("outer", "inner", "decorated", "tick"):
        assert expected in names
    # nesting: inner and decorated lie inside outer
    ts, end = rank["ts_ns"], rank["ts_ns"] + rank["dur_ns"]
    o, i, d = names.index("outer"), names.index("inner"), names.index("decorated")
    assert ts[o] <= ts[i] <= ts[d] and end[d] <= end[i] <= end[o]


def test_disabled_profiler_writes_nothing(tmp_path):
    proc = run_script(tmp_path, {"ProfilingIntervalInMilliseconds": 100, "DisableProfiler": True,
                                 "ProfilingParameters": {"CPUProfilingDuration": "3", "SMPFileRotationSecs": "1"}})
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["files"] == [] and not out["rotated"] and out["configured"] is False


def test_imports_stay_light():
    code = ("import sys, profiler, profiler.cli, profiler.loader, profiler.schema, profiler.analysis, profiler.api; "
            "bad = [m for m in ('torch', 'tensorflow', 'transformers', 'pandas') if m in sys.modules]; "
            "print(bad); sys.exit(1 if bad else 0)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    assert proc.returncode == 0, proc.stdout + proc.stderr


SPAN_CAP = textwrap.dedent(r'''
    import json, sys
    import sagelaunch.profiler as smprof
    from sagelaunch.profiler import api
    api.MAX_SPANS_PER_WINDOW = 1000  # the real cap is 50,000; the rule is the same
    smprof.configure(smprof.Config(output_dir=sys.argv[1], host="algo-1", rank=0))
    smprof.start_profiling()
    held = []
    for i in range(2500):
        with smprof.annotate("tick"):
            pass
        held.append(len(api.SMProfiler.instance()._recorder.spans))
    smprof.stop_profiling()
    print(json.dumps({"files": len(api.SMProfiler.instance().files), "most_held": max(held)}))
''')


def test_a_window_ends_when_it_holds_too_many_spans(tmp_path):
    """Short steps in a long window (SMPFileRotationSecs defaults to 600 s): memory stays bounded by the span cap."""
    _, out = run_profiled_script(SPAN_CAP, tmp_path)
    assert out == {"files": 3, "most_held": 999}
    rank = load_profile(tmp_path / "algo-1").ranks[0]
    assert [rank.names[i] for i in rank["name_id"]].count("tick") == 2500
