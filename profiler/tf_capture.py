"""TensorFlow device activity: tf.profiler's session (XSpace) as rows of our EVENTS table.

tf.profiler writes ``<logdir>/plugins/profile/<run>/<host>.xplane.pb``; TensorFlow's own converter
(``xspace_to_tools_data(..., "trace_viewer@")``, the data TensorBoard's trace viewer shows) turns it into Chrome
trace JSON, which our Kineto reader reads. TF names no categories, so we give them: events of a ``/device:GPU:N``
process are GPU work (``kernel``, device N, the thread as stream), events of the host are ``cpu_op``. TF's times
are µs since the session started; we add the epoch time we took when we started it (within about a
millisecond of TF's own start).
"""

from __future__ import annotations

import re
from pathlib import Path

from sagelaunch.profiler.kineto_reader import decode_trace, events_to_rank
from sagelaunch.profiler.schema import CAT_CPU_OP, CAT_KERNEL, RankTrace, TraceMeta

_GPU = re.compile(r"/device:GPU:(\d+)")


def _chrome_json(logdir: Path) -> bytes | None:
    from tensorflow.python.profiler.internal import _pywrap_profiler_plugin as plugin

    spaces = sorted(logdir.glob("plugins/profile/*/*.xplane.pb"))
    if not spaces:
        return None
    data, ok = plugin.xspace_to_tools_data([str(spaces[-1])], "trace_viewer@", {})
    return bytes(data) if ok and data else None


def with_categories(doc: dict) -> dict:
    """The Chrome trace of tf.profiler with Kineto's categories, devices and streams filled in."""
    gpu_of = {}
    for e in doc.get("traceEvents", []):
        if e.get("ph") == "M" and e.get("name") == "process_name":
            m = _GPU.search(str((e.get("args") or {}).get("name", "")))
            if m:
                gpu_of[e.get("pid")] = int(m.group(1))
    events = []
    for e in doc.get("traceEvents", []):
        if e.get("ph") != "X":
            continue
        args = dict(e.get("args") or {})
        if e.get("pid") in gpu_of:
            e["cat"] = CAT_KERNEL
            args.update(device=gpu_of[e["pid"]], stream=e.get("tid", 0))
        else:
            e["cat"] = CAT_CPU_OP
        args.pop("correlation", None)  # TF's ids do not link launches as Kineto's do
        e["args"] = args
        events.append(e)
    return {"traceEvents": events}


def read_tf_session(logdir: Path, start_ns: int, meta: TraceMeta) -> RankTrace | None:
    """The events of the tf.profiler session saved under `logdir` (None when it saved nothing)."""
    import orjson

    raw = _chrome_json(logdir)
    if raw is None:
        return None
    doc = decode_trace(orjson.dumps(with_categories(orjson.loads(raw))), logdir)
    tf_meta = TraceMeta(rank=meta.rank, host=meta.host, world_size=meta.world_size, kind="sagelaunch",
                        source="tf.profiler", base_ns=start_ns)
    return events_to_rank(doc.traceEvents, tf_meta)
