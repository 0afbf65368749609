"""What turns a captured window into artifact files: Kineto's exported Chrome trace read back, merged with our
annotation spans and written as Parquet; the system monitor's rows written as a counters file.

These functions run in the output process (profiler/output_serve.py), so the training process never imports
pyarrow or our trace reader, and never holds a parsed window; the same functions run in process when that
process cannot be started, and in the system monitor's sidecar, which writes counters only.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any
from pathlib import Path

from sagelaunch.profiler.artifact import write_counters, write_events
from sagelaunch.profiler.recorder import concat_ranks
from sagelaunch.profiler.schema import RankTrace, TraceMeta, arrow_array, arrow_strings


def write_window(path: Path, meta: TraceMeta, spans: RankTrace, kineto_json: str | None,
                 write_empty: bool) -> Path | None:
    """Write one window, our ``spans`` plus Kineto's events, to ``path`` (None when it held nothing and
    ``write_empty`` is false). ``kineto_json`` is torch's own Chrome export of the window (a temporary file, removed
    here once read)."""
    parts = [spans]
    if kineto_json is not None:
        from sagelaunch.profiler.kineto_reader import read_kineto  # lazy: the monitor sidecar writes counters here and never reads a trace (msgspec)

        try:
            parts.append(read_kineto(Path(kineto_json), cache=False))
        finally:
            os.unlink(kineto_json)
    table = concat_ranks([p for p in parts if len(p)], meta)
    if len(table) or write_empty:
        return write_events(table, path)
    return None


def write_counter_rows(path: Path, host: str, interval_ms: int, rows: list[tuple[int, str, int, float]]) -> Path:
    """The COUNTERS table of (ts_ns, metric, index, value) rows, written (atomically) to ``path``."""
    import numpy as np
    import pyarrow as pa

    ts, metric, index, value = zip(*rows)
    names = list(dict.fromkeys(metric))
    codes = {m: i for i, m in enumerate(names)}
    table = pa.table(  # built from buffers: pa.array() on lists would import pandas
        {
            "ts_ns": arrow_array(ts, "int64"),
            "host": pa.DictionaryArray.from_arrays(arrow_array(np.zeros(len(ts)), "int32"), arrow_strings([host])),
            "metric": pa.DictionaryArray.from_arrays(arrow_array([codes[m] for m in metric], "int32"),
                                                     arrow_strings(names)),
            "index": arrow_array(index, "int32"),
            "value": arrow_array(value, "float32"),
        }
    )
    return write_counters(table, path, {"host": host, "interval_ms": int(interval_ms)})


def warm_up() -> None:
    """Import what every write needs (this module's imports, and pyarrow's Parquet writer), ahead of the first window
    (the output process does it while training runs); the trace reader (msgspec) waits for the first window with
    Kineto's events, so a run without them never waits for it."""
    import pyarrow.parquet  # noqa: F401


# the calls the output process serves, by name
CALLS: dict[str, Callable[..., Any]] = {"write_window": write_window, "write_counter_rows": write_counter_rows}
