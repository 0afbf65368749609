"""The findings' rules: pure functions of the analysis result (profiler.analysis.analyze) to findings.

Each rule returns a list of findings ``{"rule", "severity", "summary", "evidence", "fix"}``: the summary says what
is wrong in one sentence with its number, the evidence lists the numbers behind it, the fix names the setting to
change. Thresholds: thresholds.py.
"""

from __future__ import annotations

from typing import Any

from profiler.figures import ms
from profiler.findings import thresholds as T

Finding = dict[str, Any]


def finding(rule: str, severity: str, summary: str, evidence: dict[str, Any], fix: str, rank: str | None = None) -> Finding:
    out = {"rule": rule, "severity": severity, "summary": summary, "evidence": evidence, "fix": fix}
    if rank is not None:
        out["rank"] = rank
    return out


def _ranks(a: dict) -> list[tuple[str, dict]]:
    return list((a.get("ranks") or {}).items())


def _idle_share(r: dict) -> float | None:
    t = r.get("temporal")
    return t["idle_us"] / t["span_us"] if t and t.get("span_us") else None


def input_bound(a: dict) -> list[Finding]:
    out = []
    for rank, r in _ranks(a):
        b = r.get("step_breakdown")
        if not b or not b.get("step_us"):
            continue
        # (wait, the step time it is part of): DataLoader operators over the steps that recorded operators
        loader_steps_us = b.get("dataloader_step_us", b["step_us"])
        waits = {"DataLoader operators": (b.get("dataloader_us") or 0.0, loader_steps_us)}
        if b.get("outside_phases_us") is not None:
            waits["time outside Forward/Backward/Optimizer"] = (b["outside_phases_us"], b["step_us"])
        source, (wait, of_us) = max(waits.items(), key=lambda kv: kv[1][0] / kv[1][1] if kv[1][1] else 0.0)
        if not of_us:
            continue
        share = wait / of_us
        if share < T.INPUT_WAIT_SHARE:
            continue
        steps = b["steps"] if of_us == b["step_us"] else b["dataloader_steps"]
        evidence = {"steps": steps, "step_time_ms": round(of_us / 1e3, 3), "input_wait_ms": round(wait / 1e3, 3),
                    "input_wait_share": round(share, 3), "measured_as": source}
        if steps != b["steps"]:
            evidence["steps_measured"] = f"{steps} of {b['steps']} steps (those with framework operators recorded)"
        if b.get("gpu_idle_us") is not None:
            evidence["gpu_idle_in_steps_share"] = round(b["gpu_idle_us"] / b["step_us"], 3)
        out.append(finding(
            "input_bound", "high" if share >= T.INPUT_WAIT_SHARE_HIGH else "medium",
            f"Steps wait for input data: {100 * share:.0f}% of step time ({ms(wait)} of {ms(of_us)}) is {source}.",
            evidence,
            "Load batches in parallel: DataLoader(num_workers=4 or more, pin_memory=True, persistent_workers=True, "
            "prefetch_factor=4) — with the Hugging Face Trainer, TrainingArguments(dataloader_num_workers=4, "
            "dataloader_pin_memory=True); move tokenisation/augmentation out of the training loop (pre-process once).",
            rank))
    return out


def low_gpu_utilization(a: dict) -> list[Finding]:
    out = []
    for rank, r in _ranks(a):
        idle = _idle_share(r)
        if idle is None or idle < T.GPU_IDLE_SHARE:
            continue
        t = r["temporal"]
        out.append(finding(
            "low_gpu_utilization", "high" if idle >= T.GPU_IDLE_SHARE_HIGH else "medium",
            f"The GPU is idle {100 * idle:.0f}% of the time ({ms(t['idle_us'])} of a {ms(t['span_us'])} GPU span).",
            {"gpu_idle_ms": round(t["idle_us"] / 1e3, 3), "gpu_span_ms": round(t["span_us"] / 1e3, 3),
             "gpu_idle_share": round(idle, 3)},
            "Give the GPU more work per step: raise the batch size (TrainingArguments(per_device_train_batch_size=2×) "
            "or the DataLoader's batch_size) until memory allows; if input_bound or launch_bound also fire, fix those first.",
            rank))
    for host, h in (a.get("hosts") or {}).items():
        m = (h.get("metrics") or {}).get("gpu_util")
        if m and m["mean"] < T.GPU_SAMPLED_UTIL_LOW and not any(f.get("rank") for f in out):
            out.append(finding(
                "low_gpu_utilization", "medium",
                f"Sampled GPU utilisation on {host} averages {m['mean']:.0f}% (below {T.GPU_SAMPLED_UTIL_LOW:.0f}%).",
                {"host": host, "mean_gpu_util_pct": m["mean"], "samples": m["samples"]},
                "Raise the batch size (per_device_train_batch_size) and check the input pipeline (DataLoader num_workers).",
            ))
    return out


def launch_bound(a: dict) -> list[Finding]:
    out = []
    for rank, r in _ranks(a):
        k, launch, idle = r.get("kernels") or {}, r.get("launch") or {}, _idle_share(r)
        if k.get("count", 0) < T.LAUNCH_MIN_KERNELS or k.get("short_share") is None or idle is None:
            continue
        if k["short_share"] < T.LAUNCH_SHORT_SHARE or idle < T.LAUNCH_GPU_IDLE_SHARE:
            continue
        evidence = {"kernels": k["count"], "short_kernel_share": k["short_share"], "median_kernel_us": round(k["p50_us"], 2),
                    "gpu_idle_share": round(idle, 3)}
        if launch.get("mean_cpu_launch_us") is not None:
            evidence["mean_launch_call_us"] = round(launch["mean_cpu_launch_us"], 2)
        out.append(finding(
            "launch_bound", "high" if idle >= 2 * T.LAUNCH_GPU_IDLE_SHARE else "medium",
            f"Kernel launches limit the GPU: {100 * k['short_share']:.0f}% of {k['count']:,} kernels run under 10 µs "
            f"(median {k['p50_us']:.1f} µs) and the GPU is idle {100 * idle:.0f}% of its span.",
            evidence,
            "Launch fewer, larger kernels: model = torch.compile(model, mode=\"reduce-overhead\") (CUDA graphs), or "
            "TrainingArguments(torch_compile=True); fused optimizers (torch.optim.AdamW(fused=True)); a larger batch size.",
            rank))
    return out


def low_overlap(a: dict) -> list[Finding]:
    out = []
    for rank, r in _ranks(a):
        types, t = r.get("kernel_types") or {}, r.get("temporal")
        if not t or not t.get("span_us"):
            continue
        comm = sum(v for k, v in types.items() if "COMMUNICATION" in k)
        exposed = sum(v for k, v in types.items() if "COMMUNICATION" in k and "COMPUTATION" not in k)
        if comm < T.OVERLAP_MIN_COMM_SHARE * t["span_us"] or exposed < T.OVERLAP_EXPOSED_SHARE * comm:
            continue
        share = exposed / comm
        out.append(finding(
            "low_overlap", "high" if exposed >= 0.2 * t["span_us"] else "medium",
            f"Communication is not hidden behind compute: {100 * share:.0f}% of {ms(comm)} of communication runs "
            f"with no compute kernel alongside ({ms(exposed)}, {100 * exposed / t['span_us']:.0f}% of the GPU span).",
            {"communication_ms": round(comm / 1e3, 3), "exposed_ms": round(exposed / 1e3, 3),
             "exposed_share": round(share, 3), "gpu_span_ms": round(t["span_us"] / 1e3, 3)},
            "Overlap gradient all-reduce with backward: DistributedDataParallel(bucket_cap_mb=50, gradient_as_bucket_view=True, "
            "static_graph=True) (TrainingArguments(ddp_bucket_cap_mb=50)); with smdistributed/SMP keep \"ddp\": true and "
            "raise \"microbatches\" so compute runs while gradients travel; use gradient_accumulation_steps to communicate less often.",
            rank))
    return out


def pipeline_bubble(a: dict) -> list[Finding]:
    ctx = a.get("context") or {}
    pp = int(ctx.get("pipeline_parallel_degree") or 1)
    if pp <= 1:
        return []
    idles = [(rank, s) for rank, r in _ranks(a) if (s := _idle_share(r)) is not None]
    if not idles:
        return []
    mean_idle = sum(s for _, s in idles) / len(idles)
    if mean_idle < T.PIPELINE_IDLE_SHARE:
        return []
    mb = ctx.get("microbatches")
    want = T.PIPELINE_MICROBATCHES_PER_STAGE * pp
    evidence: dict[str, Any] = {"pipeline_parallel_degree": pp, "mean_stage_idle_share": round(mean_idle, 3),
                                "stage_idle_share": {rank: round(s, 3) for rank, s in idles}}
    if mb:
        evidence["microbatches"] = int(mb)
        evidence["expected_bubble_share"] = round((pp - 1) / (int(mb) + pp - 1), 3)
    return [finding(
        "pipeline_bubble", "high" if mean_idle >= 2 * T.PIPELINE_IDLE_SHARE else "medium",
        f"Pipeline stages wait for each other: with pipeline_parallel_degree={pp} the GPUs are idle "
        f"{100 * mean_idle:.0f}% of the time on average" + (f" with microbatches={mb}." if mb else "."),
        evidence,
        f"Split each batch into more microbatches: SMP parameters \"microbatches\": {max(want, int(mb or 0) * 2)} "
        f"(at least {T.PIPELINE_MICROBATCHES_PER_STAGE}× the pipeline degree) with \"pipeline\": \"interleaved\"; "
        "or lower pipeline_parallel_degree if the model fits in fewer stages.",
    )]


def median(values) -> float:
    """statistics.median, to the bit, without its imports (random, fractions, decimal: ~4 ms of every analyze)."""
    data = sorted(values)
    i = len(data) // 2
    return data[i] if len(data) % 2 else (data[i - 1] + data[i]) / 2


def straggler_rank(a: dict) -> list[Finding]:
    ranks = _ranks(a)
    if len(ranks) < 2:
        return []
    out = []
    steps = {rank: r["steps"]["mean_us"] for rank, r in ranks if r.get("steps") and r["steps"].get("mean_us")}
    for rank, mean in steps.items():
        others = [v for k, v in steps.items() if k != rank]
        if others and mean >= T.STRAGGLER_STEP_RATIO * median(others):
            m = median(others)
            out.append(finding(
                "straggler_rank", "high",
                f"Rank {rank} is slower than the others: mean step {ms(mean)} against a median of {ms(m)} "
                f"({mean / m:.2f}×); every rank waits for it at the gradient all-reduce.",
                {"rank_step_ms": round(mean / 1e3, 3), "median_other_ranks_step_ms": round(m / 1e3, 3),
                 "ratio": round(mean / m, 3), "ranks": len(steps)},
                "Give every rank the same work: shard the dataset evenly (DistributedSampler(drop_last=True)), "
                "group samples by length (TrainingArguments(group_by_length=True)), and check the slow rank's host "
                "(other processes, thermal limits, a slower GPU or link).", rank))
    idles = {rank: s for rank, r in ranks if (s := _idle_share(r)) is not None}
    for rank, idle in idles.items():
        others = [v for k, v in idles.items() if k != rank]
        if others and 100 * (idle - median(others)) >= T.STRAGGLER_IDLE_POINTS and rank not in {f["rank"] for f in out}:
            out.append(finding(
                "straggler_rank", "medium",
                f"Rank {rank}'s GPU is idle {100 * idle:.0f}% of its span against a median of {100 * median(others):.0f}% "
                "on the other ranks.",
                {"rank_gpu_idle_share": round(idle, 3), "median_other_ranks_idle_share": round(median(others), 3)},
                "Balance the ranks' work: DistributedSampler(drop_last=True), group_by_length=True, and the same "
                "DataLoader num_workers on every host; look at this rank's timeline for waits.", rank))
    return out


def step_outlier(a: dict) -> list[Finding]:
    out = []
    for rank, r in _ranks(a):
        s = r.get("steps")
        if not s or s.get("count", 0) < T.STEP_OUTLIER_MIN_STEPS:
            continue
        judged = sorted(s["steps"], key=lambda x: x["ts_us"])[1:]  # the first step is warm-up
        # steps slowed by the profiler itself: Kineto recording their operators, our writer converting a window
        recorded = sum(1 for x in judged if x.get("cpu_ops_recorded"))
        writing = sum(1 for x in judged if x.get("profiler_writing") and not x.get("cpu_ops_recorded"))
        judged = [x for x in judged if not (x.get("cpu_ops_recorded") or x.get("profiler_writing"))]
        if len(judged) < T.STEP_OUTLIER_MIN_STEPS:
            continue
        med = median(x["dur_us"] for x in judged)
        slow = [x for x in judged if x["dur_us"] >= T.STEP_OUTLIER_RATIO * med]
        if not slow:
            continue
        worst = max(slow, key=lambda x: x["dur_us"])
        names = ", ".join(str(x["step"]) for x in sorted(slow, key=lambda x: -x["dur_us"])[:10])
        out.append(finding(
            "step_outlier", "medium" if len(slow) < 0.1 * len(judged) else "high",
            f"{len(slow)} of {len(judged)} steps take ≥{T.STEP_OUTLIER_RATIO}× the median step ({ms(med)}); "
            f"the slowest, step {worst['step']}, takes {ms(worst['dur_us'])}.",
            {"median_step_ms": round(med / 1e3, 3), "slow_steps": len(slow), "steps": len(judged),
             "slowest_step": worst["step"], "slowest_step_ms": round(worst["dur_us"] / 1e3, 3), "slow_step_numbers": names,
             **({"left_out_steps_with_operators_recorded": recorded} if recorded else {}),
             **({"left_out_steps_while_the_profiler_wrote": writing} if writing else {})},
            f"Open the timeline at step {worst['step']} to see what runs there. Periodic slow steps are usually checkpoints, "
            "evaluation or logging: raise TrainingArguments(save_steps=…, eval_steps=…, logging_steps=…); at epoch starts "
            "keep DataLoader workers alive (persistent_workers=True); avoid torch.cuda.synchronize()/.item() inside the step.",
            rank))
    return out


def _quarters(values: list[float]) -> tuple[float, float] | None:
    n = len(values)
    if n < 8:
        return None
    q = n // 4
    return sum(values[:q]) / q, sum(values[-q:]) / q


def memory_growth(a: dict) -> list[Finding]:
    out = []
    for host, h in (a.get("hosts") or {}).items():
        metrics = h.get("metrics") or {}
        for metric, unit in (("gpu_mem_used", "bytes"), ("host_mem_util", "%")):
            for index, series in ((metrics.get(metric) or {}).get("series") or {}).items():
                q = _quarters(series["value"])
                if q is None:
                    continue
                first, last = q
                grew = last - first >= (T.MEMORY_GROWTH_POINTS if unit == "%" else T.MEMORY_GROWTH_BYTES_SHARE * max(first, 1))
                rising = sum(b >= a_ for a_, b in zip(series["value"], series["value"][1:])) >= 0.7 * (len(series["value"]) - 1)
                if not (grew and rising):
                    continue
                what = "host memory" if metric == "host_mem_util" else f"GPU {index} memory"
                amount = (f"{first:.0f}% → {last:.0f}%" if unit == "%" else f"{first / 2**30:.2f} → {last / 2**30:.2f} GiB")
                out.append(finding(
                    "memory_growth", "high",
                    f"{what.capitalize()} on {host} keeps growing during the run ({amount}, first to last quarter).",
                    {"host": host, "metric": metric, "device": index, "first_quarter_mean": round(first, 2),
                     "last_quarter_mean": round(last, 2), "unit": unit, "span_s": h.get("span_s")},
                    "Something is kept from step to step: accumulate losses as loss.item() or loss.detach(), do not keep "
                    "outputs/graphs in lists, call optimizer.zero_grad(set_to_none=True); with DataLoader workers copying "
                    "Python lists, keep datasets in numpy/Arrow arrays. If it plateaus later it is the allocator's cache, not a leak.",
                ))
    return out


RULES = (input_bound, low_gpu_utilization, launch_bound, low_overlap, pipeline_bubble, straggler_rank, step_outlier,
         memory_growth)
