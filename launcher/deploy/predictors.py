"""Predictors: what `Model.deploy` returns. `predict(data)` sends JSON and returns the parsed answer;
`delete()` removes the endpoint and everything created for it."""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from typing import Any

JSON_TYPE = "application/json"


class PredictionError(RuntimeError):
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


class Predictor(ABC):
    endpoint_name: str

    def predict(self, data: Any, content_type: str = JSON_TYPE, accept: str = JSON_TYPE) -> Any:
        """Send `data` ({"inputs": "text"}; bytes are sent as they are) and return the decoded answer."""
        status, body, answer_type = self._invoke(_serialize(data), content_type, accept)
        if status != 200:
            raise PredictionError(self.endpoint_name, status, _error_message(body))
        return json.loads(body) if answer_type.startswith(JSON_TYPE) else body

    @abstractmethod
    def _invoke(self, body: bytes, content_type: str, accept: str) -> tuple[int, bytes, str]: ...

    @abstractmethod
    def delete(self) -> None:
        """Remove the endpoint and what was created for it."""

    def delete_endpoint(self) -> None:  # the SageMaker SDK's name
        self.delete()

    def __enter__(self) -> "Predictor":
        return self

    def __exit__(self, *exc: object) -> None:
        self.delete()

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.endpoint_name}>"


class LocalPredictor(Predictor):
    """An endpoint served on 127.0.0.1 by launcher.deploy.local_server."""

    def __init__(self, endpoint):
        self.endpoint = endpoint  # launcher.deploy.local_endpoint.LocalEndpoint, started
        self.endpoint_name = endpoint.name

    @property
    def url(self) -> str | None:
        return self.endpoint.url

    def _invoke(self, body: bytes, content_type: str, accept: str) -> tuple[int, bytes, str]:
        return self.endpoint.invoke(body, content_type, accept)

    def delete(self) -> None:
        self.endpoint.stop()


class SageMakerPredictor(Predictor):
    """A SageMaker endpoint, called through InvokeEndpoint."""

    def __init__(self, resources):
        self.resources = resources  # launcher.deploy.sagemaker_endpoint.EndpointResources
        self.endpoint_name = resources.endpoint_name
        self.deleted: list[str] = []

    def _invoke(self, body: bytes, content_type: str, accept: str) -> tuple[int, bytes, str]:
        from launcher.deploy.sagemaker_endpoint import invoke

        return invoke(self.endpoint_name, self.resources.region, body, content_type, accept)

    def delete(self) -> None:
        from launcher.deploy.sagemaker_endpoint import delete_endpoint

        self.deleted = delete_endpoint(self.resources)
