"""A step the recorded work does not explain: the step annotations span far more than the phases, DataLoader, hooks
and operators inside them (profiler/analysis/loop.py's ``unexplained_us``).

Cannot see: what the unexplained time is (nothing was recorded there); steps without annotated Forward or Backward
(the Hugging Face Trainer's step_N alone, the SMP pipeline's step): nothing inside them tells the phases apart."""

from __future__ import annotations

from sagelaunch.profiler.figures import ms
from sagelaunch.profiler.findings import thresholds as T
from sagelaunch.profiler.findings.common import finding, ranks_of
from sagelaunch.profiler.records import AnalysisResult, Evidence, Finding

# where the unexplained time sits → how the summary says it, what usually causes it there
WHERE = {
    "before_first_work": ("inside the step before its first recorded work (before Forward)",
                          "work before the model runs that nothing records: a batch taken from a queue or a generator "
                          "rather than a DataLoader, moving it to the device without pin_memory/non_blocking, waiting "
                          "on another process or a lock"),
    "between_work": ("inside the step between its annotated phases",
                     "unannotated work between the phases: the loss, gradient clipping, .item()/.cpu() calls that "
                     "synchronise, metrics"),
    "after_last_work": ("inside the step after its last recorded work (after Optimizer)",
                        "work after the optimizer step: logging with .item(), a scheduler or EMA update, metrics, "
                        "synchronisation"),
    "between_steps": ("between the steps (after step_N closes, before the next opens)",
                      "work outside the step annotation: building the next batch by hand (a generator, no "
                      "DataLoader), logging, evaluation or checkpoints"),
}


def unexplained_step(a: AnalysisResult) -> list[Finding]:
    out = []
    for rank, r in ranks_of(a):
        loop = r.loop
        if loop is None or loop.unexplained_us is None or not ({"forward", "backward"} & set(loop.phases)):
            continue
        u = loop.unexplained_us
        if not u.cycle:
            continue
        share = u.total / u.cycle
        if share < T.UNEXPLAINED_SHARE or u.total < T.UNEXPLAINED_MIN_US:
            continue
        parts = {k: getattr(u, k) for k in WHERE}
        where = max(parts, key=parts.__getitem__)
        said, cause = WHERE[where]
        evidence: dict[str, Evidence] = {
            "steps": loop.judged, "step_cycle_ms": round(u.cycle / 1e3, 3),
            "explained_ms_per_step": round(u.explained / 1e3, 3), "unexplained_ms_per_step": round(u.total / 1e3, 3),
            "unexplained_share": round(share, 3), "mostly": where,
            **{f"{k}_ms": round(v / 1e3, 3) for k, v in parts.items()}, "phases": ", ".join(loop.phases)}
        out.append(finding(
            "unexplained_step", "high" if share >= T.UNEXPLAINED_SHARE_HIGH else "medium",
            f"The annotated phases explain {ms(u.explained)} of each {ms(u.cycle)} step: {ms(u.total)} "
            f"({100 * share:.0f}%) is unexplained, {ms(parts[where])} of it {said}.",
            evidence,
            f"Find what runs {said.split(' (')[0]}: usually {cause}. Annotate it (smprof.annotate(\"...\")) or record "
            "operators (record_cpu_ops=True) to see it in the timeline; feed batches from a DataLoader(num_workers=…) "
            "so they are ready when the step starts.",
            rank))
    return out
