"""Read one Kineto / torch.profiler Chrome trace (.json or .json.gz) into a RankTrace.

numpy is imported only by the functions that turn the columns into arrays (rank_from_columns and after): decoding
and building the columns use the standard library and msgspec alone (a forked chunk worker never needs numpy).

Parser choice: the whole file is decompressed (ISA-L) and decoded by msgspec into typed, GC-free Structs that hold
only the fields the analysis needs (unknown keys and args are skipped inside the C decoder, never materialised),
then each column is pulled out with one list comprehension into a typed array. Measured on the 15 MB V100 trace
(CPU time): gunzip ~0.01 s (zlib: ~0.03 s), msgspec typed decode ~0.035 s (orjson.loads: ~0.2 s, and its generic
dict tree costs ~2x the memory and ~0.1 s more to build columns from and to free), columns ~0.045 s. Readers that
build columns without per-event Python objects cost more to import than they save here: pyarrow.json (~0.2 s; and it
only reads newline-delimited records, a Chrome trace is one object), polars (~0.5 s); ijson-style streaming is 5-10x
slower. Non-trace JSON falls back to orjson to say what the file is.

Timestamps: Kineto writes microseconds, as floats with a nanosecond fraction since PyTorch 2.3. We keep exact
integer nanoseconds (``floor(ts)*1000 + round(frac*1000)``) and remember in ``meta.float_us`` that the source
had fractional microseconds, so the analysis can apply HTA's rounding (ceil start, floor end; pytorch#122425).
"""

import contextlib
import sys
from array import array
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any, Union, cast

import msgspec

from sagelaunch.profiler import trace_cache, trace_chunks
from sagelaunch.profiler.schema import CAT_CPU_OP, RankTrace, TraceMeta, drop_negative_durations
from sagelaunch.profiler.trace_file import NotATrace, ProfileLoadError, read_trace_bytes

if TYPE_CHECKING:
    import numpy as np

__all__ = ["ProfileLoadError", "read_kineto", "parse_trace", "events_to_rank"]


def read_bytes(path: Path) -> bytes | bytearray:
    return read_trace_bytes(path)


class _Args(msgspec.Struct, gc=False):
    correlation: Any = -1
    stream: Any = -1
    device: Any = -1
    bytes: Any = -1
    external_id: Any = msgspec.field(default=-1, name="External id")
    input_type: Any = msgspec.field(default=None, name="Input type")


_NO_ARGS = _Args()


class _Event(msgspec.Struct, gc=False):
    cat: Any = None
    name: Any = ""
    pid: Any = -1
    tid: Any = -1
    ts: Any = None
    dur: Any = None
    args: Union[_Args, list, str, float, bool, None] = None  # only an object is used; the rest is tolerated


class _Trace(msgspec.Struct, gc=False):
    traceEvents: Union[list[_Event], None] = None
    distributedInfo: Any = None
    deviceProperties: Any = None
    baseTimeNanoseconds: Any = None


# The fast decoder: a union tagged by "ph", so that the events HTA never keeps (a third of a Kineto trace: flow
# 's'/'f', metadata 'M', instants 'i') become empty structs and their fields are skipped, not built. Each other
# phase keeps only "dur", to check that none has one (HTA would keep it); a phase outside the list, an event
# without "ph", or a non-X event with a duration sends the trace to _DECODER, which reads every event alike.
class _XEvent(_Event, tag_field="ph", tag="X"):
    pass


_OTHER_PHASES = "BEiIsftCbneMPONDRpTSFVvc()"
if TYPE_CHECKING:  # a union of structs made at run time, one per phase: mypy sees any event
    _Skipped = Any
else:
    _Skipped = Union[tuple(msgspec.defstruct(f"_Phase{ord(ph)}", [("dur", Any, None)], tag_field="ph", tag=ph,
                                             gc=False)
                           for ph in _OTHER_PHASES)]


class _FastTrace(_Trace):
    traceEvents: Union[list[Union[_XEvent, _Skipped]], None] = None


class _HeadTrace(_Trace):
    traceEvents: msgspec.Raw = None  # type: ignore[assignment]  # msgspec decodes a Raw field, not Raw | None: the events' JSON text (or `null`), left for chunks (profiler/trace_chunks.py)


_MAX_DEPTH = 1000  # msgspec raises RecursionError beyond ~1,000 levels, even inside fields it skips
_FAST_DECODER = msgspec.json.Decoder(_FastTrace)
_DECODER = msgspec.json.Decoder(Union[_Trace, list[_Event]])
_HEAD_DECODER = msgspec.json.Decoder(_HeadTrace)
_FAST_CHUNK_DECODER = msgspec.json.Decoder(list[Union[_XEvent, _Skipped]])
_CHUNK_DECODER = msgspec.json.Decoder(list[_Event])


@contextlib.contextmanager
def _nesting_capped():
    """msgspec's depth limit is Python's recursion limit, which a host program may have raised: pin it to
    _MAX_DEPTH levels above this frame while decoding, so the same file is refused the same way everywhere."""
    depth, frame = 0, cast("FrameType | None", sys._getframe())
    while frame is not None:
        depth, frame = depth + 1, frame.f_back
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(depth + _MAX_DEPTH)
    try:
        yield
    finally:
        sys.setrecursionlimit(old)


def parse_trace(path: Path) -> Any:
    return decode_trace(read_bytes(path), path)


def decode_trace(raw: bytes | bytearray, path: Path) -> Any:
    problem = None
    doc: Any
    try:
        with _nesting_capped():
            try:
                doc = _FAST_DECODER.decode(raw)
                if doc.traceEvents is None or any(
                        e.dur is not None for e in doc.traceEvents if type(e) is not _XEvent):  # noqa: E721
                    doc = _DECODER.decode(raw)
            except msgspec.ValidationError:  # another phase or shape: every event alike, or say what it is
                doc = _DECODER.decode(raw)
    except msgspec.ValidationError as exc:
        doc, problem = None, exc  # valid JSON of another shape, or events of unexpected types: say which below
    except msgspec.DecodeError as exc:
        raise ProfileLoadError(f"{path}: not valid JSON ({exc}); is the file truncated?") from None
    except RecursionError:
        raise NotATrace(
            f"{path}: JSON nested deeper than the decoder's limit of about {_MAX_DEPTH} levels (an event's args?); "
            "torch.profiler/Kineto traces nest a few levels: the file is damaged or not a trace torch wrote"
        ) from None
    if isinstance(doc, list):
        return _Trace(traceEvents=doc)
    if doc is not None and doc.traceEvents is not None:
        return doc
    import orjson

    try:
        obj = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise ProfileLoadError(f"{path}: not valid JSON ({exc}); is the file truncated?") from None
    events = obj.get("traceEvents") if isinstance(obj, dict) else obj
    if isinstance(events, list) and any(isinstance(e, dict) for e in events):
        raise ProfileLoadError(f"{path}: a trace whose events are not all JSON objects ({problem})")
    keys = sorted(obj)[:6] if isinstance(obj, dict) else type(obj).__name__
    raise NotATrace(
        f"{path}: JSON but not a trace: no 'traceEvents' list (found {keys}); "
        "expected a torch.profiler/Kineto Chrome trace"
    )


def _int_column(values: list, default: int = -1) -> array:
    """int64 values (array 'q'); values that are not integers (strings like '0x0', None) become `default` (as HTA
    does); floats and numeric strings are truncated to integers, as numpy's int64 conversion does."""
    try:
        return array("q", values)
    except (TypeError, OverflowError):
        out = array("q", bytes(8 * len(values)))
        for i, v in enumerate(values):
            try:
                out[i] = int(v)
            except (TypeError, ValueError, OverflowError):
                out[i] = default
        return out


def _float_column(values: list) -> array | list:
    """float64 values (array 'd'); values of other types are left as the list, for rank_from_columns to convert
    (numpy reads numeric strings) or refuse."""
    try:
        return array("d", values)
    except (TypeError, OverflowError):
        return values


def _encode(values: list) -> tuple[array, list[str]]:
    """Dictionary-encode a list of strings: (int32 codes, dictionary). Values that are not strings (odd JSON may
    hold numbers or lists where names belong) are encoded as their str()."""
    try:
        table: dict = dict.fromkeys(values)  # insertion-ordered distinct values, built in C
        plain = all(type(k) is str for k in table)  # noqa: E721 — on the few distinct values, not on every event
    except TypeError:  # unhashable: a list where a name belongs
        plain = False
    if not plain:
        values = [v if type(v) is str else str(v) for v in values]  # noqa: E721
        table = dict.fromkeys(values)
    for i, k in enumerate(table):
        table[k] = i
    return array("i", map(table.__getitem__, values)), list(table)


def _first_dtype(types: Any) -> str:
    if isinstance(types, list):
        for t in types:
            if isinstance(t, str) and t:
                return t
    return ""


def _complete_events(events: list) -> list:
    """Events HTA keeps: with a duration, a start and a category other than "Trace"."""
    return [e for e in events if e.dur is not None and e.ts is not None and e.cat is not None and e.cat != "Trace"]


def _check_range(ts: "np.ndarray", dur: "np.ndarray", names: list, name_id: "np.ndarray", meta: TraceMeta) -> None:
    """Refuse times that integer nanoseconds cannot hold (|ts|, dur and ts + dur within int64 after × 1000)."""
    import numpy as np

    limit = (np.iinfo(np.int64).max - abs(meta.base_ns)) / 1000 / 2  # room for ts + dur and the ns fraction
    for field, values in (("ts", ts), ("dur", dur), ("ts + dur", ts + dur)):
        bad = ~(np.abs(values) < limit)  # also catches inf and NaN
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ProfileLoadError(
                f"{meta.source}: event {names[name_id[i]]!r} has {field} = {values[i]:g} µs; times must lie within "
                f"±{limit:.3g} µs (about {limit / 3.156e13:.0f} years) to be held as integer nanoseconds. "
                f"{int(bad.sum())} event(s) are out of range: the trace is damaged; export it again"
            )


def event_columns(events: list, source: str) -> dict:
    """The columns of one run of events (a whole trace, or one chunk of its traceEvents): typed arrays (the
    standard library's, made numpy arrays by rank_from_columns) of the complete events (those with a duration, as
    HTA keeps them), in file order, with their own dictionaries.

    One list comprehension per column (~2 ms each for 45k events); transposing with zip(*map(attrgetter)) was
    measured 5x slower.
    """
    xs = _complete_events(events)
    n = len(xs)
    ts_raw = [e.ts for e in xs]
    dur_raw = [e.dur for e in xs]
    cats = [e.cat for e in xs]
    names = [e.name for e in xs]
    pids = [e.pid for e in xs]
    tids = [e.tid for e in xs]
    args = [e.args if type(e.args) is _Args else _NO_ARGS for e in xs]
    corr = [a.correlation for a in args]
    stream = [a.stream for a in args]
    device = [a.device for a in args]
    nbytes = [a.bytes for a in args]
    ext = [a.external_id for a in args]
    itypes = [a.input_type for a in args]
    cat_id, cat_dict = _encode(cats)
    name_id, name_dict = _encode(names)
    if CAT_CPU_OP in cat_dict and any(t is not None for t in itypes):  # "Input type": only with record_shapes
        dtype_id, dtype_dict = _encode([_first_dtype(t) if t is not None else "" for t in itypes])
    else:
        dtype_id, dtype_dict = array("i", bytes(4 * n)), [""] if n else []
    return {
        "events": len(events),
        "float_us": any(type(t) is float for t in ts_raw),  # noqa: E721 — int vs float decides HTA rounding
        "ts": _float_column(ts_raw),
        "dur": _float_column(dur_raw),
        "pid": _int_column(pids),
        "tid": _int_column(tids),
        "device": _int_column(device),
        "stream": _int_column(stream),
        "correlation": _int_column(corr),
        "external_id": _int_column(ext),
        "bytes": _int_column(nbytes),
        "name_id": (name_id, name_dict),
        "cat_id": (cat_id, cat_dict),
        "dtype_id": (dtype_id, dtype_dict),
    }


_INT_COLUMNS = ("pid", "tid", "device", "stream", "correlation", "external_id", "bytes")


def _numpy(part: dict, source: str) -> dict:
    """One event_columns part with numpy arrays (views of its typed arrays)."""
    import numpy as np

    def as_array(values, dtype):
        if isinstance(values, array):
            return np.frombuffer(values, dtype=dtype) if len(values) else np.empty(0, dtype=dtype)
        return np.asarray(values, dtype=dtype)

    out = dict(part)
    try:
        out.update(ts=as_array(part["ts"], np.float64), dur=as_array(part["dur"], np.float64))
    except (TypeError, ValueError):
        raise ProfileLoadError(f"{source}: event timestamps/durations are not numbers") from None
    out.update({k: as_array(part[k], np.int64) for k in _INT_COLUMNS})
    out["device"] = out["device"].astype(np.int16)
    for key in ("name_id", "cat_id", "dtype_id"):
        codes, words = part[key]
        out[key] = (as_array(codes, np.int32), words)
    return out


def _joined(parts: list[dict], key: str):
    """One column of consecutive parts; a coded string column gets one dictionary, in order of first appearance
    over the parts, as if the whole trace had been encoded at once."""
    if len(parts) == 1:
        return parts[0][key]
    import numpy as np

    if not isinstance(parts[0][key], tuple):
        return np.concatenate([p[key] for p in parts])
    table: dict = {}
    codes = []
    for p in parts:
        ids, words = p[key]
        remap = np.array([table.setdefault(w, len(table)) for w in words], dtype=np.int32)
        codes.append(remap[ids] if len(words) else ids)
    return np.concatenate(codes), list(table)


def events_to_rank(events: list, meta: TraceMeta) -> RankTrace:
    """The RankTrace of one trace's events (see rank_from_columns)."""
    return rank_from_columns([event_columns(events, meta.source)], meta)


def rank_from_columns(parts: list[dict], meta: TraceMeta) -> RankTrace:
    """A RankTrace from the event_columns of consecutive runs of a trace's events: exact nanoseconds, events with
    a negative duration dropped (with a warning), sorted by start (the file order kept in source_order)."""
    import numpy as np

    parts = [_numpy(p, meta.source) for p in parts]
    ts, dur = _joined(parts, "ts"), _joined(parts, "dur")
    name_id, name_dict = _joined(parts, "name_id")
    cat_id, cat_dict = _joined(parts, "cat_id")
    dtype_id, dtype_dict = _joined(parts, "dtype_id")
    _check_range(ts, dur, name_dict, name_id, meta)
    meta.float_us = any(p["float_us"] for p in parts)
    whole = np.floor(ts)
    ts_ns = whole.astype(np.int64) * 1000 + np.rint((ts - whole) * 1000).astype(np.int64) + meta.base_ns
    dur_ns = np.rint(dur * 1000).astype(np.int64)
    cols = {"ts_ns": ts_ns, "dur_ns": dur_ns}
    cols.update({k: _joined(parts, k) for k in _INT_COLUMNS})
    cols.update(name_id=name_id, cat_id=cat_id, dtype_id=dtype_id)
    complete = len(ts)
    cols = drop_negative_durations(cols, name_dict, meta)
    n = len(cols["ts_ns"])
    order = np.argsort(cols["ts_ns"], kind="stable")
    source_order = None
    if n and not np.all(order[:-1] < order[1:]):
        cols = {k: v[order] for k, v in cols.items()}
        source_order = np.empty_like(order)
        source_order[order] = np.arange(n)
    events = sum(p["events"] for p in parts)
    if events and not complete:
        meta.warnings.append(f"{meta.source}: no complete events (with a duration) among {events} events")
    return RankTrace(
        meta=meta, columns=cols, names=name_dict, cats=cat_dict, dtypes=dtype_dict, source_order=source_order
    )


def read_kineto(path: Path, cache: bool = True, workers: int | None = None) -> RankTrace:
    """One rank from a trace file; with `cache`, from (and into) its parsed copy (profiler/trace_cache.py)."""
    hit = trace_cache.cached(path) if cache else None
    if hit is not None:
        rank = trace_cache.load(path, hit)
        if rank is not None:
            return rank
    parts, meta, size = read_parts(path, workers)
    rank = rank_from_columns(parts, meta)
    del parts
    if cache and size >= trace_cache.MIN_JSON_BYTES and trace_cache.enabled():
        trace_cache.save(path, rank)
    return rank


def read_parts(path: Path, workers: int | None = None) -> tuple[list[dict], TraceMeta, int]:
    """(event_columns parts, TraceMeta, bytes of JSON) of a trace file, without numpy (see the module's docstring).

    A trace of 8 MB of JSON or more is decoded in chunks (profiler/trace_chunks.py), over `workers` processes
    (default: the cores not already busy; 1 decodes chunks one after the other, here, and only traces over
    trace_chunks.MAX_CHUNK_BYTES are then split at all)."""
    raw = read_bytes(path)
    size = len(raw)
    got = chunk_parts(raw, path, workers)
    if got is None:
        doc = decode_trace(raw, path)
        del raw
        got = [event_columns(doc.traceEvents, str(path))], _meta_of(doc, path)
    return got[0], got[1], size


class _NotWholeEvents(Exception):
    """A chunk that does not decode as a list of events: its cut was not between two events."""


def _decode_chunk(buf: bytes) -> list:
    try:
        with _nesting_capped():
            try:
                events = _FAST_CHUNK_DECODER.decode(buf)
                if not any(e.dur is not None for e in events if type(e) is not _XEvent):  # noqa: E721
                    return events
            except msgspec.ValidationError:
                pass
            return _CHUNK_DECODER.decode(buf)
    except (msgspec.MsgspecError, RecursionError):
        raise _NotWholeEvents from None


def read_chunked(raw: bytes | bytearray, path: Path, workers: int | None = None,
                 chunk_bytes: int | None = None) -> RankTrace | None:
    """The RankTrace of a trace decoded in chunks, equal to the whole decode's; None when chunk_parts gives none."""
    got = chunk_parts(raw, path, workers, chunk_bytes)
    return None if got is None else rank_from_columns(*got)


def chunk_parts(raw: bytes | bytearray, path: Path, workers: int | None = None,
                chunk_bytes: int | None = None) -> tuple[list[dict], TraceMeta] | None:
    """The event_columns of a trace decoded in chunks and its TraceMeta; None when the trace is too small to split
    (under two chunks of trace_chunks.MIN_CHUNK_BYTES) or is not split cleanly: the caller decodes it whole (which
    also words any error). `chunk_bytes` sets the chunks' size instead (tests)."""
    workers = workers or trace_chunks.free_cores()
    if len(raw) < 2 * (chunk_bytes or trace_chunks.MIN_CHUNK_BYTES):
        return None
    if not chunk_bytes and trace_chunks.chunk_count(len(raw), workers) < 2:
        return None  # one chunk: the whole decode, without scanning for the events' bounds first
    try:
        with _nesting_capped():
            head = _HEAD_DECODER.decode(raw)
    except (msgspec.MsgspecError, RecursionError):
        return None
    events_text = head.traceEvents
    head.traceEvents = msgspec.Raw()  # the head keeps its metadata only
    if events_text is None:
        return None
    text = bytes(memoryview(events_text))
    if not text.startswith(b"["):
        return None
    count = -(-len(text) // chunk_bytes) if chunk_bytes else trace_chunks.chunk_count(len(text), workers)
    spans = trace_chunks.split_array(text, count) if count > 1 else []
    if len(spans) < 2:
        return None
    source = str(path)

    def columns(span):
        return event_columns(_decode_chunk(trace_chunks.chunk(text, span)), source)

    parallel = workers if trace_chunks.can_fork() else 1
    try:
        parts = trace_chunks.fork_map(columns, spans, parallel)
    except (_NotWholeEvents, trace_chunks.WorkerLost):  # decoded whole, here, instead
        return None
    return parts, _meta_of(head, path)


def _rank_of(doc, path: Path) -> RankTrace:
    return events_to_rank(doc.traceEvents, _meta_of(doc, path))


def _meta_of(doc, path: Path) -> TraceMeta:
    """The rank's TraceMeta from the trace's header fields."""
    meta = TraceMeta(source=str(path), kind="kineto")
    if isinstance(doc.baseTimeNanoseconds, int) and doc.baseTimeNanoseconds > 0:
        meta.base_ns = doc.baseTimeNanoseconds  # newer Kineto: ts are µs since this epoch time
    dist = doc.distributedInfo
    if isinstance(dist, dict):
        try:
            meta.rank = int(dist.get("rank", 0))
        except (TypeError, ValueError):
            meta.warnings.append(f"{path}: distributedInfo.rank {dist.get('rank')!r} is not an integer; using 0")
        ws = dist.get("world_size")
        meta.world_size = ws if isinstance(ws, int) else None
        meta.backend = dist.get("backend")
    for dev in doc.deviceProperties or []:
        if isinstance(dev, dict) and isinstance(dev.get("id"), int):
            meta.device_names[dev["id"]] = str(dev.get("name", ""))
    return meta
