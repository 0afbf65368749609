"""sagelaunch.estimators.serializers: v2's names, attributes and encodings, round trips through the deserializers.
(What each sends over InvokeEndpoint is compared with the real SDK v2 in tests/parity_v2/test_deploy.py.)"""

from __future__ import annotations

import io
import subprocess
import sys

import numpy as np
import pytest

from sagelaunch.estimators import serializers as s


def stream(data: bytes | str) -> io.BytesIO:
    return io.BytesIO(data.encode() if isinstance(data, str) else data)


def test_v2_names_and_header_attributes():
    assert [s.JSONSerializer().CONTENT_TYPE, s.CSVSerializer().CONTENT_TYPE, s.NumpySerializer().CONTENT_TYPE,
            s.IdentitySerializer().CONTENT_TYPE] == ["application/json", "text/csv", "application/x-npy",
                                                     "application/octet-stream"]
    assert [s.JSONDeserializer().ACCEPT, s.CSVDeserializer().ACCEPT, s.NumpyDeserializer().ACCEPT,
            s.BytesDeserializer().ACCEPT, s.StringDeserializer().ACCEPT] == [
        ("application/json",), ("text/csv",), ("application/x-npy",), ("*/*",), ("application/json",)]
    assert s.JSONDeserializer(accept=("application/json", "text/csv")).ACCEPT == ("application/json", "text/csv")
    assert s.CSVSerializer(content_type="text/plain").CONTENT_TYPE == "text/plain"
    with pytest.raises(ValueError, match="content_type=3 must be a string naming the MIME type"):
        s.JSONSerializer(content_type=3)


def test_json_round_trip_with_arrays_inside():
    body = s.JSONSerializer().serialize({"inputs": ["a"], "x": np.array([1, 2])})
    assert s.JSONDeserializer().deserialize(stream(body), "application/json") == {"inputs": ["a"], "x": [1, 2]}
    assert s.JSONSerializer().serialize(np.array([[1.5]])) == "[[1.5]]"
    assert s.JSONSerializer().serialize(io.BytesIO(b'{"a": 1}')) == b'{"a": 1}'  # a file is sent as read


def test_csv_rows_and_round_trip():
    csv = s.CSVSerializer()
    assert csv.serialize([1, 2, "x"]) == "1,2,x"
    assert csv.serialize([[1, 2], [3, 4]]) == "1,2\n3,4"
    assert csv.serialize(["I love it", "bad, awful"]) == "I love it\nbad, awful"  # texts: one per line
    assert csv.serialize(np.array([[1, 2], [3, 4]])) == "1,2\n3,4"
    assert s.CSVDeserializer().deserialize(stream("1,2\n3,4\n"), "text/csv") == [["1", "2"], ["3", "4"]]
    with pytest.raises(ValueError, match="Cannot serialize empty array"):
        csv.serialize([])


def test_numpy_round_trips_and_the_content_types_it_reads():
    array = np.arange(6, dtype="float32").reshape(2, 3)
    npy = s.NumpySerializer().serialize(array)
    back = s.NumpyDeserializer().deserialize(stream(npy), "application/x-npy")
    assert back.dtype == np.float32 and back.tolist() == array.tolist()
    assert s.NumpySerializer(dtype="int16").serialize([[1, 2]]) == s.NumpySerializer().serialize(
        np.array([[1, 2]], dtype="int16"))
    assert s.NumpyDeserializer().deserialize(stream("[[1, 2]]"), "application/json").tolist() == [[1, 2]]
    assert s.NumpyDeserializer(dtype=float).deserialize(stream("1,2\n3,4"), "text/csv").tolist() == [[1, 2], [3, 4]]
    with pytest.raises(ValueError, match="cannot read content type text/plain"):
        s.NumpyDeserializer().deserialize(stream("x"), "text/plain")
    for empty in ([], np.array([])):
        with pytest.raises(ValueError, match="Cannot serialize empty array"):
            s.NumpySerializer().serialize(empty)


def test_numpy_never_unpickles_unless_asked():
    pickled = s.NumpySerializer().serialize({"inputs": "text"})  # an object array: numpy pickles it
    with pytest.raises(ValueError, match="allow_pickle=True"):
        s.NumpyDeserializer().deserialize(stream(pickled), "application/x-npy")
    assert s.NumpyDeserializer(allow_pickle=True).deserialize(stream(pickled), "application/x-npy").item() == {
        "inputs": "text"}


def test_bytes_and_string_deserializers_close_the_stream():
    body = stream(b"caf\xc3\xa9")
    assert s.StringDeserializer().deserialize(body, "text/plain") == "café" and body.closed
    assert s.BytesDeserializer().deserialize(stream(b"\x00\x01"), "application/octet-stream") == b"\x00\x01"
    assert s.IdentitySerializer().serialize(b"raw") == b"raw"


def test_importing_the_serializers_loads_no_numpy():
    code = "import sagelaunch.estimators.serializers, sys; print('numpy' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
