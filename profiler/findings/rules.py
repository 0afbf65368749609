"""The findings' rules: pure functions of the analysis result (profiler.analysis.analyze) to findings.

Each rule reads the typed records (profiler/records.py) and returns Finding records: the summary says what is wrong
in one sentence with its number, the evidence lists the numbers behind it, the fix names the setting to change.
Thresholds: thresholds.py.
"""

from __future__ import annotations

import re
from sagelaunch.profiler.figures import ms
from sagelaunch.profiler.findings import thresholds as T
from sagelaunch.profiler.findings.common import finding
from sagelaunch.profiler.findings.common import ranks_of as _ranks
from sagelaunch.profiler.records import AnalysisResult, Evidence, Finding, IdleBreakdown, RankAnalysis
from sagelaunch.profiler.findings.loop_rules import input_bound, memory_growth, step_outlier, straggler_rank
from sagelaunch.profiler.findings.host_rules import host_contention
from sagelaunch.profiler.findings.step_rules import unexplained_step
from sagelaunch.profiler.findings.pipeline_expected import beyond_schedule, expected_bubble


def low_gpu_utilization(a: AnalysisResult) -> list[Finding]:
    out = []
    for rank, r in _ranks(a):
        t, idle = r.temporal, r.idle_share  # idle is None exactly when temporal is (no GPU activity)
        if t is None or idle is None or idle < T.GPU_IDLE_SHARE:
            continue
        out.append(finding(
            "low_gpu_utilization", "high" if idle >= T.GPU_IDLE_SHARE_HIGH else "medium",
            f"The GPU is idle {100 * idle:.0f}% of the time ({ms(t.idle_us)} of a {ms(t.span_us)} GPU span).",
            {"gpu_idle_ms": round(t.idle_us / 1e3, 3), "gpu_span_ms": round(t.span_us / 1e3, 3),
             "gpu_idle_share": round(idle, 3)},
            "Give the GPU more work per step: raise the batch size (TrainingArguments(per_device_train_batch_size=2×) "
            "or the DataLoader's batch_size) until memory allows; if input_bound or launch_bound also fire, fix those first.",
            rank))
    for host, h in a.hosts.items():
        m = h.metrics.get("gpu_util")
        if m and m.mean < T.GPU_SAMPLED_UTIL_LOW and not any(f.rank for f in out):
            out.append(finding(
                "low_gpu_utilization", "medium",
                f"Sampled GPU utilisation on {host} averages {m.mean:.0f}% (below {T.GPU_SAMPLED_UTIL_LOW:.0f}%).",
                {"host": host, "mean_gpu_util_pct": m.mean, "samples": m.samples},
                "Raise the batch size (per_device_train_batch_size) and check the input pipeline (DataLoader num_workers).",
            ))
    return out


def _host_bound_stream(waits: IdleBreakdown, queue) -> tuple[str, float]:
    """The stream whose gaps hold the most host wait (the one the host feeds), and its mean queue length (HTA's
    get_queue_length_summary for that stream; the rank's mean when the stream has no queue points)."""
    stream = max(waits.streams, key=lambda s: waits.streams[s].host_wait_us)
    q = queue.streams.get(stream) if queue is not None else None
    return stream, (q.mean if q is not None else queue.mean if queue is not None else 0.0)


# An optimizer's step as torch.optim annotates it (Optimizer.step#SGD.step): its fused form launches one kernel
# for all parameters where the default launches one per parameter group or per tensor
OPTIMIZER_STEP = re.compile(r"Optimizer\.step#(\w+)\.step")
FUSED_OPTIMIZERS = {"Adam", "AdamW", "SGD", "Adagrad"}


def _launch_fix(r: RankAnalysis) -> str:
    """What shortens this trace's launches: CUDA graphs (for an eager trace through torch.compile's reduce-overhead
    mode, never plain torch.compile for a compiled one), its own optimizer fused, a larger batch."""
    if r.compiled:
        graphs = ("The model is already compiled: capture the step in CUDA graphs (torch.compile(model, "
                  "mode=\"reduce-overhead\") or torch.cuda.graphs)")
    else:
        graphs = ("Launch fewer, larger kernels: model = torch.compile(model, mode=\"reduce-overhead\") (CUDA graphs "
                  "replay the step's launches at once; TrainingArguments(torch_compile=True, "
                  "torch_compile_mode=\"reduce-overhead\"))")
    names = {m.group(1) for a in r.annotations if (m := OPTIMIZER_STEP.search(a.name))}
    fused = sorted(names & FUSED_OPTIMIZERS)
    optimizer = (f"fuse its optimizer ({', '.join(f'torch.optim.{n}(..., fused=True)' for n in fused)}: one kernel for "
                 "every parameter)" if fused else "fused optimizers (torch.optim.AdamW(fused=True))")
    return (f"{graphs}; {optimizer}; a larger batch size (the same launches carry more work per step, "
            "per_device_train_batch_size or the DataLoader's batch_size).")


def launch_bound(a: AnalysisResult) -> list[Finding]:
    """The GPU waits for the host to launch its kernels, decided as HTA decides host-bound: the GPU idle a share of its
    span, most of its gaps host wait (HTA's idle-time breakdown), and an empty launch queue (HTA's queue length: the
    host launches a kernel, the GPU runs it, then waits for the next). Short kernels are evidence, not a gate.

    Cannot see: a CPU-only job (no kernels: a loop of tiny CPU operators gets no finding); gaps of more than
    LAUNCH_MAX_HOST_WAIT_PER_KERNEL_US per kernel are other host work (input, synchronisation, sleeps), left to
    low_gpu_utilization; fewer than LAUNCH_MIN_KERNELS kernels are too few to judge."""
    out = []
    for rank, r in _ranks(a):
        k, waits, idle, queue = r.kernels, r.idle_breakdown, r.idle_share, r.launch.queue
        if k.count < T.LAUNCH_MIN_KERNELS or idle is None or idle < T.LAUNCH_GPU_IDLE_SHARE:
            continue
        if waits is None or waits.total_us <= 0 or not waits.streams:
            continue
        host_share = waits.host_wait_us / waits.total_us
        if host_share < T.LAUNCH_HOST_WAIT_SHARE:
            continue  # the GPU's gaps are mostly synchronisation or other streams, not launches
        stream, queue_mean = _host_bound_stream(waits, queue)
        if queue_mean > T.LAUNCH_MAX_QUEUE:
            continue  # kernels wait in the queue: the host is ahead of the GPU, launches are not what it waits for
        per_kernel = waits.host_wait_us / k.count
        if per_kernel > T.LAUNCH_MAX_HOST_WAIT_PER_KERNEL_US:
            continue  # gaps far longer than a launch: the host does other work between kernels
        evidence: dict[str, Evidence] = {
            "gpu_idle_share": round(idle, 3), "idle_host_wait_ms": round(waits.host_wait_us / 1e3, 3),
            "idle_kernel_wait_ms": round(waits.kernel_wait_us / 1e3, 3), "idle_other_ms": round(waits.other_us / 1e3, 3),
            "idle_host_wait_share": round(host_share, 3), "stream": stream, "mean_queue_length": round(queue_mean, 3),
            "kernels": k.count, "host_wait_per_kernel_us": round(per_kernel, 1), "compiled": r.compiled}
        if k.short_share is not None and k.p50_us is not None:
            evidence["short_kernel_share"], evidence["median_kernel_us"] = k.short_share, round(k.p50_us, 2)
        if r.launch.mean_cpu_launch_us is not None:
            evidence["mean_launch_call_us"] = round(r.launch.mean_cpu_launch_us, 2)
        out.append(finding(
            "launch_bound", "high" if idle >= 2 * T.LAUNCH_GPU_IDLE_SHARE and host_share >= 0.9 else "medium",
            f"The GPU waits for the host to launch its kernels: it is idle {100 * idle:.0f}% of its span, "
            f"{100 * host_share:.0f}% of that waiting on the host, and the launch queue averages {queue_mean:.2f} "
            f"kernels (the host launches one, the GPU runs it and waits); {k.count:,} kernels"
            + (f", {100 * k.short_share:.0f}% under 10 µs." if k.short_share is not None else "."),
            evidence, _launch_fix(r), rank))
    return out


def low_overlap(a: AnalysisResult) -> list[Finding]:
    out = []
    for rank, r in _ranks(a):
        types, t = r.kernel_types or {}, r.temporal
        if not t or not t.span_us:
            continue
        comm = sum(v for k, v in types.items() if "COMMUNICATION" in k)
        exposed = sum(v for k, v in types.items() if "COMMUNICATION" in k and "COMPUTATION" not in k)
        if comm < T.OVERLAP_MIN_COMM_SHARE * t.span_us or exposed < T.OVERLAP_EXPOSED_SHARE * comm:
            continue
        share = exposed / comm
        collective = _top_collective(r)
        evidence: dict[str, Evidence] = {"communication_ms": round(comm / 1e3, 3), "exposed_ms": round(exposed / 1e3, 3),
                                         "exposed_share": round(share, 3), "gpu_span_ms": round(t.span_us / 1e3, 3)}
        if collective:
            evidence["collective"], evidence["collective_kernel"] = collective
        out.append(finding(
            "low_overlap", "high" if exposed >= 0.2 * t.span_us else "medium",
            f"Communication is not hidden behind compute: {100 * share:.0f}% of {ms(comm)} of communication runs "
            f"with no compute kernel alongside ({ms(exposed)}, {100 * exposed / t.span_us:.0f}% of the GPU span)"
            + (f"; most of it is {collective[0]}." if collective else "."),
            evidence, OVERLAP_FIX.get(collective[0] if collective else "", OVERLAP_FIX["AllReduce"]), rank))
    return out


# What overlaps each collective with compute, by the collective the trace shows most of
OVERLAP_FIX = {
    "AllReduce": "Overlap gradient all-reduce with backward: DistributedDataParallel(bucket_cap_mb=50, "
                 "gradient_as_bucket_view=True, static_graph=True) (TrainingArguments(ddp_bucket_cap_mb=50)); with "
                 "smdistributed/SMP keep \"ddp\": true and raise \"microbatches\" so compute runs while gradients "
                 "travel; use gradient_accumulation_steps to communicate less often.",
    "AllGather": "Prefetch the next layer's parameters while this one computes: FSDP(forward_prefetch=True, "
                 "backward_prefetch=BackwardPrefetch.BACKWARD_PRE, limit_all_gathers=True) (TrainingArguments(fsdp_config="
                 "{\"forward_prefetch\": true, \"backward_prefetch\": \"backward_pre\"})); fewer, larger FSDP units "
                 "(auto_wrap_policy) launch fewer all-gathers.",
    "ReduceScatter": "Overlap gradient reduce-scatter with backward: FSDP(backward_prefetch=BackwardPrefetch.BACKWARD_PRE) "
                     "and larger FSDP units; gradient_accumulation_steps with no_sync() to reduce less often.",
    "SendRecv": "Pipeline stages wait on send/recv: split each batch into more microbatches (SMP \"microbatches\": "
                "at least 4× the pipeline degree, \"pipeline\": \"interleaved\") so stages compute while activations "
                "travel.",
    "AllToAll": "The embeddings' all-to-all runs alone: pipeline the next batch's input distribution behind this "
                "batch's compute with TorchRec's TrainPipelineSparseDist (torchrec.distributed.train_pipeline) instead "
                "of a plain loop, and let the sharding planner group tables so fewer, larger all-to-alls run.",
}
COLLECTIVES = re.compile(r"AllReduce|AllGather|ReduceScatter|SendRecv|Broadcast|AllToAll|Send|Recv", re.I)
# NCCL runs all-to-all as SendRecv kernels: annotations of an all-to-all (TorchRec's awaitables, its sparse data
# distribution) say which it is, where a pipeline's send/recv has none of these
ALL_TO_ALL_ANNOTATION = re.compile(r"AllToAll|all_to_all|alltoall|sparse_data_dist", re.I)


def _top_collective(r: RankAnalysis) -> tuple[str, str] | None:
    """(collective, kernel name) of the communication kernel with the most time (the analysis' overlap section)."""
    name = r.overlap.top_kernel if r.overlap else None
    if not name:
        return None
    m = COLLECTIVES.search(name)
    word = m.group(0) if m else ""
    word = {"send": "SendRecv", "recv": "SendRecv"}.get(word.lower(), word)
    if word.lower() == "sendrecv" and any(ALL_TO_ALL_ANNOTATION.search(a.name) for a in r.annotations):
        word = "AllToAll"
    return next((c for c in OVERLAP_FIX if c.lower() == word.lower()), word), name


def pipeline_bubble(a: AnalysisResult) -> list[Finding]:
    """A pipeline's stages wait for each other a large share of each step: measured where the stages' blocking
    receives are annotated ``pipeline_wait`` (the time each stage is blocked per microbatch for its peer stage, as a
    share of the step cycle, ≥ PIPELINE_WAIT_SHARE; CPU or GPU), else from the stages' GPU idle share of their span
    when pipeline_parallel_degree > 1 (recorded or given; ≥ PIPELINE_IDLE_SHARE). Set against the schedule's expected
    bubble when the degree and microbatches are known: (p − 1)/(m + p − 1) of a step for GPipe's fill-drain and 1F1B,
    (p − 1)/(v·m + p − 1) for the interleaved schedule's v stages per rank (jobspec/pipeline_schedule.py).

    Cannot see: a pipeline run on CPU whose receives are not annotated pipeline_wait (sagelaunch's SMP pipeline
    annotates its own; another library's on gloo has no GPU span either), and settings passed only to the script's
    smp.init(config=...) of SageMaker's SMP library (sagelaunch's notes what it ran; without them the expected share
    is left out). No pipelined GPU trace has been tested: none public with known settings, no GPU lent."""
    pp = a.context.pipeline_parallel_degree or 1
    mb = a.context.microbatches
    waits = [(rank, r.loop.mean_us.pipeline_wait / r.loop.mean_us.cycle, r.loop) for rank, r in _ranks(a)
             if r.loop and r.loop.mean_us.pipeline_wait is not None and r.loop.mean_us.cycle > 0]
    evidence: dict[str, Evidence] = {}
    if waits:
        mean_idle = sum(s for _, s, _ in waits) / len(waits)
        if mean_idle < T.PIPELINE_WAIT_SHARE:
            return []
        evidence["mean_stage_wait_share"] = round(mean_idle, 3)
        evidence["stage_wait_share"] = {rank: round(s, 3) for rank, s, _ in waits}
        evidence["stage_wait_ms_per_step"] = {rank: round((lp.mean_us.pipeline_wait or 0) / 1e3, 2)
                                              for rank, _, lp in waits}
        evidence["receives_per_step"] = {rank: lp.pipeline_waits_per_step or 0.0 for rank, _, lp in waits}
        what = "blocked in their receives"
    else:
        if pp <= 1:
            return []
        idles = [(rank, s) for rank, r in _ranks(a) if (s := r.idle_share) is not None]
        if not idles:
            return []
        mean_idle = sum(s for _, s in idles) / len(idles)
        if mean_idle < T.PIPELINE_IDLE_SHARE:
            return []
        evidence["mean_stage_idle_share"] = round(mean_idle, 3)
        evidence["stage_idle_share"] = {rank: round(s, 3) for rank, s in idles}
        what = "idle on their GPUs"
    if pp > 1:
        evidence["pipeline_parallel_degree"] = pp
    if mb:
        evidence["microbatches"] = mb
        if pp > 1:
            evidence.update(expected_bubble(pp, mb, a.context.virtual_stages or 1, a.context.microbatches_per_fill))
    want = T.PIPELINE_MICROBATCHES_PER_STAGE * max(pp, 2)
    expected = evidence.get("expected_bubble_share")
    beyond, first = beyond_schedule(mean_idle, expected) if waits and isinstance(expected, float) else ("", "")
    fix = (f"split each batch into more microbatches: SMP parameters \"microbatches\": {max(want, (mb or 0) * 2)} "
           f"(at least {T.PIPELINE_MICROBATCHES_PER_STAGE}× the pipeline degree) with \"pipeline\": \"interleaved\"; "
           "or lower pipeline_parallel_degree if the model fits in fewer stages.")
    return [finding(
        "pipeline_bubble", "high" if mean_idle >= 2 * T.PIPELINE_IDLE_SHARE else "medium",
        f"Pipeline stages wait for each other: {what} {100 * mean_idle:.0f}% of each step on average"
        + (f" with pipeline_parallel_degree={pp}" if pp > 1 else "") + (f", microbatches={mb}." if mb else ".")
        + beyond,
        evidence, first + fix if first else fix[0].upper() + fix[1:],
    )]


RULES = (input_bound, low_gpu_utilization, launch_bound, low_overlap, pipeline_bubble, straggler_rank, step_outlier,
         memory_growth, unexplained_step, host_contention)
