"""Serializers and deserializers with the SageMaker SDK v2's names, attributes and behaviour.

    predictor = est.deploy(1, "ml.m5.xlarge", serializer=JSONSerializer(), deserializer=JSONDeserializer())

A serializer has `CONTENT_TYPE` (sent as InvokeEndpoint's ContentType) and `serialize(data)`; a
deserializer has `ACCEPT` (a tuple, sent joined by ", " as Accept) and `deserialize(stream, content_type)`.
`from sagemaker.serializers import …` / `from sagemaker.deserializers import …` map to this module;
a real `sagemaker.serializers` object works too (the predictors use only those two attributes and
methods). numpy is imported only by the NumPy classes and when data is an array.
"""

from __future__ import annotations

import csv
import io
import json
from types import ModuleType
from typing import Any
from sagelaunch.jobspec.errors import SagelaunchError

JSON = "application/json"
CSV = "text/csv"
NPY = "application/x-npy"


def _numpy() -> ModuleType:
    import numpy

    return numpy


def _is_ndarray(value: Any) -> bool:
    return type(value).__module__ == "numpy" and type(value).__name__ == "ndarray"


def _check_media_type(field: str, value: Any) -> None:
    if not isinstance(value, str):
        raise SagelaunchError(f"{field}={value!r} must be a string naming the MIME type, e.g. 'application/json' or "
                              "'text/csv'", field=field, value=value, allowed="a MIME type string",
                              fix="pass e.g. 'application/json' or 'text/csv'")


# ------------------------------------------------------------------ serializers
class BaseSerializer:
    """What a serializer offers: CONTENT_TYPE and serialize(data) → bytes or str."""

    @property
    def CONTENT_TYPE(self) -> str:  # noqa: N802 (the SDK's name)
        raise NotImplementedError

    def serialize(self, data: Any) -> Any:
        raise NotImplementedError


class SimpleBaseSerializer(BaseSerializer):
    def __init__(self, content_type: str = JSON) -> None:
        _check_media_type("content_type", content_type)
        self.content_type = content_type

    @property
    def CONTENT_TYPE(self) -> str:  # noqa: N802 (the SDK's name)
        return self.content_type

    def __repr__(self) -> str:
        return f"{type(self).__name__}(content_type={self.content_type!r})"


class JSONSerializer(SimpleBaseSerializer):
    """JSON text; numpy arrays (at the top or as a dict's values) become lists; a file is sent as read."""

    def serialize(self, data: Any) -> Any:
        if isinstance(data, dict):
            return json.dumps({k: v.tolist() if _is_ndarray(v) else v for k, v in data.items()})
        if hasattr(data, "read"):
            return data.read()
        if _is_ndarray(data):
            return json.dumps(data.tolist())
        return json.dumps(data)


class CSVSerializer(SimpleBaseSerializer):
    """One CSV row per inner sequence (a flat sequence is one row); a str is sent as it is."""

    def __init__(self, content_type: str = CSV) -> None:
        super().__init__(content_type)

    def serialize(self, data: Any) -> Any:
        if hasattr(data, "read"):
            return data.read()
        if hasattr(data, "to_csv"):  # a pandas DataFrame
            return data.to_csv(header=False, index=False)
        many_rows = (_sequence_like(data) and hasattr(data, "__setitem__") and len(data) > 0
                     and _sequence_like(data[0]))
        if many_rows:
            return "\n".join(self._row(row) for row in data)
        return self._row(data)

    @staticmethod
    def _row(data: Any) -> str:
        if isinstance(data, str):
            return data
        if _is_ndarray(data):
            data = data.flatten()
        if hasattr(data, "__len__"):
            if len(data) == 0:
                raise SagelaunchError("Cannot serialize empty array", field="data", value=data,
                                      allowed="a non-empty array", fix="send at least one value")
            buffer = io.StringIO()
            csv.writer(buffer, delimiter=",").writerow(data)
            return buffer.getvalue().rstrip("\r\n")
        raise SagelaunchError(f"Unable to handle input format: {type(data)}", field="data", value=type(data).__name__,
                              allowed="an array, a list, a string or a file", fix="pass the data as a list or array")


def _sequence_like(data: Any) -> bool:
    return hasattr(data, "__iter__") and hasattr(data, "__getitem__")


class NumpySerializer(SimpleBaseSerializer):
    """The .npy format (numpy.save) of an array, a list (as numpy.array(data, dtype)) or any value."""

    def __init__(self, dtype: Any = None, content_type: str = NPY) -> None:
        super().__init__(content_type)
        self.dtype = dtype

    def serialize(self, data: Any) -> Any:
        np = _numpy()
        if isinstance(data, np.ndarray):
            if data.size == 0:
                raise SagelaunchError("Cannot serialize empty array.", field="data", value=data,
                                      allowed="a non-empty array", fix="send at least one value")
            return self._npy(data)
        if isinstance(data, list):
            if not data:
                raise SagelaunchError("Cannot serialize empty array.", field="data", value=data,
                                      allowed="a non-empty list", fix="send at least one value")
            return self._npy(np.array(data, self.dtype))
        if hasattr(data, "read"):  # a file or buffer, assumed to hold .npy data
            return data.read()
        return self._npy(np.array(data))

    @staticmethod
    def _npy(array: Any) -> bytes:
        buffer = io.BytesIO()
        _numpy().save(buffer, array)
        return buffer.getvalue()


class IdentitySerializer(SimpleBaseSerializer):
    """The data as it is (bytes, or a str)."""

    def __init__(self, content_type: str = "application/octet-stream") -> None:
        super().__init__(content_type)

    def serialize(self, data: Any) -> Any:
        return data


# ------------------------------------------------------------------ deserializers
class BaseDeserializer:
    """What a deserializer offers: ACCEPT and deserialize(stream, content_type)."""

    @property
    def ACCEPT(self) -> tuple[str, ...] | list[str]:  # noqa: N802 (the SDK's name: a tuple, or the list given)
        raise NotImplementedError

    def deserialize(self, stream: Any, content_type: str) -> Any:
        raise NotImplementedError


class SimpleBaseDeserializer(BaseDeserializer):
    def __init__(self, accept: str | tuple[str, ...] | list[str] = "*/*") -> None:
        self.accept = accept

    @property
    def ACCEPT(self) -> tuple[str, ...] | list[str]:  # noqa: N802 (the SDK's name: a tuple, or the list given)
        return (self.accept,) if isinstance(self.accept, str) else self.accept

    def __repr__(self) -> str:
        return f"{type(self).__name__}(accept={self.accept!r})"


class BytesDeserializer(SimpleBaseDeserializer):
    def deserialize(self, stream: Any, content_type: str) -> bytes:
        try:
            return stream.read()
        finally:
            stream.close()


class StringDeserializer(SimpleBaseDeserializer):
    def __init__(self, encoding: str = "UTF-8", accept: str | tuple[str, ...] = JSON) -> None:
        super().__init__(accept)
        self.encoding = encoding

    def deserialize(self, stream: Any, content_type: str) -> str:
        try:
            return stream.read().decode(self.encoding)
        finally:
            stream.close()


class JSONDeserializer(SimpleBaseDeserializer):
    def __init__(self, accept: str | tuple[str, ...] = JSON) -> None:
        super().__init__(accept)

    def deserialize(self, stream: Any, content_type: str) -> Any:
        try:
            return json.loads(stream.read().decode("utf-8"))
        finally:
            stream.close()


class CSVDeserializer(SimpleBaseDeserializer):
    """A list of rows, each a list of str."""

    def __init__(self, encoding: str = "utf-8", accept: str | tuple[str, ...] = CSV) -> None:
        super().__init__(accept)
        self.encoding = encoding

    def deserialize(self, stream: Any, content_type: str) -> list[list[str]]:
        try:
            return list(csv.reader(stream.read().decode(self.encoding).splitlines()))
        finally:
            stream.close()


class NumpyDeserializer(SimpleBaseDeserializer):
    """A numpy array from a text/csv, application/json, application/x-npy or application/x-npz answer."""

    def __init__(self, dtype: Any = None, accept: str | tuple[str, ...] = NPY, allow_pickle: bool = False) -> None:
        super().__init__(accept)
        self.dtype, self.allow_pickle = dtype, allow_pickle

    def deserialize(self, stream: Any, content_type: str) -> Any:
        np = _numpy()
        try:
            body = stream.read()
        finally:
            stream.close()
        if content_type == CSV:
            return np.genfromtxt(io.StringIO(body.decode("utf-8")), delimiter=",", dtype=self.dtype)
        if content_type == JSON:
            return np.array(json.loads(body.decode("utf-8")), dtype=self.dtype)
        if content_type in (NPY, "application/x-npz"):
            try:
                return np.load(io.BytesIO(body), allow_pickle=self.allow_pickle)
            except ValueError as exc:
                raise SagelaunchError("the answer holds pickled objects; pass NumpyDeserializer(allow_pickle=True) "
                                      "only for an endpoint you trust", field="allow_pickle", value=self.allow_pickle,
                                      allowed="True for an endpoint you trust",
                                      fix="pass NumpyDeserializer(allow_pickle=True)") from exc
        raise SagelaunchError(f"{type(self).__name__} cannot read content type {content_type}.",
                              field="content_type", value=content_type, allowed=f"{CSV}, {JSON}, {NPY}, application/x-npz",
                              fix="use a deserializer that reads this content type")


__all__ = [
    "BaseSerializer", "SimpleBaseSerializer", "JSONSerializer", "CSVSerializer", "NumpySerializer",
    "IdentitySerializer", "BaseDeserializer", "SimpleBaseDeserializer", "BytesDeserializer", "StringDeserializer",
    "JSONDeserializer", "CSVDeserializer", "NumpyDeserializer",
]
