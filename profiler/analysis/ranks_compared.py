"""The ranks side by side: per step, where each rank's time goes, and its GPU and memory figures — one row per rank,
and for each column the rank with the largest value (a straggler's input or Forward stands out; the ranks waiting for
it show a longer Backward)."""

from __future__ import annotations

from sagelaunch.profiler.records import RankAnalysis, RankColumn, RanksCompared

# (key, label, unit): per-step times from the loop (ms), GPU shares (%), queue (kernels), memory peak (MiB)
COLUMNS = (
    ("cycle", "step cycle", "ms"),
    ("input", "DataLoader", "ms"),
    ("forward", "Forward", "ms"),
    ("backward", "Backward", "ms"),
    ("optimizer", "Optimizer", "ms"),
    ("gpu_idle", "GPU idle", "%"),
    ("overlap", "comm/comp overlap", "%"),
    ("queue", "queue length", "kernels"),
    ("rss_peak", "RSS peak", "MiB"),
)
PER_STEP = ("cycle", "input", "forward", "backward", "optimizer")  # the loop's means shown


def _row(rank: str, r: RankAnalysis) -> dict[str, str | float]:
    row: dict[str, str | float] = {"rank": rank}
    loop = r.loop
    if loop and loop.judged:
        for key, us in loop.mean_us.measured().items():
            if key in PER_STEP:
                row[key] = round(us / 1e3, 3)
    if r.idle_share is not None:
        row["gpu_idle"] = round(100 * r.idle_share, 2)
    if r.overlap:
        row["overlap"] = r.overlap.comp_comm_overlap_pct
    if r.launch.queue:
        row["queue"] = round(r.launch.queue.mean, 2)
    rss = r.memory.get("process_rss")
    if rss:
        row["rss_peak"] = round(max(rss.bytes) / 2**20, 1)
    return row


def ranks_compared(ranks: dict[str, RankAnalysis]) -> RanksCompared | None:
    """One row per rank, the columns at least two ranks have, and each column's largest; None for one rank."""
    if len(ranks) < 2:
        return None
    rows = [_row(rank, r) for rank, r in sorted(ranks.items(), key=lambda kv: int(kv[0]) if kv[0].isdigit() else kv[0])]
    columns = [RankColumn(key=k, label=label, unit=unit) for k, label, unit in COLUMNS
               if sum(k in row for row in rows) >= 2]
    largest = {c.key: str(max((row for row in rows if c.key in row), key=lambda row: row[c.key])["rank"])
               for c in columns}
    return RanksCompared(columns=columns, rows=rows, largest=largest)
