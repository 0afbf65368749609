"""analyze(path_or_profile) -> AnalysisResult: what `sagelaunch profile analyze --json` prints (its records, typed and
documented field by field: records.py).

Shape: ``{"ranks": {"<rank>": {...}}, "hosts": {...}, "warnings": [...], "source": str}``. Per rank:
``temporal`` {idle_us, compute_us, non_compute_us, span_us, *_pct} and ``kernel_types`` {label: us} use HTA 0.5's
definitions (see gpu_breakdown.py); ``launch`` {count, mean_launch_delay_us, …} follows get_cuda_kernel_launch_stats;
``top_kernels`` [{name, total_us, count, mean_us}]; ``kernels``, ``gpu_activity``, ``memory_ops``, ``precision``,
``steps``, ``annotations``, ``cpu``, ``gpu_utilization``, ``step_breakdown`` are the dashboard metrics (metrics.py);
``loop`` (steps found with or without annotations, their cycles, input wait, phases) and ``memory`` (the process's
RSS and CUDA allocator samples) are loop.py's. A section that does
not apply to a rank (no GPU events, no steps…) is null and ``notes`` says why. ``hosts`` summarises the CPU/GPU
utilisation counters of our artifacts (counters.py). ``figures``: the headline numbers with their labels, as
every view prints them; ``findings``: what to change, with evidence (profiler/findings); ``ranks_compared``: the ranks
side by side (ranks_compared.py), None for one rank.
"""

from __future__ import annotations

from pathlib import Path

from profiler.records import AnalysisResult
from profiler.schema import Profile, RankTrace


def analyze_rank(rt: RankTrace, n_step_names: int, top_n: int = 10) -> dict:
    from profiler.analysis import gpu_breakdown as gb
    from profiler.analysis import hta_view, loop, metrics

    notes: list[str] = []
    view = hta_view.build(rt, n_step_names)
    types = gb.kernel_types_of(rt.names)
    gpu = view.gpu()
    temporal = gb.temporal(gpu, types)
    if temporal is None:
        notes.append("no GPU activity in this trace (no kernels or memory copies): GPU time and kernel types do not apply")
    kernel_types = gb.kernel_type_breakdown(gpu, types) if temporal is not None else None
    overlap = gb.comm_comp_overlap(gpu, types) if temporal is not None else None
    launch = gb.launch_stats(view)
    idle_breakdown = gb.idle_time_breakdown(view)
    launch["queue"] = gb.queue_length(view)
    if launch["count"] == 0 and temporal is not None:
        if (rt["correlation"] >= 0).any():
            notes.append("no kernel launch on the CPU could be matched to the kernel it started")
        else:
            notes.append("the trace does not link kernel launches to kernels: launch statistics do not apply")
    kernels, top = metrics.kernels(rt, top_n)
    steps = metrics.steps(rt)
    if steps is None:
        notes.append("no step annotations (ProfilerStep#N or step_N)")
    sampled = metrics.cpu_ops_sampling(rt)
    if sampled:
        notes.append(f"framework operators were recorded in {sampled['steps']} of every {sampled['every_steps']} "
                     f"steps ({sampled['recorded_steps']} steps held them): operator figures cover those steps only")
    return {
        "temporal": temporal,
        "kernel_types": kernel_types,
        "top_kernels": top,
        "launch": launch,
        "idle_breakdown": idle_breakdown,
        "overlap": overlap,
        "kernels": kernels,
        "gpu_activity": metrics.gpu_activity(rt),
        "memory_ops": metrics.memory_ops(rt),
        "precision": metrics.precision(rt),
        "steps": steps,
        "step_breakdown": metrics.step_breakdown(rt),
        "loop": loop.loop(rt),
        "compiled": metrics.compiled(rt),
        "memory": loop.memory(rt),
        "cpu_ops_sampled": sampled,
        "annotations": metrics.annotations(rt),
        "cpu": metrics.cpu_activity(rt),
        "gpu_utilization": metrics.gpu_timeline(rt),
        "events": len(rt),
        "devices": {str(k): v for k, v in rt.meta.device_names.items()},
        "source": rt.meta.source,
        "notes": notes,
    }


def analyze(path_or_profile, top_n: int = 10, context: dict | None = None) -> AnalysisResult:
    """Analyse a profile (a path load_profile accepts, or a Profile) into one JSON-ready dict.

    ``context`` carries job settings the trace cannot tell (``pipeline_parallel_degree``, ``microbatches``);
    the findings use them. Settings the in-job profiler recorded in the profile (profiler/job_settings.py) fill in
    what ``context`` leaves out. The result's ``figures`` (profiler/figures.py) and ``findings`` (profiler/findings)
    are computed from the rest of the result, so every view prints the same numbers."""
    if isinstance(path_or_profile, Profile):
        profile = path_or_profile
    else:
        from profiler.analysis import parallel

        root = Path(path_or_profile).expanduser()
        if parallel.worth_it(root):  # many ranks: read and analyse them in worker processes
            results, profile = parallel.analyze_folder(root, top_n, analyze_rank)
            return _finish({str(r): v for r, v in results.items()}, profile, context)
        from profiler.loader import load_profile

        profile = load_profile(root)
    step_names = set()
    for rt in profile.ranks.values():
        step_names.update(n for n in rt.names if "ProfilerStep" in n)
    ranks = {str(r): analyze_rank(rt, len(step_names), top_n) for r, rt in profile.ranks.items()}
    return _finish(ranks, profile, context)


def _finish(ranks: dict, profile: Profile, context: dict | None) -> AnalysisResult:
    """The whole result from the per-rank analyses: hosts' counters, figures and findings."""
    hosts = {}
    if profile.counters is not None:
        from profiler.analysis.counters import summarize_counters

        hosts = summarize_counters(profile.counters)
    from profiler.figures import figures
    from profiler.findings import findings
    from profiler.job_settings import of_profile

    result = {"ranks": ranks, "hosts": hosts, "warnings": list(profile.warnings), "source": profile.source,
              "context": {**of_profile(profile), **(context or {})}}
    from profiler.analysis.ranks_compared import ranks_compared

    result["ranks_compared"] = ranks_compared(ranks)
    result["figures"] = figures(result)
    result["findings"] = findings(result)
    return result
