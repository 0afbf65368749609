"""Every GPU figure sagelaunch promises, measured in one run: one JSON of figures and a printed summary.

    bash scripts/gpu_check.sh [--out FILE] [--cpu] [--batch N]     (the shell script sets up paths and wheels)

Sections (each isolated: one failing does not stop the others; the JSON is rewritten after each):
  roberta        bench_roberta.py at roberta-base size, seq 128: eager fp32 vs torch.compile + bf16 + fused AdamW —
                 samples/s, speed-up, MFU against the GPU's dense bf16 peak; a few optimized steps under our
                 profiler then say where the time goes
  profiler       a local profiled job (instance_type="local_gpu", ProfilerConfig(profile_params=Profiler(...))):
                 what its artifact holds (kernels, memcpy/memset, launches joined by correlation, NVML samples),
                 `profile analyze` vs HTA 0.5 on one Kineto trace of the job, the profiler's overhead on step time
  modelparallel  a world of one over NCCL (smp.init + DistributedModel + smp.step); offload_activations: peak GPU
                 memory and step time with and without (and with activation checkpointing)
Without CUDA (or with --cpu) each section runs its CPU path at tiny sizes: its GPU figures stay null and "skipped"
says why; "run" holds what did run, as measured. Nothing is estimated or carried over from elsewhere.
"""

from __future__ import annotations

import argparse
import datetime as dt
import gc
import json
import logging
import os
import platform
import sys
import tempfile
import time
import traceback
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

REL = 0.005  # `profile analyze` agrees with HTA within 0.5%
GOALS = {"speedup": 2.0, "mfu_optimized": 0.40, "overhead_pct": 1.5}
ROBERTA_FIGURES = ("batch", "eager_fp32_samples_per_s", "optimized_samples_per_s", "speedup", "mfu_eager",
                   "mfu_optimized", "peak_tflops", "peak_source", "eager_peak_mem_gb", "optimized_peak_mem_gb")
PROFILER_FIGURES = ("kernels", "memcpy", "memset", "launches_correlated", "nvml_gpu_util_samples",
                    "hta_agreement", "hta_max_rel_diff", "unprofiled_step_ms", "profiled_step_ms", "overhead_pct")
MP_VARIANTS = {  # name: (mp_parameters, checkpoint the encoder layers)
    "plain": ({}, False),
    "offload": ({"offload_activations": True}, False),
    "checkpoint": ({}, True),
    "checkpoint_offload": ({"offload_activations": True}, True),
}
MP_FIGURES = ("nccl_world_of_one", *(f"{v}_{k}" for v in MP_VARIANTS for k in ("peak_mem_gb", "step_ms")),
              "offload_peak_ratio", "checkpoint_offload_peak_ratio")


class Env:
    """What this machine offers: whether GPU figures can be measured, and if not, why."""

    def __init__(self, force_cpu: bool, batch: int | None):
        import torch

        self.cuda = torch.cuda.is_available()
        if force_cpu:
            self.skip = "--cpu given: the CPU paths only, at tiny sizes"
        elif not self.cuda:
            self.skip = f"no CUDA device (torch {torch.__version__}: torch.cuda.is_available() is False)"
        else:
            self.skip = None
        self.gpu = torch.cuda.get_device_name() if self.cuda else None
        self.batch = batch or 256  # roberta-base, seq 128: tens of GB in eager fp32, inside an H200's 141 GB

    def skipped(self, what: str) -> str | None:
        return None if self.cuda else f"{self.skip}; {what}"


def analysis_document(path) -> dict:
    """`profile analyze --json`'s document of a profile (the typed records as plain values, for the report)."""
    import msgspec

    from sagelaunch.profiler.analysis import analyze

    return msgspec.to_builtins(analyze(path))

def gib(n: int) -> float:
    return round(n / 2**30, 3)


def free_gpu() -> None:
    import torch

    gc.collect()
    if torch.cuda.is_available():
        torch.cuda.empty_cache()


# ----- roberta
def roberta(entry: dict, env: Env, work: Path) -> None:
    from scripts import bench_roberta

    entry["figures"] = dict.fromkeys(ROBERTA_FIGURES)
    if env.cuda:  # the largest of these batches that fits
        argv = ["--size", "base", "--seq", "128", "--steps", "20", "--warmup", "5"]
        batches = (env.batch, env.batch // 2, env.batch // 4)
    else:  # aot_eager: torch.compile in the loop without minutes of C++ code generation on a small CPU
        argv, batches = ["--size", "tiny", "--seq", "32", "--steps", "3", "--warmup", "1",
                         "--compile-backend", "aot_eager"], (8,)
    entry["skipped"] = env.skipped("ran bench_roberta.py's tiny CPU path instead (its figures are in run)")
    import torch
    import torch._dynamo

    out_of_memory = []
    for batch in batches:
        profile_dir = work / f"roberta-profile-batch{batch}"
        try:
            report = bench_roberta.main(argv + ["--batch", str(batch), "--profile-dir", str(profile_dir),
                                                "--profile-steps", "3"])
            break
        except torch.OutOfMemoryError:
            out_of_memory.append(batch)
        finally:
            torch._dynamo.reset()  # the compiled graph and its buffers go before the next try or section
            free_gpu()
    else:
        raise RuntimeError(f"roberta-base ran out of GPU memory at batches {out_of_memory}")
    report["out_of_memory_batches"] = out_of_memory
    eager, optimized = report["results"]
    rank = next(iter(analysis_document(profile_dir)["ranks"].values()))
    report["where_time_goes"] = {
        "profiled_steps": (rank["steps"] or {}).get("count", 0),
        "temporal": rank["temporal"], "kernel_types": rank["kernel_types"],
        "top_kernels": [{k: t[k] for k in ("name", "total_us", "count")} for t in (rank["top_kernels"] or [])[:5]],
        "notes": rank["notes"],
    }
    entry["run"] = report
    if env.cuda:
        entry["figures"].update(
            batch=report["batch"], eager_fp32_samples_per_s=eager["samples_per_s"],
            optimized_samples_per_s=optimized["samples_per_s"], speedup=report["speedup"], mfu_eager=eager["mfu"],
            mfu_optimized=optimized["mfu"], peak_tflops=report["peak_tflops"], peak_source=report["peak_source"],
            eager_peak_mem_gb=eager["peak_mem_gb"], optimized_peak_mem_gb=optimized["peak_mem_gb"])


# ----- profiler
def profiled_job(entry: dict, env: Env, work: Path) -> None:
    from sagelaunch.estimators import PyTorch
    from sagelaunch.profiler_config import Profiler, ProfilerConfig

    entry["figures"] = dict.fromkeys(PROFILER_FIGURES)
    out_dir = work / "job"
    sizes = (dict(size="base", seq=128, batch=64, steps=10, rounds=3, kineto_steps=3) if env.cuda else
             dict(size="tiny", seq=32, batch=8, steps=3, rounds=2, kineto_steps=2))
    estimator = PyTorch(
        entry_point="gpu_check_job.py", source_dir=str(REPO / "scripts"), framework_version="2.0.0",
        py_version="py310", instance_type="local_gpu" if env.cuda else "local",
        hyperparameters={**sizes, "out_dir": str(out_dir)}, output_path=str(work / "job-output"),
        profiler_config=ProfilerConfig(system_monitor_interval_millis=100,
                                       profile_params=Profiler(cpu_profiling_duration=600, file_rotation_interval=600)),
        base_job_name="gpu-check", max_run=360, ignore_patterns=["sentiment_data", "*.ipynb"],
    )
    job = estimator.fit(wait=True, logs=False)  # raises with the job's last log lines if it fails
    timings = json.loads((out_dir / "timings.json").read_text())
    artifact = analysis_document(job.profiler_output)
    rank = artifact["ranks"]["0"]
    activity = rank["gpu_activity"]
    host_metrics = {h: v["metrics"] for h, v in artifact["hosts"].items()}
    medians = timings["median_step_s"]
    overhead = 100 * (medians["profiled"] / medians["unprofiled"] - 1)
    entry["run"] = {
        "job": job.name, "instance_type": "local_gpu" if env.cuda else "local", "profile": job.profiler_output,
        "device": timings["device"], "sizes": sizes, "steps_per_mode": timings["steps_per_mode"],
        "median_step_ms": {k: 1e3 * v for k, v in medians.items()}, "overhead_pct": overhead,
        "artifact": {"events": rank["events"], "steps": (rank["steps"] or {}).get("count", 0),
                     "annotations": sorted({a["name"] for a in rank["annotations"] if not a["name"].startswith("step_")}),
                     "gpu_activity": activity, "launch_count": rank["launch"]["count"],
                     "counter_samples": {h: {m: v["samples"] for m, v in ms.items()} for h, ms in host_metrics.items()},
                     "notes": rank["notes"]},
    }
    entry["skipped"] = env.skipped("no kernels, memcpy/memset, launches or NVML samples to capture, and no GPU trace "
                                   "for HTA; the CPU job's step overhead and artifact are in run")
    if not env.cuda:
        return
    nvml = sum(ms.get("gpu_util", {}).get("samples", 0) for ms in host_metrics.values())
    entry["figures"].update(
        kernels=activity.get("kernel", {}).get("count", 0), memcpy=activity.get("memcpy", {}).get("count", 0),
        memset=activity.get("memset", {}).get("count", 0), launches_correlated=rank["launch"]["count"],
        nvml_gpu_util_samples=nvml, unprofiled_step_ms=1e3 * medians["unprofiled"],
        profiled_step_ms=1e3 * medians["profiled"], overhead_pct=overhead)
    entry["run"]["hta"] = hta = compare_with_hta(Path(timings["kineto_trace"]))
    if "skipped" in hta:
        entry["skipped"] = f"HTA comparison: {hta['skipped']}"
    else:
        entry["figures"].update(hta_agreement=not hta["mismatches"], hta_max_rel_diff=hta["max_rel_diff"])


def compare_with_hta(trace: Path) -> dict:
    """`profile analyze` (our analysis) and HTA 0.5 (make_hta_fixtures.py's calls) on the same Kineto trace."""
    try:
        import hta  # noqa: F401
    except ImportError as err:
        return {"skipped": f"HTA is not importable ({err}); carry its wheel (scripts/gpu_wheels.sh)"}
    from scripts.make_hta_fixtures import analyse as hta_analyse

    logging.disable(logging.INFO)  # HTA logs every parsing stage
    try:
        theirs = hta_analyse([trace.resolve()])  # linked from a temporary folder: an absolute path
    finally:
        logging.disable(logging.NOTSET)
    if "error" in theirs:
        return {"skipped": f"HTA could not load the trace: {theirs['error']}"}
    errors = {k: v for k, v in theirs.items() if k.endswith("_error")}
    result = agreement(next(iter(analysis_document(trace)["ranks"].values())), next(iter(theirs["ranks"].values())))
    result["mismatches"] += list(errors)
    return {**result, "hta_errors": errors}


def agreement(ours: dict, ref: dict) -> dict:
    """Temporal breakdown, kernel-type sums, launch count and mean launch delay of one rank, each within REL of
    HTA's (`ref`: one rank of make_hta_fixtures.analyse)."""
    pairs = [(f"temporal.{k}", (ours["temporal"] or {}).get(k), v) for k, v in ref.get("temporal", {}).items()]
    pairs += [(f"kernel_types.{k}", (ours["kernel_types"] or {}).get(k), v)
              for k, v in ref.get("kernel_types", {}).items()]
    launch = ref.get("launch", {})
    pairs += [("launch.count", ours["launch"]["count"], launch.get("count")),
              ("launch.mean_launch_delay_us", ours["launch"]["mean_launch_delay_us"], launch.get("mean_launch_delay_us"))]
    rows, mismatches, worst = {}, [], 0.0
    for key, mine, their in pairs:
        both = mine is not None and their is not None
        rel = abs(mine - their) / max(abs(their), 1.0) if both else None
        rows[key] = {"ours": mine, "hta": their, "rel_diff": rel}
        worst = max(worst, rel or 0.0)
        if (rel is not None and rel > REL) or (not both and mine != their):  # one side has no value
            mismatches.append(key)
    return {"compared": rows, "mismatches": mismatches, "max_rel_diff": worst}


# ----- modelparallel
def modelparallel(entry: dict, env: Env, work: Path) -> None:
    import torch
    import torch.distributed as dist

    import sagelaunch.modelparallel as smp
    from sagelaunch.modelparallel.core import state
    from scripts.bench_modelparallel import batch, make_step, time_steps
    from scripts.bench_roberta import build_model

    entry["figures"] = dict.fromkeys(MP_FIGURES)
    size, seq, n, steps = ("base", 128, 64, 8) if env.cuda else ("tiny", 32, 8, 2)
    run: dict = {"size": size, "seq": seq, "batch": n, "timed_steps": steps, "variants": {}}
    entry["run"] = run
    step_fn = make_step()
    for name, (cfg, checkpoint) in MP_VARIANTS.items():
        smp.init(cfg)  # drops smp's hold on the previous variant's model and optimizer
        free_gpu()
        model = smp.DistributedModel(build_model(size, seq, "cpu"))
        if checkpoint:
            smp.set_activation_checkpointing(model.get_module().roberta.encoder.layer, strategy="each")
        opt = smp.DistributedOptimizer(torch.optim.AdamW(model.parameters(), lr=1e-5, fused=env.cuda or None))
        ids, mask, y = (t.to(state.device) for t in batch(n, seq))
        if env.cuda:
            torch.cuda.reset_peak_memory_stats()
        step_s = time_steps(model, opt, step_fn, ids, mask, y, steps)
        result = {"step_ms": 1e3 * step_s, "steps": steps + 2, "offload_stats": model.offload_stats,
                  "backend": dist.get_backend(), "world_size": dist.get_world_size()}
        if env.cuda:
            result.update(peak_mem_gb=gib(torch.cuda.max_memory_allocated()),
                          resident_after_step_gb=gib(torch.cuda.memory_allocated()))
            entry["figures"][f"{name}_peak_mem_gb"] = result["peak_mem_gb"]
            entry["figures"][f"{name}_step_ms"] = result["step_ms"]
        run["variants"][name] = result
        del model, opt
    run["backend"], run["world_size"] = dist.get_backend(), dist.get_world_size()
    smp.shutdown()
    free_gpu()
    entry["skipped"] = env.skipped(f"a world of one over {run['backend']} on CPU ran instead (step times and offload "
                                   "schedules in run); no GPU memory to measure")
    if env.cuda:
        f = entry["figures"]
        f["nccl_world_of_one"] = run["backend"] == "nccl" and run["world_size"] == 1
        f["offload_peak_ratio"] = f["offload_peak_mem_gb"] / f["plain_peak_mem_gb"]
        f["checkpoint_offload_peak_ratio"] = f["checkpoint_offload_peak_mem_gb"] / f["checkpoint_peak_mem_gb"]


SECTIONS = {"roberta": roberta, "profiler": profiled_job, "modelparallel": modelparallel}


def goals(report: dict) -> dict:
    fig = {name: s.get("figures", {}) for name, s in report["sections"].items()}
    speedup = fig.get("roberta", {}).get("speedup")
    mfu = fig.get("roberta", {}).get("mfu_optimized")
    overhead = fig.get("profiler", {}).get("overhead_pct")
    agree = fig.get("profiler", {}).get("hta_agreement")
    return {
        "speedup >= 2x": None if speedup is None else speedup >= GOALS["speedup"],
        "MFU >= 40%": None if mfu is None else mfu >= GOALS["mfu_optimized"],
        "profiler overhead <= 1.5%": None if overhead is None else overhead <= GOALS["overhead_pct"],
        "analyze agrees with HTA within 0.5%": agree,
    }


def write(report: dict, out: Path) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(out.suffix + ".tmp")
    tmp.write_text(json.dumps(report, indent=1, default=str) + "\n")
    tmp.replace(out)


def summary(report: dict) -> str:
    lines = [f"gpu_check {report['date']}  mode={report['mode']}  GPU={report['gpu'] or '-'}  "
             f"torch {report['torch']}  CUDA {report['cuda'] or '-'}"]
    for name, s in report["sections"].items():
        status = "ERROR" if s.get("error") else ("SKIPPED GPU figures" if s.get("skipped") else "measured")
        lines.append(f"[{name}] {status} ({s.get('seconds', 0):.0f} s)")
        if s.get("skipped"):
            lines.append(f"    skipped: {s['skipped']}")
        if s.get("error"):
            lines.append("    error: " + s["error"].strip().splitlines()[-1])
        for key, value in s.get("figures", {}).items():
            if value is not None:
                lines.append(f"    {key}: {round(value, 4) if isinstance(value, float) else value}")
        where = s.get("run", {}).get("where_time_goes") or {}
        if where.get("temporal"):
            t = where["temporal"]
            lines.append(f"    where the time goes ({where['profiled_steps']} profiled optimized steps): compute "
                         f"{t['compute_pct']}%, non-compute {t['non_compute_pct']}%, idle {t['idle_pct']}%; top kernels: "
                         + "; ".join(f"{k['name'][:60]} {k['total_us'] / 1e3:.1f} ms" for k in where["top_kernels"][:3]))
    lines.append("goals: " + ", ".join(f"{k}: {'n/a' if v is None else ('met' if v else 'NOT met')}"
                                       for k, v in report["goals"].items()))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", help="the JSON of figures (default: docs/gpu_figures.json on a GPU, else in --work)")
    parser.add_argument("--cpu", action="store_true", help="the CPU paths only, even where a GPU exists")
    parser.add_argument("--batch", type=int, help="roberta-base batch of the speed-up bench (default 256)")
    parser.add_argument("--work", help="folder for the jobs, profiles and traces (default: a new temporary one)")
    parser.add_argument("--sections", default=",".join(SECTIONS), help=f"comma-separated subset of {list(SECTIONS)}")
    args = parser.parse_args(argv)
    unknown = set(args.sections.split(",")) - set(SECTIONS)
    if unknown:
        parser.error(f"--sections: {', '.join(sorted(unknown))} unknown; allowed: {', '.join(SECTIONS)}")
    if args.cpu:
        os.environ["CUDA_VISIBLE_DEVICES"] = ""  # before torch is imported: nothing below (nor the job) sees a GPU
    import torch

    env = Env(args.cpu, args.batch)
    if not env.cuda:  # a small shared CPU: one thread per process beats threads fighting over the cores
        os.environ["OMP_NUM_THREADS"] = "1"
        torch.set_num_threads(1)
    work = Path(args.work or tempfile.mkdtemp(prefix="gpu-check-")).resolve()
    work.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("SAGELAUNCH_HOME", str(work / "sagelaunch-home"))
    out = Path(args.out or (REPO / "docs" / "gpu_figures.json" if env.cuda else work / "gpu_figures.json")).resolve()
    report = {
        "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "mode": "gpu" if env.cuda else "cpu", "gpu": env.gpu, "gpu_skipped": env.skip,
        "torch": torch.__version__, "cuda": torch.version.cuda if env.cuda else None,
        "python": platform.python_version(), "cpus": os.cpu_count(), "work": str(work), "sections": {}, "goals": {},
    }
    print(f"gpu_check: {'GPU ' + env.gpu if env.cuda else 'no GPU: ' + env.skip}; figures → {out}", flush=True)
    for name in args.sections.split(","):
        entry = {"figures": {}, "skipped": None, "error": None, "run": {}}
        report["sections"][name] = entry
        start = time.monotonic()
        print(f"--- {name}", flush=True)
        try:
            SECTIONS[name](entry, env, work)
        except Exception:  # noqa: BLE001 — a broken section is reported; the others still run
            entry["error"] = traceback.format_exc()[-4000:]
            print(entry["error"], file=sys.stderr, flush=True)
        entry["seconds"] = round(time.monotonic() - start, 1)
        report["goals"] = goals(report)
        write(report, out)
    print(summary(report), flush=True)
    print(f"figures: {out}")
    return 1 if any(s["error"] for s in report["sections"].values()) else 0


if __name__ == "__main__":
    sys.exit(main())
