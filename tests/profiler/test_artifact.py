"""The Parquet artifact: round trip, versioned schema, and readable by pandas, polars and duckdb."""

from __future__ import annotations

import numpy as np
import pytest

from sagelaunch.profiler.artifact import read_events, write_events
from sagelaunch.profiler.loader import ProfileLoadError, load_profile
from sagelaunch.profiler.schema import EVENT_INT_COLUMNS, SCHEMA_VERSION
from tests.profiler.conftest import TRACES


@pytest.fixture(scope="module")
def artifact(tmp_path_factory):
    """The V100 trace converted to our artifact, as <out>/algo-1/rank-0/trace-0000.parquet."""
    rank = load_profile(TRACES / "v100_rank0.pt.trace.json.gz").ranks[0]
    out = tmp_path_factory.mktemp("artifact")
    path = write_events(rank, out / "algo-1" / "rank-0" / "trace-0000.parquet")
    return rank, out, path


def test_round_trip_keeps_every_column(artifact):
    rank, _, path = artifact
    back = read_events([path])
    assert len(back) == len(rank)
    for col in EVENT_INT_COLUMNS:
        np.testing.assert_array_equal(back[col], rank[col])
    assert [back.names[i] for i in back["name_id"][:50]] == [rank.names[i] for i in rank["name_id"][:50]]
    assert back.meta.rank == 0 and back.meta.float_us and back.meta.device_names[0].startswith("Tesla V100")


def test_analysis_of_artifact_equals_analysis_of_trace(artifact, analyses):
    from tests.profiler.conftest import analysis_json

    _, out, _ = artifact
    ours = analysis_json(out)["ranks"]["0"]
    ref = analyses["v100_rank0.pt.trace.json.gz"]["ranks"]["0"]
    for key in ("kernels", "top_kernels", "gpu_activity", "memory_ops", "precision"):
        assert ours[key] == ref[key], key
    # the artifact is time-sorted, so HTA's tie order is gone; the breakdown still agrees within 0.5%
    for key, value in ref["temporal"].items():
        assert ours["temporal"][key] == pytest.approx(value, rel=0.005, abs=1)


def test_artifact_is_much_smaller_than_the_json(artifact):
    import gzip

    _, _, path = artifact
    json_size = len(gzip.decompress((TRACES / "v100_rank0.pt.trace.json.gz").read_bytes()))
    assert path.stat().st_size * 20 < json_size


def test_readable_by_pandas_polars_and_duckdb(artifact):
    import duckdb
    import pandas as pd
    import polars as pl

    rank, _, path = artifact
    kernels = int((rank["cat_id"] == rank.cats.index("kernel")).sum())
    df = pd.read_parquet(path)
    assert len(df) == len(rank) and (df["cat"] == "kernel").sum() == kernels
    assert str(df["ts_ns"].dtype) == "int64" and str(df["name"].dtype) == "category"
    pf = pl.read_parquet(path)
    assert pf.filter(pl.col("cat") == "kernel").height == kernels
    n = duckdb.connect().execute(f"select count(*) from '{path}' where cat = 'kernel'").fetchone()[0]
    assert n == kernels
    import pyarrow.parquet as pq

    assert pq.read_schema(path).metadata[b"sagelaunch.schema"].decode() == SCHEMA_VERSION


def test_rejects_foreign_and_future_parquet(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    foreign = tmp_path / "trace-0000.parquet"
    pq.write_table(pa.table({"x": [1]}), foreign)
    with pytest.raises(ProfileLoadError, match="not our artifact"):
        load_profile(foreign)
    future = tmp_path / "f" / "trace-0000.parquet"
    future.parent.mkdir()
    pq.write_table(pa.table({"x": [1]}).replace_schema_metadata({"sagelaunch.schema": "sagelaunch.profile/9"}), future)
    with pytest.raises(ProfileLoadError, match="upgrade sagelaunch"):
        load_profile(future)


def test_corrupt_artifact_is_skipped_with_a_reason(artifact, tmp_path):
    import shutil

    _, out, path = artifact
    job = tmp_path / "job"
    shutil.copytree(out, job)
    bad = job / "algo-2" / "rank-1" / "trace-0000.parquet"
    bad.parent.mkdir(parents=True)
    bad.write_bytes(b"PAR1 this is not parquet")
    profile = load_profile(job)
    assert list(profile.ranks) == [0]
    assert any("unreadable Parquet" in w and "algo-2" in w for w in profile.warnings)
    with pytest.raises(ProfileLoadError, match="unreadable Parquet"):
        load_profile(bad)
