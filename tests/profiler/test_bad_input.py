"""Bad input gives a clear error (exit 2, one line naming the file and the problem) or a partial result; never a
traceback. Every case runs through the real CLI in-process (Typer's runner), plus one real subprocess."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from sagelaunch.profiler.cli import profile_app
from tests.profiler.conftest import REPO, TRACES

runner = CliRunner()


def run_cli(*args):
    result = runner.invoke(profile_app, ["analyze", *map(str, args)])
    text = result.output + (result.stderr if result.stderr_bytes is not None else "")
    assert "Traceback" not in text
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, text


@pytest.fixture(scope="module")
def alexnet_doc():
    return json.loads(gzip.decompress((TRACES / "alexnet.pt.trace.json.gz").read_bytes()))


def test_truncated_gzip(tmp_path):
    raw = (TRACES / "alexnet.pt.trace.json.gz").read_bytes()
    bad = tmp_path / "trunc.json.gz"
    bad.write_bytes(raw[: len(raw) // 2])
    code, text = run_cli(bad)
    assert code == 2 and "truncated or corrupt gzip" in text and "trunc.json.gz" in text


def test_corrupt_gzip(tmp_path):
    raw = bytearray((TRACES / "alexnet.pt.trace.json.gz").read_bytes())
    raw[100:140] = b"\x00" * 40
    bad = tmp_path / "corrupt.json.gz"
    bad.write_bytes(bytes(raw))
    code, text = run_cli(bad)
    assert code == 2 and "corrupt" in text


def test_truncated_json(tmp_path):
    raw = gzip.decompress((TRACES / "alexnet.pt.trace.json.gz").read_bytes())
    bad = tmp_path / "cut.json"
    bad.write_bytes(raw[: len(raw) // 3])
    code, text = run_cli(bad)
    assert code == 2 and "not valid JSON" in text


@pytest.mark.parametrize("content, expect", [
    (b"", "empty"),
    (b'{"hello": "world"}', "not a trace"),
    (b"[1, 2, 3]", "not a trace"),
    (b'"just a string"', "not a trace"),
    (b'{"traceEvents": 5}', "not a trace"),
])
def test_not_a_trace(tmp_path, content, expect):
    bad = tmp_path / "x.json"
    bad.write_bytes(content)
    code, text = run_cli(bad)
    assert code == 2 and expect in text


def test_missing_path_and_empty_folder(tmp_path):
    code, text = run_cli(tmp_path / "nope.json")
    assert code == 2 and "no such file" in text
    code, text = run_cli(tmp_path)
    assert code == 2 and "no traces found" in text


def test_empty_trace_gives_an_empty_rank(tmp_path):
    f = tmp_path / "empty.json"
    f.write_text('{"traceEvents": []}')
    code, text = run_cli(f, "--json")
    assert code == 0
    rank = json.loads(text)["ranks"]["0"]
    assert rank["events"] == 0 and rank["temporal"] is None and rank["kernel_types"] is None


def test_cpu_only_trace_holds_the_cpu_sections():
    code, text = run_cli(TRACES / "cpu_only.pt.trace.json.gz", "--json")
    assert code == 0
    rank = json.loads(text)["ranks"]["34"]  # distributedInfo.rank
    assert rank["temporal"] is None and rank["kernel_types"] is None and rank["launch"]["count"] == 0
    assert rank["cpu"]["active_us"] > 0 and rank["steps"]["count"] == 1
    assert any("no GPU activity" in n for n in rank["notes"])


def test_rocm_trace():
    code, text = run_cli(TRACES / "mi250_rocm.pt.trace.json.gz", "--json")
    assert code == 0
    rank = json.loads(text)["ranks"]["0"]
    assert rank["temporal"]["span_us"] > 0 and rank["memory_ops"]["HtoD"]["count"] >= 1


def test_events_without_correlation(tmp_path, alexnet_doc):
    doc = json.loads(json.dumps(alexnet_doc))
    for e in doc["traceEvents"]:
        (e.get("args") or {}).pop("correlation", None)
    f = tmp_path / "nocorr.json"
    f.write_text(json.dumps(doc))
    code, text = run_cli(f, "--json")
    assert code == 0
    rank = json.loads(text)["ranks"]["0"]
    assert rank["launch"]["count"] == 0 and any("does not link kernel launches to kernels" in n for n in rank["notes"])
    assert rank["kernels"]["count"] == 79 and rank["temporal"]["span_us"] > 0


def test_weird_field_types_do_not_crash(tmp_path, alexnet_doc):
    doc = json.loads(json.dumps(alexnet_doc))
    doc["traceEvents"][5]["args"] = "not a dict"
    doc["traceEvents"][6]["pid"] = "Spans"
    doc["traceEvents"][7]["name"] = ["a", "list"]
    doc["traceEvents"][8]["cat"] = 5
    f = tmp_path / "weird.json"
    f.write_text(json.dumps(doc))
    code, text = run_cli(f, "--json")
    assert code == 0 and json.loads(text)["ranks"]["0"]["kernels"]["count"] == 79
    doc["traceEvents"][9]["ts"] = "later"
    f.write_text(json.dumps(doc))
    code, text = run_cli(f)
    assert code == 2 and "not numbers" in text


def test_ranks_that_disagree(tmp_path, alexnet_doc):
    doc = json.loads(json.dumps(alexnet_doc))
    (tmp_path / "a.json").write_text(json.dumps(doc))
    (tmp_path / "b.json").write_text(json.dumps(doc))  # the same rank twice
    doc["distributedInfo"] = {"rank": 7, "world_size": 16}
    (tmp_path / "c.json").write_text(json.dumps(doc))
    (tmp_path / "d.json.gz").write_bytes(b"\x1f\x8bgarbage")
    (tmp_path / "hyperparameters.json").write_text('{"epochs": "1"}')  # job folders hold config JSON too
    code, text = run_cli(tmp_path, "--json")
    assert code == 0
    result = json.loads(text)
    assert sorted(result["ranks"], key=int) == ["0", "1", "7"]
    warnings = " ".join(result["warnings"])
    assert "both say rank 0" in warnings and "d.json.gz" in warnings
    assert "ignored 1 JSON files that are not traces (hyperparameters.json)" in warnings


def test_real_process_prints_one_json_object_or_one_error_line(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    ok = subprocess.run([sys.executable, "-m", "sagelaunch.profiler.cli", "analyze", str(TRACES / "alexnet.pt.trace.json.gz"),
                         "--json"], capture_output=True, text=True, env=env, timeout=120)
    assert ok.returncode == 0, ok.stderr
    result = json.loads(ok.stdout)
    rank = result["ranks"]["0"]
    assert set(rank["temporal"]) >= {"idle_us", "compute_us", "non_compute_us", "span_us"}
    assert {"name", "total_us", "count"} <= set(rank["top_kernels"][0])
    assert {"count", "mean_launch_delay_us"} <= set(rank["launch"])
    bad = tmp_path / "bad.json.gz"
    bad.write_bytes(b"\x1f\x8b\x08\x00")
    err = subprocess.run([sys.executable, "-m", "sagelaunch.profiler.cli", "analyze", str(bad)], capture_output=True, text=True,
                         env=env, timeout=120)
    assert err.returncode == 2 and "Traceback" not in err.stderr and err.stderr.startswith("error: ")


def test_sagelaunch_profile_analyze_is_registered():
    from sagelaunch.cli import app

    result = runner.invoke(app, ["profile", "analyze", str(TRACES / "sampled_rank1.pt.trace.json.gz"), "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["ranks"]["1"]["temporal"]["span_us"] > 0


def test_readable_summary_without_json():
    code, text = run_cli(TRACES / "sampled_rank0.pt.trace.json.gz")
    assert code == 0
    for heading in ("GPU idle within the GPU span", "GPU time by kernel type", "Top kernels", "COMMUNICATION",
                    "Mean wait from the end of a kernel launch call", "Step time", "Findings (", "fix:"):
        assert heading in text, heading
    assert "correlation" not in text and "events with a stream" not in text  # no jargon for users


def test_fast_path_and_typer_agree(tmp_path):
    """`sagelaunch profile analyze` skips Typer's parsing for plain command lines; everything else goes to Typer."""
    from sagelaunch.profiler.cli import fast_analyze

    env = {**os.environ, "PYTHONPATH": str(REPO)}
    trace = str(TRACES / "sampled_rank0.pt.trace.json.gz")
    fast = subprocess.run([sys.executable, "-m", "sagelaunch.cli", "profile", "analyze", trace, "--top", "3", "--json"],
                          capture_output=True, text=True, env=env, timeout=120)
    assert fast.returncode == 0, fast.stderr
    code, text = run_cli(trace, "--top", "3", "--json")  # Typer's own parsing, in-process
    assert code == 0 and json.loads(fast.stdout)["ranks"] == json.loads(text)["ranks"]
    assert len(json.loads(fast.stdout)["ranks"]["0"]["top_kernels"]) == 3
    for argv in (["profile", "analyze", "--help"], ["profile", "analyze", trace, "--top", "0"],
                 ["profile", "analyze", trace, "--bogus"], ["profile", "analyze"], ["profile", "report", trace]):
        assert fast_analyze(argv) is False  # left to Typer, which explains the mistake
    helped = subprocess.run([sys.executable, "-m", "sagelaunch.cli", "profile", "analyze", "--help"],
                            capture_output=True, text=True, env=env, timeout=120)
    assert helped.returncode == 0 and "--json" in helped.stdout


def test_help_names_flags_without_type_noise():
    """--help shows what an option takes (a number, a range), never "<bool>" on a flag or "<str>" on a path."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "COLUMNS": "160"}
    for cmd in ("analyze", "report", "timeline", "export", "ui"):
        out = subprocess.run([sys.executable, "-m", "sagelaunch.cli", "profile", cmd, "--help"], capture_output=True,
                             text=True, env=env, timeout=120)
        assert out.returncode == 0, out.stderr
        assert "<bool>" not in out.stdout and "<str>" not in out.stdout, (cmd, out.stdout)
        assert "--help" in out.stdout
    assert "<int range>" in subprocess.run([sys.executable, "-m", "sagelaunch.cli", "profile", "analyze", "--help"],
                                           capture_output=True, text=True, env=env, timeout=120).stdout


# --- hostile input: times, sizes and nesting a trace cannot hold -----------------------------------------------

def _kernel(ts, dur, **args) -> dict:
    return {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": ts, "dur": dur,
            "args": {"stream": 7, "correlation": 1, **args}}


def test_negative_durations_are_skipped_and_counted(tmp_path):
    f = tmp_path / "neg.json"
    events = [_kernel(0, 10), _kernel(10, -5), _kernel(12, -1), _kernel(20, 10)]
    f.write_text(json.dumps({"traceEvents": events}))
    code, text = run_cli(f, "--json")
    assert code == 0
    result = json.loads(text)
    temporal = result["ranks"]["0"]["temporal"]
    assert temporal["compute_pct"] == pytest.approx(66.67) and temporal["idle_pct"] == pytest.approx(33.33)
    assert any("skipped 2 event(s) with a negative duration" in w for w in result["warnings"]), result["warnings"]


@pytest.mark.parametrize("ts, dur, field", [(0, 1e308, "dur"), (9e18, 5, "ts"), (-9e18, 5, "ts")])
def test_times_beyond_int64_nanoseconds_are_refused(tmp_path, ts, dur, field):
    f = tmp_path / "huge.json"
    f.write_text(json.dumps({"traceEvents": [_kernel(0, 10), _kernel(ts, dur)]}))
    code, text = run_cli(f)
    assert code == 2 and f"has {field} = " in text and "huge.json" in text and "out of range" in text


def test_args_nested_too_deep_is_a_clear_error(tmp_path):
    f = tmp_path / "deep.json"
    deep = "[" * 1100 + "]" * 1100
    f.write_text('{"traceEvents": [%s]}' % json.dumps(_kernel(0, 10, x="DEEP")).replace('"DEEP"', deep))
    code, text = run_cli(f)
    assert code == 2 and "nested deeper" in text and "deep.json" in text


def _gzip_of_spaces(path, megabytes: int) -> None:
    import zlib

    c = zlib.compressobj(1, zlib.DEFLATED, 31)
    block = b" " * (1 << 20)
    with open(path, "wb") as out:
        out.write(c.compress(b'{"traceEvents": ['))
        for _ in range(megabytes):
            out.write(c.compress(block))
        out.write(c.compress(b"]}") + c.flush())


def test_decompressed_size_is_capped_and_the_cap_can_be_raised(tmp_path, monkeypatch):
    bomb = tmp_path / "bomb.json.gz"
    _gzip_of_spaces(bomb, 8)
    monkeypatch.setenv("SAGELAUNCH_PROFILE_MAX_JSON_BYTES", "4M")
    code, text = run_cli(bomb)
    assert code == 2 and "more than 4,194,304 bytes" in text and "SAGELAUNCH_PROFILE_MAX_JSON_BYTES" in text
    plain = tmp_path / "plain.json"
    plain.write_bytes(gzip.decompress(bomb.read_bytes()))
    code, text = run_cli(plain)  # the same cap for a file that is not compressed
    assert code == 2 and "the file holds more than" in text
    monkeypatch.setenv("SAGELAUNCH_PROFILE_MAX_JSON_BYTES", "lots")
    code, text = run_cli(bomb)
    assert code == 2 and "'lots' is not a positive size" in text
    monkeypatch.setenv("SAGELAUNCH_PROFILE_MAX_JSON_BYTES", "16M")
    code, text = run_cli(bomb, "--json")
    assert code == 0 and json.loads(text)["ranks"]["0"]["events"] == 0


def test_a_gzip_bomb_is_stopped_before_it_takes_the_memory(tmp_path):
    """256 MB of JSON from a ~1 MB file, 8 MB cap: the reader stops early (peak RSS of a real process)."""
    bomb = tmp_path / "bomb.json.gz"
    _gzip_of_spaces(bomb, 256)
    # VmHWM: this process's own peak (ru_maxrss would include pytest's memory at fork time)
    probe = ("import re, sys\n"
             "from sagelaunch.profiler.loader import load_profile\n"
             "try:\n    load_profile(sys.argv[1])\nexcept ValueError as e:\n    print(e)\n"
             "print(int(re.search(r'VmHWM:\\s+(\\d+)', open('/proc/self/status').read()).group(1)) // 1024)\n")
    env = {**os.environ, "PYTHONPATH": str(REPO), "SAGELAUNCH_PROFILE_MAX_JSON_BYTES": "8M"}
    out = subprocess.run([sys.executable, "-c", probe, str(bomb)], capture_output=True, text=True, env=env,
                         timeout=300)
    message, peak_mb = out.stdout.strip().rsplit("\n", 1)
    assert "more than 8,388,608 bytes" in message, out.stderr
    assert int(peak_mb) < 200, peak_mb  # the whole expansion would be 256 MB more


def test_fast_path_imports_only_what_the_analysis_uses():
    """`sagelaunch profile analyze TRACE --json` on a Kineto trace: no Typer, pyarrow, numpy.ma, hashlib or
    statistics (each 3-100 ms of a ~0.1 s command), and OpenBLAS started with one thread."""
    probe = ("import atexit, os, sys\n"
             "atexit.register(lambda: print('\\nLOADED', sorted(m for m in ('typer', 'pyarrow', 'numpy.ma', 'hashlib',"
             " 'statistics', 'pandas') if m in sys.modules), os.environ.get('OPENBLAS_NUM_THREADS'), file=sys.stderr))\n"
             "from sagelaunch.cli import main\n"
             "sys.argv = ['sagelaunch', *sys.argv[1:]]\nmain()\n")
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    env["PYTHONPATH"] = str(REPO)
    for trace in ("sampled_rank0.pt.trace.json.gz", "v100_rank0.pt.trace.json.gz"):
        proc = subprocess.run([sys.executable, "-c", probe, "profile", "analyze", str(TRACES / trace), "--json"],
                              capture_output=True, text=True, env={**env, "SAGELAUNCH_PROFILE_CACHE": "0"}, timeout=120)
        assert proc.returncode == 0, proc.stderr
        assert json.loads(proc.stdout)["ranks"]["0"]["temporal"]
        assert proc.stderr.strip().splitlines()[-1] == "LOADED [] 1", proc.stderr
