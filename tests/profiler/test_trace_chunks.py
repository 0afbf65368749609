"""A trace decoded in chunks (profiler/trace_chunks.py, in this process or in forked workers) gives exactly the
RankTrace of the whole decode; cuts that do not fall between events send the trace to the whole decode."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from sagelaunch.profiler import kineto_reader as kr
from sagelaunch.profiler import trace_chunks
from sagelaunch.profiler.trace_file import read_trace_bytes

TRACES = Path(__file__).resolve().parents[1] / "data" / "traces"
V100 = TRACES / "v100_rank0.pt.trace.json.gz"


def whole(raw, path):
    return kr._rank_of(kr.decode_trace(raw, path), path)


def assert_same(a, b):
    assert a.meta == b.meta
    assert (a.names, a.cats, a.dtypes) == (b.names, b.cats, b.dtypes)
    assert a.columns.keys() == b.columns.keys()
    for k in a.columns:
        assert a.columns[k].dtype == b.columns[k].dtype, k
        assert np.array_equal(a.columns[k], b.columns[k]), k
    assert (a.source_order is None) == (b.source_order is None)
    if a.source_order is not None:
        assert np.array_equal(a.source_order, b.source_order)


@pytest.mark.parametrize("workers,chunk_bytes", [(1, 1 << 20), (3, 1 << 20), (2, 300_000)])
def test_chunked_decode_equals_whole_decode(workers, chunk_bytes):
    raw = read_trace_bytes(V100)
    chunked = kr.read_chunked(raw, V100, workers=workers, chunk_bytes=chunk_bytes)
    assert chunked is not None, "the V100 trace splits between events"
    assert_same(chunked, whole(raw, V100))


def test_default_chunking_of_a_big_trace_equals_whole(tmp_path):
    raw = read_trace_bytes(V100)  # 15 MB of JSON: chunks of >= MIN_CHUNK_BYTES on two or more cores
    assert len(raw) >= 2 * trace_chunks.MIN_CHUNK_BYTES
    assert_same(kr.read_kineto(V100, cache=False, workers=2), whole(raw, V100))


def events_json(events, **header) -> bytes:
    return json.dumps({**header, "traceEvents": events}).encode()  # one line, ", " between events


def x_event(i, name="op", **extra):
    return {"ph": "X", "cat": "cpu_op", "name": name, "pid": 1, "tid": 2, "ts": 1000.5 + i, "dur": 1.25,
            "args": {"External id": i, "nested": {"a": [1, {"b": 2}]}, "after": 1}, **extra}


def test_cuts_inside_strings_or_nested_objects_fall_back_to_the_whole_decode(tmp_path):
    path = tmp_path / "t.json"
    # one event whose name holds nearly all the bytes, full of "},": every cut near the middle is inside it
    raw = events_json([x_event(0), x_event(1, name='}, {"ph": "X"},' * 20_000), x_event(2)])
    assert kr.read_chunked(raw, path, workers=1, chunk_bytes=len(raw) // 2) is None
    # "}, {" between objects of a list nested in args: cuts there do not decode either
    raw = events_json([x_event(i, deep=[{"c": 1}, {"c": 2}] * 200) for i in range(300)])
    assert kr.read_chunked(raw, path, workers=1, chunk_bytes=len(raw) // 3) is None
    raw = events_json([x_event(i) for i in range(3000)])  # "}, "after"" is never taken for a cut
    rank = kr.read_chunked(raw, path, workers=2, chunk_bytes=20_000)
    assert_same(rank, whole(raw, path))


def test_chunks_keep_what_the_whole_decode_keeps(tmp_path):
    """Other phases, events without "ph", and a non-X event with a duration (HTA keeps it) give the same rows."""
    path = tmp_path / "t.json"
    events = []
    for i in range(4000):
        events.append(x_event(i, name=f"op{i % 7}"))
        events.append({"ph": "f", "id": i, "pid": 1, "tid": 2, "ts": 1000.0 + i, "cat": "ac2g", "name": "ac2g"})
    events[5000] = {"ph": "i", "cat": "cpu_instant_event", "name": "odd", "pid": 1, "tid": 2, "ts": 5.0, "dur": 3}
    events[6001] = {"cat": "cpu_op", "name": "no phase", "pid": 1, "tid": 2, "ts": 7.0, "dur": 2}
    events[7001] = {"ph": "Z", "cat": "cpu_op", "name": "unknown phase", "pid": 1, "tid": 2, "ts": 9.0, "dur": 2}
    raw = events_json(events, distributedInfo={"rank": 3, "world_size": 4}, baseTimeNanoseconds=7)
    reference = whole(raw, path)
    assert {"odd", "no phase", "unknown phase"} <= set(reference.names)
    for workers in (1, 2):
        rank = kr.read_chunked(raw, path, workers=workers, chunk_bytes=len(raw) // 5)
        assert rank is not None
        assert_same(rank, reference)
    assert reference.meta.rank == 3 and reference.meta.base_ns == 7


def test_a_bad_event_in_a_later_chunk_is_reported_as_by_the_whole_decode(tmp_path):
    path = tmp_path / "t.json"
    events = [x_event(i) for i in range(3000)]
    events[2500]["ts"] = "soon"
    raw = events_json(events)
    with pytest.raises(kr.ProfileLoadError) as by_whole:
        whole(raw, path)
    for workers in (1, 3):
        with pytest.raises(kr.ProfileLoadError) as by_chunks:
            kr.read_chunked(raw, path, workers=workers, chunk_bytes=len(raw) // 4)
        assert str(by_chunks.value) == str(by_whole.value)


def test_fork_map_keeps_order_and_raises_what_a_worker_raised():
    assert trace_chunks.fork_map(lambda x: x * x, list(range(10)), 3) == [x * x for x in range(10)]

    def fail_on_seven(x):
        if x == 7:
            raise ValueError("seven")
        return x

    with pytest.raises(ValueError, match="seven"):
        trace_chunks.fork_map(fail_on_seven, list(range(10)), 3)  # 7 runs in a child (7 % 3 == 1)


def test_split_array_cuts_after_a_brace_before_a_comma():
    text = b'[{"a": 1}, {"a": 2}, {"a": 3}, {"a": 4}]'
    spans = trace_chunks.split_array(text, 3)
    assert len(spans) == 3
    assert [json.loads(trace_chunks.chunk(text, s)) for s in spans] == [[{"a": 1}, {"a": 2}], [{"a": 3}], [{"a": 4}]]
    assert trace_chunks.chunk_count(10 << 20, 16) == 2  # chunks of at least MIN_CHUNK_BYTES
    assert trace_chunks.chunk_count(1 << 30, 2) == 16  # and at most MAX_CHUNK_BYTES


def test_a_worker_that_dies_is_reported_as_lost():
    import os

    def die_on_one(x):
        if x == 1:
            os._exit(3)  # as if killed: no result reaches the parent
        return x

    with pytest.raises(trace_chunks.WorkerLost):
        trace_chunks.fork_map(die_on_one, [0, 1, 2, 3], 2)
