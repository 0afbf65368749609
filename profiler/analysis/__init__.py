"""analyze(path_or_profile) -> AnalysisResult: the typed records (profiler/records.py, documented field by field)
that `sagelaunch profile analyze` prints (text, and as JSON with --json) and the report and the browser read.

Per rank: ``temporal`` and ``kernel_types`` use HTA 0.5's definitions (see gpu_breakdown.py); ``launch`` follows
get_cuda_kernel_launch_stats; ``kernels``, ``gpu_activity``, ``memory_ops``, ``precision``, ``steps``,
``annotations``, ``cpu``, ``gpu_utilization``, ``step_breakdown`` are the dashboard metrics (metrics.py); ``loop``
and ``memory`` are loop.py's. A section that does not apply to a rank is None and ``notes`` says why. ``hosts``
summarises the system monitor's counters (counters.py); ``figures`` are the headline numbers as every view prints
them (profiler/figures.py); ``findings`` what to change (profiler/findings); ``ranks_compared`` the ranks side by
side (ranks_compared.py), None for one rank.
"""

from __future__ import annotations

from pathlib import Path

from sagelaunch.profiler.records import AnalysisResult, JobContext, RankAnalysis, convert
from sagelaunch.profiler.analysis import gpu_breakdown as gb
from sagelaunch.profiler.analysis import hta_view, loop, metrics, parallel
from sagelaunch.profiler.analysis.counters import summarize_counters
from sagelaunch.profiler.analysis.ranks_compared import ranks_compared
from sagelaunch.profiler.figures import figures
from sagelaunch.profiler.findings import findings
from sagelaunch.profiler.job_settings import of_profile
from sagelaunch.profiler.loader import load_profile
from sagelaunch.profiler.schema import Profile, RankTrace


def analyze_rank(rt: RankTrace, n_step_names: int, top_n: int = 10) -> RankAnalysis:
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
    return convert({
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
        "annotations": metrics.annotation_table(rt),
        "cpu": metrics.cpu_activity(rt),
        "gpu_utilization": metrics.gpu_timeline(rt),
        "events": len(rt),
        "devices": {str(k): v for k, v in rt.meta.device_names.items()},
        "source": rt.meta.source,
        "notes": notes,
    }, RankAnalysis)


def analyze(path_or_profile, top_n: int = 10, context: dict | None = None) -> AnalysisResult:
    """Analyse a profile (a path load_profile accepts, or a Profile) into its typed records.

    ``context`` carries job settings the trace cannot tell (``pipeline_parallel_degree``, ``microbatches``);
    the findings use them. Settings the in-job profiler recorded in the profile (profiler/job_settings.py) fill in
    what ``context`` leaves out. The result's ``figures`` (profiler/figures.py) and ``findings`` (profiler/findings)
    are computed from the rest of the result, so every view prints the same numbers."""
    if isinstance(path_or_profile, Profile):
        profile = path_or_profile
    else:
        root = Path(path_or_profile).expanduser()
        if parallel.worth_it(root):  # many ranks: read and analyse them in worker processes
            results, profile = parallel.analyze_folder(root, top_n, analyze_rank)
            return _finish({str(r): v for r, v in results.items()}, profile, context)
        profile = load_profile(root)
    step_names: set[str] = set()
    for rt in profile.ranks.values():
        step_names.update(n for n in rt.names if "ProfilerStep" in n)
    ranks = {str(r): analyze_rank(rt, len(step_names), top_n) for r, rt in profile.ranks.items()}
    return _finish(ranks, profile, context)


def _finish(ranks: dict[str, RankAnalysis], profile: Profile, context: dict | None) -> AnalysisResult:
    """The whole result from the per-rank analyses: hosts' counters, figures and findings."""
    hosts = {}
    if profile.counters is not None:
        hosts = summarize_counters(profile.counters)
    result = AnalysisResult(ranks=ranks, hosts=hosts, warnings=list(profile.warnings), source=profile.source,
                            context=convert({**of_profile(profile), **(context or {})}, JobContext),
                            ranks_compared=ranks_compared(ranks), figures=[], findings=[])
    result.figures = figures(result)  # both read the rest of the result
    result.findings = findings(result)
    return result
