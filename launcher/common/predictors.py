"""Predictors: what `deploy` returns. `predict(data)` serializes, calls the endpoint and deserializes;
`delete()` removes the endpoint and everything created for it.

A predictor takes the SageMaker SDK v2's serializer/deserializer objects (estimators.serializers, or
sagemaker.serializers when installed): a serializer's CONTENT_TYPE becomes InvokeEndpoint's ContentType
and its serialize(data) the body; a deserializer's ACCEPT (joined by ", ") the Accept header and its
deserialize(stream, content_type) the result. Without them a predictor sends JSON (bytes as they are)
and parses a JSON answer: the plain `Model(...).deploy` default.
"""

from __future__ import annotations

import io
import json
from abc import ABC, abstractmethod
from typing import Any

from sagelaunch.jobspec.errors import SagelaunchError, SagelaunchRuntimeError
from sagelaunch.launcher.sagemaker.endpoint import (
    delete_endpoint,
    delete_one,
    endpoint_config_name,
    invoke,
    model_names,
)

JSON_TYPE = "application/json"
# predict()'s optional InvokeEndpoint fields, as the SDK names its arguments
INVOKE_OPTIONS = {"target_model": "TargetModel", "target_variant": "TargetVariant", "inference_id": "InferenceId",
                  "custom_attributes": "CustomAttributes"}


class PredictionError(SagelaunchRuntimeError):
    """The endpoint refused or failed a request; `status` is the serving container's HTTP status."""

    def __init__(self, endpoint: str, status: int, message: str):
        self.endpoint, self.status, self.message = endpoint, status, message
        super().__init__(f"endpoint {endpoint} answered {status}: {message}")


def _serialize(data: Any) -> bytes:
    if isinstance(data, bytes):
        return data
    return json.dumps(data).encode("utf-8")


def _error_message(body: bytes) -> str:
    text = body.decode("utf-8", errors="replace")
    try:
        return str(json.loads(text).get("error", text))
    except (json.JSONDecodeError, AttributeError):
        return text


def _header(value: Any) -> str:
    return value if isinstance(value, str) else ", ".join(value)


class Predictor(ABC):
    endpoint_name: str

    def __init__(self, serializer: Any = None, deserializer: Any = None):
        self.serializer, self.deserializer = serializer, deserializer

    @property
    def content_type(self) -> str:
        return self.serializer.CONTENT_TYPE if self.serializer is not None else JSON_TYPE

    @property
    def accept(self) -> tuple[str, ...]:
        if self.deserializer is None:
            return (JSON_TYPE,)
        accept = self.deserializer.ACCEPT
        return (accept,) if isinstance(accept, str) else tuple(accept)

    def predict(self, data: Any, initial_args: dict[str, Any] | None = None, target_model: str | None = None,
                target_variant: str | None = None, inference_id: str | None = None,
                custom_attributes: str | None = None, *, content_type: str | None = None,
                accept: str | None = None) -> Any:
        """Send `data` through the serializer and return the deserialized answer (v2's predict).

        initial_args: InvokeEndpoint fields sent as given (ContentType/Accept there win, as in v2);
        content_type / accept: header overrides (sagelaunch's shorthand).
        """
        args = dict(initial_args or {})
        given = {"target_model": target_model, "target_variant": target_variant, "inference_id": inference_id,
                 "custom_attributes": custom_attributes}
        args.update({INVOKE_OPTIONS[k]: v for k, v in given.items() if v})
        body = self.serializer.serialize(data) if self.serializer is not None else _serialize(data)
        sent_type = args.pop("ContentType", None) or content_type or _header(self.content_type)
        sent_accept = args.pop("Accept", None) or accept or _header(self.accept)
        args.pop("EndpointName", None)
        status, answer, answer_type = self._invoke(body, sent_type, sent_accept, args)
        if status != 200:
            raise PredictionError(self.endpoint_name, status, _error_message(answer))
        if self.deserializer is not None:
            return self.deserializer.deserialize(io.BytesIO(answer), answer_type or "application/octet-stream")
        return json.loads(answer) if answer_type.startswith(JSON_TYPE) else answer

    @abstractmethod
    def _invoke(self, body: bytes | str, content_type: str, accept: str,
                options: dict[str, Any]) -> tuple[int, bytes, str]: ...

    @abstractmethod
    def delete(self) -> None:
        """Remove the endpoint and what was created for it."""

    def delete_endpoint(self, delete_endpoint_config: bool = True) -> None:  # the SageMaker SDK's name
        self.delete()

    def delete_model(self) -> None:  # noqa: B027 (v2's name; a no-op: a local endpoint's model goes with it)
        """Delete the model(s) behind the endpoint."""

    def delete_predictor(self) -> None:  # the SageMaker SDK's other name
        self.delete()

    def __enter__(self) -> "Predictor":
        return self

    def __exit__(self, *exc: object) -> None:
        self.delete()

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.endpoint_name}>"


class LocalPredictor(Predictor):
    """An endpoint served on 127.0.0.1 by launcher.local.serving.server."""

    def __init__(self, endpoint, serializer: Any = None, deserializer: Any = None):
        super().__init__(serializer, deserializer)
        self.endpoint = endpoint  # launcher.local.serving.endpoint.LocalEndpoint, started
        self.endpoint_name = endpoint.name

    @property
    def url(self) -> str | None:
        return self.endpoint.url

    def _invoke(self, body: bytes | str, content_type: str, accept: str,
                options: dict[str, Any]) -> tuple[int, bytes, str]:
        if options:
            raise SagelaunchError(f"{', '.join(sorted(options))}: not available on a local endpoint (one model, one "
                                  "variant); drop them or deploy to an ml.* instance type",
                                  field=sorted(options)[0], value=options[sorted(options)[0]],
                                  allowed="none on a local endpoint",
                                  fix="drop them or deploy to an ml.* instance type")
        if isinstance(body, str):
            body = body.encode("utf-8")
        return self.endpoint.invoke(body, content_type, accept)

    def delete(self) -> None:
        self.endpoint.stop()


class SageMakerPredictor(Predictor):
    """A SageMaker endpoint, called through InvokeEndpoint."""

    def __init__(self, resources, serializer: Any = None, deserializer: Any = None):
        super().__init__(serializer, deserializer)
        self.resources = resources  # launcher.sagemaker.endpoint.EndpointResources
        self.endpoint_name = resources.endpoint_name
        self.deleted: list[str] = []
        self._endpoint_config: str | None = None
        self._models: list[str] | None = None

    def _invoke(self, body: bytes | str, content_type: str, accept: str,
                options: dict[str, Any]) -> tuple[int, bytes, str]:
        return invoke(self.endpoint_name, self.resources.region, body, content_type, accept, **options)

    def _config_name(self) -> str:
        if self._endpoint_config is None:  # v2 asks DescribeEndpoint once, then keeps the answer
            self._endpoint_config = endpoint_config_name(self.endpoint_name, self.resources.region)
        return self._endpoint_config

    def _model_names(self) -> list[str]:
        if self._models is None:
            self._models = model_names(self._config_name(), self.resources.region)
        return self._models

    def delete_endpoint(self, delete_endpoint_config: bool = True) -> None:
        """v2's requests in v2's order: DescribeEndpoint, DeleteEndpointConfig, DeleteEndpoint; the model stays."""
        if delete_endpoint_config:
            delete_one("endpoint config", self._config_name(), self.resources.region)
            self.deleted.append(f"endpoint config {self._config_name()}")
        delete_one("endpoint", self.endpoint_name, self.resources.region)
        self.deleted.append(f"endpoint {self.endpoint_name}")

    def delete_model(self) -> None:
        """v2's: the endpoint config's models (DescribeEndpointConfig), each DeleteModel."""
        for name in self._model_names():
            delete_one("model", name, self.resources.region)
            self.deleted.append(f"model {name}")

    def delete(self) -> None:
        """sagelaunch's: the endpoint, its config and the model deploy made."""
        self.deleted = delete_endpoint(self.resources)
