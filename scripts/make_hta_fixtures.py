"""Compute HTA 0.5 reference numbers for every trace in tests/data/traces once, and store them as test fixtures.

Run with the separate HTA environment (it pins its own pandas/numpy):

    python3 -m venv .venv-hta && .venv-hta/bin/pip install holistictraceanalysis==0.5.0
    .venv-hta/bin/python scripts/make_hta_fixtures.py [TRACES_DIR] [OUT_JSON]

For each trace file (loaded alone, as one rank) and for the two sampled ranks loaded together, it records
get_temporal_breakdown, get_gpu_kernel_breakdown(include_memory_kernels=True)'s kernel-type sums and
get_cuda_kernel_launch_stats' count and mean launch delay, get_idle_time_breakdown's idle time per stream and
category (host_wait, kernel_wait, other), get_comm_comp_overlap's percentage and get_queue_length_summary's count, mean and max per stream. Traces HTA
cannot analyse get {"error": "..."}. "trace_diff": TraceDiff.compare_traces of the sampled rank 0 (control) against
rank 1 (test), GPU kernels over every iteration.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def analyse(files: list[Path]) -> dict:
    from hta.trace_analysis import TraceAnalysis

    with tempfile.TemporaryDirectory() as tmp:
        for f in files:
            os.symlink(f, Path(tmp) / f.name)
        try:
            ta = TraceAnalysis(trace_dir=tmp)
        except Exception as exc:  # noqa: BLE001 — record what HTA does with bad input
            return {"error": f"load: {type(exc).__name__}: {exc}"}
        out: dict = {"ranks": {}}
        ranks = sorted(ta.t.traces)
        try:
            tb = ta.get_temporal_breakdown(visualize=False)
            for _, row in tb.iterrows():
                out["ranks"].setdefault(str(int(row["rank"])), {})["temporal"] = {
                    "idle_us": float(row["idle_time(us)"]),
                    "compute_us": float(row["compute_time(us)"]),
                    "non_compute_us": float(row["non_compute_time(us)"]),
                    "span_us": float(row["kernel_time(us)"]),
                }
        except Exception as exc:  # noqa: BLE001
            out["temporal_error"] = f"{type(exc).__name__}: {exc}"
        try:
            from hta.analyzers.breakdown_analysis import BreakdownAnalysis
            from hta.utils.utils import get_kernel_type

            sym = ta.t.symbol_table.get_sym_table()
            types = ["COMPUTATION", "COMMUNICATION", "MEMORY"]
            for rank in ranks:  # the public call sums ranks; keep per-rank sums as it computes them
                df = ta.t.get_trace(rank)
                gpu = df[df["stream"].ne(-1)].copy()
                gpu["kernel_type"] = gpu["name"].map(lambda x: get_kernel_type(sym[x]))
                kt = BreakdownAnalysis._get_gpu_kernel_type_time(gpu, types)
                out["ranks"].setdefault(str(rank), {})["kernel_types"] = {
                    r["kernel_type"]: float(r["sum"]) for _, r in kt.iterrows()
                }
            kb, _ = ta.get_gpu_kernel_breakdown(visualize=False, include_memory_kernels=True)
            out["kernel_types_all_ranks"] = {r["kernel_type"]: float(r["sum"]) for _, r in kb.iterrows()}
        except Exception as exc:  # noqa: BLE001
            out["kernel_types_error"] = f"{type(exc).__name__}: {exc}"
        try:
            ls = ta.get_cuda_kernel_launch_stats(ranks=ranks, visualize=False)
            for rank, df in ls.items():
                out["ranks"].setdefault(str(rank), {})["launch"] = {
                    "count": int(len(df)),
                    "mean_launch_delay_us": float(df["launch_delay"].mean()) if len(df) else None,
                }
        except Exception as exc:  # noqa: BLE001
            out["launch_error"] = f"{type(exc).__name__}: {exc}"
        try:
            overlap = ta.get_comm_comp_overlap(visualize=False)
            for _, row in overlap.iterrows():
                pct = float(row["comp_comm_overlap_pctg"])  # NaN without communication: null
                out["ranks"].setdefault(str(int(row["rank"])), {})["comp_comm_overlap_pctg"] = pct if pct == pct else None
        except Exception as exc:  # noqa: BLE001
            out["overlap_error"] = f"{type(exc).__name__}: {exc}"
        for rank in ranks:
            try:
                idle, _ = ta.get_idle_time_breakdown(ranks=[rank], visualize=False)
                per_stream: dict = {}
                for _, row in idle.iterrows():
                    per_stream.setdefault(str(int(row["stream"])), {})[f"{row['idle_category']}_us"] = float(row["idle_time"])
                out["ranks"].setdefault(str(rank), {})["idle_breakdown"] = per_stream
            except Exception as exc:  # noqa: BLE001
                out.setdefault("idle_breakdown_error", {})[str(rank)] = f"{type(exc).__name__}: {exc}"
            try:
                q = ta.get_queue_length_summary(ranks=[rank])
                if q is not None:
                    out["ranks"].setdefault(str(rank), {})["queue"] = {
                        str(int(stream)): {"count": int(row[("queue_length", "count")]),
                                           "mean": float(row[("queue_length", "mean")]),
                                           "max": int(row[("queue_length", "max")])}
                        for (_, stream), row in q.iterrows()}
            except Exception as exc:  # noqa: BLE001
                out.setdefault("queue_error", {})[str(rank)] = f"{type(exc).__name__}: {exc}"
        return out


def trace_diff(control: Path, test: Path) -> dict:
    """TraceDiff.compare_traces of two one-rank traces over every iteration, GPU kernels: per name, the counts and
    total durations (µs) of each side."""
    from hta.trace_diff import DeviceType, LabeledTrace, TraceDiff

    with tempfile.TemporaryDirectory() as a, tempfile.TemporaryDirectory() as b:
        os.symlink(control, Path(a) / control.name)
        os.symlink(test, Path(b) / test.name)
        la, lb = LabeledTrace(label="A", trace_dir=a), LabeledTrace(label="B", trace_dir=b)
        comp = TraceDiff.compare_traces(la, lb, control_rank=la.ranks()[0], test_rank=lb.ranks()[0],
                                        control_iteration=la.iterations(), test_iteration=lb.iterations(),
                                        device_type=DeviceType.GPU)
    return {str(name): {"a_count": int(r["A_counts"]), "b_count": int(r["B_counts"]),
                        "a_total_us": float(r["A_total_duration"]), "b_total_us": float(r["B_total_duration"])}
            for name, r in comp.iterrows()}


def main() -> None:
    traces = Path(sys.argv[1]) if len(sys.argv) > 1 else REPO / "tests" / "data" / "traces"
    out = Path(sys.argv[2]) if len(sys.argv) > 2 else REPO / "tests" / "data" / "profiler" / "hta_reference.json"
    logging.disable(logging.CRITICAL)
    import hta

    files = sorted(traces.glob("*.json.gz"))
    result = {"hta_version": getattr(hta, "__version__", "0.5"), "traces": {}}
    for f in files:
        result["traces"][f.name] = analyse([f.resolve()])
        print(f.name, json.dumps(result["traces"][f.name])[:300])
    sampled = [f.resolve() for f in files if f.name.startswith("sampled_rank")]
    if len(sampled) > 1:
        result["traces"]["sampled (2 ranks)"] = analyse(sampled)
        result["trace_diff"] = {"control": sampled[0].name, "test": sampled[1].name,
                                "kernels": trace_diff(sampled[0], sampled[1])}
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1, sort_keys=True) + "\n")
    print("wrote", out)


if __name__ == "__main__":
    main()
