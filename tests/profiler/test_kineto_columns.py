"""The reader's columns from odd but valid JSON: what numpy's conversions did before the columns were built with the
standard library's typed arrays (so that decoding, and a forked chunk worker, never import numpy), value for value."""

from __future__ import annotations

import json

import numpy as np
import pytest

from sagelaunch.profiler.kineto_reader import ProfileLoadError, read_kineto


def _trace(tmp_path, events: list[dict]):
    path = tmp_path / "odd.json"
    path.write_text(json.dumps({"traceEvents": events}))
    return read_kineto(path, cache=False)


def _event(i: int, **fields) -> dict:
    return {"ph": "X", "cat": "kernel", "name": f"k{i}", "pid": 1, "tid": 2, "ts": 10 * i, "dur": 5,
            "args": {"stream": 7, "correlation": i, "device": 0}, **fields}


def test_names_that_are_not_strings_are_their_str_and_share_an_entry(tmp_path):
    rank = _trace(tmp_path, [_event(0, name=1), _event(1, name="1"), _event(2, name=["a", 2]), _event(3, cat=5)])
    names = [rank.names[i] for i in rank["name_id"]]
    assert names == ["1", "1", "['a', 2]", "k3"]
    assert rank.names.count("1") == 1
    assert [rank.cats[i] for i in rank["cat_id"]] == ["kernel", "kernel", "kernel", "5"]


def test_integer_fields_convert_as_numpy_did(tmp_path):
    odd = [1.9, "12", None, "0x0", 2**70, True]
    rank = _trace(tmp_path, [_event(i, args={"stream": v, "correlation": i}) for i, v in enumerate(odd)])
    assert rank["stream"].tolist() == [1, 12, -1, -1, -1, 1]
    assert rank["stream"].dtype == np.int64


def test_numeric_string_times_are_read_and_words_are_refused(tmp_path):
    rank = _trace(tmp_path, [_event(0, ts="10.5"), _event(1, ts=20, dur="3")])
    assert rank["ts_ns"].tolist() == [10_500, 20_000] and rank["dur_ns"].tolist() == [5_000, 3_000]
    with pytest.raises(ProfileLoadError, match="timestamps/durations are not numbers"):
        _trace(tmp_path, [_event(0, ts="soon")])
