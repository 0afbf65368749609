"""The ranks side by side: per step, where each rank's time goes, and its GPU and memory figures — one row per rank,
and for each column the rank with the largest value (a straggler's input or Forward stands out; the ranks waiting for
it show a longer Backward)."""

from __future__ import annotations

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


def _row(rank: str, r: dict) -> dict:
    row: dict = {"rank": rank}
    loop = r.get("loop")
    if loop and loop["judged"]:
        for key in ("cycle", "input", "forward", "backward", "optimizer"):
            if key in loop["mean_us"]:
                row[key] = round(loop["mean_us"][key] / 1e3, 3)
    t = r.get("temporal")
    if t and t.get("span_us"):
        row["gpu_idle"] = round(100 * t["idle_us"] / t["span_us"], 2)
    if r.get("overlap"):
        row["overlap"] = r["overlap"]["comp_comm_overlap_pct"]
    queue = (r.get("launch") or {}).get("queue")
    if queue:
        row["queue"] = round(queue["mean"], 2)
    rss = (r.get("memory") or {}).get("process_rss")
    if rss:
        row["rss_peak"] = round(max(rss["bytes"]) / 2**20, 1)
    return row


def ranks_compared(ranks: dict[str, dict]) -> dict | None:
    """{"columns": [{key, label, unit}], "rows": [{rank, key: value}], "largest": {key: rank}}; None for one rank."""
    if len(ranks) < 2:
        return None
    rows = [_row(rank, r) for rank, r in sorted(ranks.items(), key=lambda kv: int(kv[0]) if kv[0].isdigit() else kv[0])]
    columns = [{"key": k, "label": label, "unit": unit} for k, label, unit in COLUMNS
               if sum(k in row for row in rows) >= 2]
    largest = {c["key"]: max((row for row in rows if c["key"] in row), key=lambda row: row[c["key"]])["rank"]
               for c in columns}
    return {"columns": columns, "rows": rows, "largest": largest}
