"""The parsed form of a Kineto trace is cached in the user's cache folder (never beside the user's data) and reused
while the trace is unchanged; the analysis from the cache equals the analysis from the JSON."""

from __future__ import annotations

import os
import shutil

import numpy as np
import pytest

from sagelaunch.profiler import kineto_reader, trace_cache
from tests.profiler.conftest import TRACES, analysis_json

BIG = "v100_rank0.pt.trace.json.gz"  # 15 MB of JSON: cached
SMALL = "alexnet.pt.trace.json.gz"  # parsed as fast as a cache would load: not cached


@pytest.fixture()
def trace(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv(trace_cache.CACHE_ENV, raising=False)
    dest = tmp_path / "job" / BIG
    dest.parent.mkdir()
    shutil.copy(TRACES / BIG, dest)
    return dest


def _no_json(monkeypatch):
    def refuse(path):
        raise AssertionError(f"{path}: the JSON was read although a cache exists")

    monkeypatch.setattr(kineto_reader, "read_bytes", refuse)


def test_second_read_comes_from_the_user_cache_and_nothing_lands_beside_the_trace(trace, tmp_path, monkeypatch):
    first = analysis_json(trace)
    cache = trace_cache.cached(trace)
    assert cache is not None and cache.is_relative_to(tmp_path / "xdg" / "sagelaunch" / "traces")
    assert sorted(p.name for p in trace.parent.iterdir()) == [trace.name]
    _no_json(monkeypatch)
    second = analysis_json(trace)
    assert second == first


def test_cached_columns_equal_the_parsed_ones(trace):
    parsed = kineto_reader.read_kineto(trace)
    cached = trace_cache.load(trace, trace_cache.cached(trace))
    assert set(cached.columns) == set(parsed.columns)
    for k, v in parsed.columns.items():
        np.testing.assert_array_equal(cached.columns[k], v)
        assert cached.columns[k].dtype == v.dtype
    assert (cached.names, cached.cats, cached.dtypes) == (parsed.names, parsed.cats, parsed.dtypes)
    assert cached.meta.to_dict() == parsed.meta.to_dict()


def test_a_changed_trace_is_parsed_again(trace, tmp_path):
    analysis_json(trace)
    assert trace_cache.cached(trace) is not None
    shutil.copy(TRACES / "sampled_rank0.pt.trace.json.gz", trace)  # other content, other size and mtime
    assert trace_cache.cached(trace) is None
    result = analysis_json(trace)
    alone = tmp_path / "sampled.json.gz"
    shutil.copy(TRACES / "sampled_rank0.pt.trace.json.gz", alone)
    os.environ[trace_cache.CACHE_ENV] = "0"
    try:
        fresh = analysis_json(alone)["ranks"]["0"]
        assert {**result["ranks"]["0"], "source": ""} == {**fresh, "source": ""}
    finally:
        del os.environ[trace_cache.CACHE_ENV]


def test_an_unwritable_user_cache_means_parsing_each_time(trace, tmp_path, monkeypatch):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    # root may write anywhere, so make the cache folder impossible rather than read-only
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    first = analysis_json(trace)
    assert trace_cache.cached(trace) is None and sorted(p.name for p in trace.parent.iterdir()) == [trace.name]
    monkeypatch.delenv(trace_cache.CACHE_ENV, raising=False)
    assert analysis_json(trace) == first


def test_switched_off_and_small_traces_leave_no_cache(trace, tmp_path, monkeypatch):
    monkeypatch.setenv(trace_cache.CACHE_ENV, "0")
    analysis_json(trace)
    assert trace_cache.cached(trace) is None and not list((tmp_path / "xdg").rglob("*.npz"))
    monkeypatch.delenv(trace_cache.CACHE_ENV)
    small = tmp_path / SMALL
    shutil.copy(TRACES / SMALL, small)
    analysis_json(small)
    assert trace_cache.cached(small) is None


def test_a_damaged_cache_is_ignored(trace):
    first = analysis_json(trace)
    cache = trace_cache.cached(trace)
    data = bytearray(cache.read_bytes())
    data[len(data) // 2:] = b"\0" * (len(data) - len(data) // 2)
    cache.write_bytes(bytes(data))
    assert analysis_json(trace) == first
