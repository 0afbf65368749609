"""CPU operators in a duty cycle (Config.cpu_ops_steps of every cpu_ops_every_steps): a real training process
records operators in exactly the steps the cycle names, each file says when, the analysis labels operator
figures as sampled, and the findings that read operators or step times are not misled by the sampling."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pyarrow.parquet as pq
import pytest

from sagelaunch.profiler.artifact import read_events
from sagelaunch.profiler.loader import load_profile
from sagelaunch.profiler.schema import META_KEY_META, META_KEY_SCHEMA
from tests.profiler import synthetic as syn
from tests.profiler.conftest import REPO, analysis_json, script_env

LOOP = textwrap.dedent(r'''
    import json, sys, torch
    import sagelaunch.profiler as smprof
    torch.set_num_threads(1)
    model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU(), torch.nn.Linear(8, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    smprof.configure(smprof.Config(output_dir=sys.argv[1], host="algo-1", rank=0, record_cpu_ops=True,
                                   **json.loads(sys.argv[2])))
    smprof.start_profiling()
    for i in range(int(sys.argv[3])):
        with smprof.annotate(f"step_{i}"):
            with smprof.annotate("Forward"):
                loss = model(torch.randn(4, 8)).sum()
            loss.backward()
            opt.step()
            opt.zero_grad()
    smprof.stop_profiling()
    print(len(smprof.SMProfiler.instance().files))
''')


def train(out, steps: int, **config) -> list:
    """Run LOOP for `steps` steps with these Config fields; the rank's trace files, in order (the session counted
    the same files as written)."""
    proc = subprocess.run([sys.executable, "-c", LOOP, str(out), json.dumps(config), str(steps)],
                          capture_output=True, text=True, env=script_env(), timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    files = sorted((out / "algo-1" / "rank-0").glob("trace-*.parquet"))
    assert proc.stdout.split()[-1] == str(len(files)), proc.stdout
    return files


def steps_holding_operators(rank) -> list[int]:
    names = [rank.names[i] for i in rank["name_id"]]
    cats = [rank.cats[i] for i in rank["cat_id"]]
    ops = [int(t) for t, c in zip(rank["ts_ns"], cats) if c == "cpu_op"]
    held = []
    for i, n in enumerate(names):
        if n.startswith("step_"):
            s, e = int(rank["ts_ns"][i]), int(rank["ts_ns"][i] + rank["dur_ns"][i])
            if any(s <= t <= e for t in ops):
                held.append(int(n[5:]))
    return sorted(held)


@pytest.fixture(scope="module")
def sampled(tmp_path_factory):
    out = tmp_path_factory.mktemp("duty")
    return out, train(out, 23, cpu_ops_steps=2, cpu_ops_every_steps=5)


@pytest.mark.slow
def test_operators_are_recorded_in_exactly_the_steps_of_the_cycle(sampled):
    out, files = sampled
    rank = load_profile(out / "algo-1").ranks[0]
    assert steps_holding_operators(rank) == [0, 1, 5, 6, 10, 11, 15, 16, 20, 21]
    names = [rank.names[i] for i in rank["name_id"]]
    assert sorted(int(n[5:]) for n in names if n.startswith("step_")) == list(range(23))  # every step, once
    assert names.count("Forward") == 23 and "aten::linear" in names


@pytest.mark.slow
def test_each_file_says_when_it_recorded_operators(sampled):
    _, files = sampled
    # a window ends when its recorded steps end; the unrecorded steps before them join it: 5 windows + the tail
    assert len(files) == 6
    windows = []
    for f in files:
        md = pq.read_schema(f).metadata
        assert md[META_KEY_SCHEMA] == b"sagelaunch.profile/1"
        meta = json.loads(md[META_KEY_META])
        assert {"rank", "host", "world_size", "kind", "job_settings"} <= set(meta)  # v1's keys stay
        assert meta["cpu_ops"]["steps"] == 2 and meta["cpu_ops"]["every_steps"] == 5
        rank = read_events([f])
        held = steps_holding_operators(rank)
        recorded = meta["cpu_ops"]["recorded_ns"]
        assert len(recorded) == (1 if held else 0), f.name  # the tail (steps 22) recorded none
        windows += recorded
        ops = [int(t) for t, c in zip(rank["ts_ns"], rank["cat_id"]) if rank.cats[c] == "cpu_op"]
        for t in ops:  # every operator lies in its file's recorded range (1 ms: Kineto's clock vs ours)
            assert any(s - 1_000_000 <= t <= e + 1_000_000 for s, e in recorded), (f.name, t, recorded)
    assert windows == sorted(windows) and len(windows) == 5


@pytest.mark.slow
def test_the_analysis_labels_operator_figures_as_sampled(sampled):
    out, _ = sampled
    result = analysis_json(out)
    r = result["ranks"]["0"]
    s = r["cpu_ops_sampled"]
    assert (s["steps"], s["every_steps"], s["windows"], s["recorded_steps"], s["total_steps"]) == (2, 5, 5, 10, 23)
    assert any("recorded in 2 of every 5 steps" in n for n in r["notes"])
    fig = next(f for f in result["figures"] if f["key"] == "cpu_ops_sampled")
    assert "operator figures cover those steps only" in fig["label"] and fig["text"] == "10 steps of 23 in 5 windows"
    assert sum(1 for x in r["steps"]["steps"] if x["cpu_ops_recorded"]) == 10


@pytest.mark.slow
def test_the_steps_run_while_the_writer_converted_a_window_are_marked(sampled):
    out, files = sampled
    busy = [json.loads(pq.read_schema(f).metadata[META_KEY_META]).get("profiler_busy_ns") for f in files]
    assert busy[0] is None and all(len(b) == 1 for b in busy[1:]), busy  # each file: the previous one's write
    spans = [s for b in busy[1:] for s in b]
    rank = load_profile(out / "algo-1").ranks[0]
    names = [rank.names[i] for i in rank["name_id"]]
    overlapping = set()
    for i, n in enumerate(names):  # which steps ran (partly) while the writer worked: timing decides, not the test
        s, e = int(rank["ts_ns"][i]), int(rank["ts_ns"][i] + rank["dur_ns"][i])
        if n.startswith("step_") and any(a < e and s < b for a, b in spans):
            overlapping.add(int(n[5:]))
    steps = analysis_json(out)["ranks"]["0"]["steps"]["steps"]
    assert {x["step"] for x in steps if x.get("profiler_writing")} == overlapping


@pytest.mark.slow
def test_equal_values_record_every_step_and_say_so(tmp_path):
    files = train(tmp_path, 7, cpu_ops_steps=3, cpu_ops_every_steps=3)
    rank = load_profile(tmp_path / "algo-1").ranks[0]
    assert steps_holding_operators(rank) == list(range(7))
    assert not rank.meta.cpu_ops_sampled and rank.meta.cpu_ops["every_steps"] == 3
    assert analysis_json(tmp_path)["ranks"]["0"]["cpu_ops_sampled"] is None
    assert len(files) == 1  # nothing switches: one window (below SMPFileRotationSteps)


@pytest.mark.slow
def test_peak_memory_is_flat_in_the_number_of_steps():
    """The capture benchmark's loop at the default duty cycle: 20 times the steps, the same peak RSS (±12 MB;
    Kineto's windows are 4 steps, not the run)."""
    sys.path.insert(0, str(REPO / "scripts"))
    import tempfile
    from pathlib import Path

    from bench_profiler_capture import run
    from sagelaunch.jobspec.contract import DEFAULT_CPU_OPS_EVERY_STEPS, DEFAULT_CPU_OPS_STEPS

    duty = (DEFAULT_CPU_OPS_STEPS, DEFAULT_CPU_OPS_EVERY_STEPS)
    with tempfile.TemporaryDirectory() as tmp:
        short = run("ours (ops K/N)", 200, Path(tmp), duty)
        long = run("ours (ops K/N)", 4000, Path(tmp), duty)
    assert long["files"] == 21 and short["files"] == 2  # a window per cycle, and the last steps after it
    assert long["peak"] - short["peak"] < 12, (short, long)


SAMPLED = {"steps": 2, "every_steps": 10, "recorded_ns": [[syn.T0, syn.T0 + 200 * syn.MS]]}


def loader_in_first_two_steps(cpu_ops: dict) -> syn.Rank:
    """10 steps of 100 ms; operators recorded in steps 1-2 only, where DataLoader takes 30 ms of each."""
    r = syn.healthy(steps=10)
    r.cpu_ops = cpu_ops
    for i in range(2):
        r.add("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", "cpu_op", syn.T0 + i * 100 * syn.MS,
              30 * syn.MS)
    return r


def test_input_bound_measures_dataloader_operators_over_the_steps_that_recorded_them(tmp_path):
    result = analysis_json(syn.write(tmp_path / "sampled", loader_in_first_two_steps(SAMPLED)))
    found = [f for f in result["findings"] if f["rule"] == "input_bound"]
    assert len(found) == 1 and found[0]["evidence"]["input_wait_share"] == 0.3, found
    assert found[0]["evidence"]["steps"] == 2 and "2 of 10 steps" in found[0]["evidence"]["steps_measured"]
    # the same events without the duty cycle's metadata: 60 ms of 1 s of steps, below the threshold
    plain = analysis_json(syn.write(tmp_path / "plain", loader_in_first_two_steps({})))
    assert not [f for f in plain["findings"] if f["rule"] == "input_bound"]


def slow_recorded_steps(cpu_ops: dict) -> syn.Rank:
    """10 steps; the two whose operators were recorded take 3x as long (Kineto's recording)."""
    r = syn.healthy(steps=10, slow={3: 300.0, 4: 300.0})
    r.cpu_ops = cpu_ops
    at = syn.T0 + 200 * syn.MS  # steps 3 and 4 start after steps 1-2 (100 ms each)
    for i in range(2):
        r.add("aten::linear", "cpu_op", at + i * 300 * syn.MS + syn.MS, syn.MS)
    return r


def test_step_outlier_leaves_out_the_steps_slowed_by_recording_operators(tmp_path):
    cpu_ops = {"steps": 2, "every_steps": 10, "recorded_ns": [[syn.T0 + 200 * syn.MS, syn.T0 + 800 * syn.MS]]}
    result = analysis_json(syn.write(tmp_path / "sampled", slow_recorded_steps(cpu_ops)))
    assert not [f for f in result["findings"] if f["rule"] == "step_outlier"]
    plain = analysis_json(syn.write(tmp_path / "plain", slow_recorded_steps({})))
    assert [f["evidence"]["slow_steps"] for f in plain["findings"] if f["rule"] == "step_outlier"] == [2]


def test_step_outlier_leaves_out_the_steps_run_while_the_profiler_wrote(tmp_path):
    r = syn.healthy(steps=10, slow={3: 300.0, 4: 300.0})
    busy = syn.Rank(events=r.events, profiler_busy_ns=[[syn.T0 + 250 * syn.MS, syn.T0 + 600 * syn.MS]])
    assert not [f for f in analysis_json(syn.write(tmp_path / "busy", busy))["findings"] if f["rule"] == "step_outlier"]
    assert [f["rule"] for f in analysis_json(syn.write(tmp_path / "plain", r))["findings"]] == ["step_outlier"]


def test_an_artifact_without_the_key_reads_as_operators_over_the_whole_trace(tmp_path):
    rank = load_profile(syn.write(tmp_path, loader_in_first_two_steps({}))).ranks[0]
    assert rank.meta.cpu_ops == {} and not rank.meta.cpu_ops_sampled
