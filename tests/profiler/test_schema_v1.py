"""Schema stability: files written as `sagelaunch.profile/1` stay readable, and new columns are additive.

tests/data/profiler/artifact_v1 was written once by the v1 writer (the alexnet trace as rank 0 of host algo-1,
plus a small COUNTERS file) and is never regenerated: it is what users' old jobs hold.
"""

from __future__ import annotations

import shutil

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from sagelaunch.profiler.loader import load_profile
from sagelaunch.profiler.schema import EVENT_INT_COLUMNS, EVENT_STRING_COLUMNS, META_KEY_SCHEMA
from tests.profiler.conftest import REPO, analysis_json

V1 = REPO / "tests" / "data" / "profiler" / "artifact_v1"
V1_TRACE = V1 / "algo-1" / "rank-0" / "trace-0000.parquet"


def test_the_committed_v1_artifact_is_read_and_analysed(analyses):
    assert pq.read_schema(V1_TRACE).metadata[META_KEY_SCHEMA] == b"sagelaunch.profile/1"
    profile = load_profile(V1)
    assert list(profile.ranks) == [0] and len(profile.ranks[0]) == 867
    assert profile.ranks[0].meta.host == "algo-1"
    result = analysis_json(profile)
    ref = analyses["alexnet.pt.trace.json.gz"]["ranks"]["0"]
    for key in ("kernels", "top_kernels", "gpu_activity", "memory_ops"):
        assert result["ranks"]["0"][key] == ref[key], key
    cpu = result["hosts"]["algo-1"]["metrics"]["cpu_util"]
    assert cpu["samples"] == 6 and cpu["mean"] == 35.0


def test_the_current_writer_writes_every_v1_column():
    from sagelaunch.profiler.artifact import write_events

    old = pq.read_schema(V1_TRACE)
    rank = load_profile(V1).ranks[0]
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as tmp:
        new = pq.read_schema(write_events(rank, Path(tmp) / "trace-0000.parquet"))
    for field in old:  # additive only: every v1 column is still there, with its type
        assert new.field(field.name).type == field.type, field.name


def test_a_new_column_is_additive_and_a_missing_one_is_filled(tmp_path):
    base = load_profile(V1).ranks[0]
    table = pq.read_table(V1_TRACE)
    meta = table.schema.metadata
    extra = table.append_column("gpu_memory_bytes", pa.array(np.arange(len(table), dtype=np.int64)))
    dest = tmp_path / "newer" / "algo-1" / "rank-0"
    dest.mkdir(parents=True)
    pq.write_table(extra.replace_schema_metadata(meta), dest / "trace-0000.parquet")
    newer = load_profile(tmp_path / "newer").ranks[0]
    for col in EVENT_INT_COLUMNS:
        np.testing.assert_array_equal(newer[col], base[col])
    assert "gpu_memory_bytes" not in newer.columns
    less = table.drop_columns(["bytes", "dtype"]).replace_schema_metadata(meta)
    older = tmp_path / "older" / "algo-1" / "rank-0"
    older.mkdir(parents=True)
    pq.write_table(less, older / "trace-0000.parquet")
    shutil.copy(V1 / "algo-1" / "system-0000.parquet", tmp_path / "older" / "algo-1")
    rank = load_profile(tmp_path / "older").ranks[0]
    assert (rank["bytes"] == -1).all() and rank.dtypes == [""] and set(rank.columns) >= {
        *EVENT_INT_COLUMNS, *(c + "_id" for c in EVENT_STRING_COLUMNS)}
    np.testing.assert_array_equal(rank["ts_ns"], base["ts_ns"])
