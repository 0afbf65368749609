"""Run a model's inference.py the way the SageMaker PyTorch serving toolkit does.

`ModelHandler` imports `code/inference.py` from the model folder (or the default sentiment
handler when the folder has none), calls model_fn once, then input_fn → predict_fn → output_fn
per request. The local server and the tests' InvokeEndpoint fake both serve through it.
"""

from __future__ import annotations

import importlib.util
import itertools
import threading
from pathlib import Path
from types import ModuleType

from launcher.deploy.package import HANDLER_PATH, default_inference_script

JSON_TYPE = "application/json"
_module_ids = itertools.count()


class InvocationFailed(Exception):
    """A request the handler refused or could not answer, with the HTTP status to reply with."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status, self.message = status, message


def load_handler_module(model_dir: str | Path) -> ModuleType:
    script = Path(model_dir, HANDLER_PATH)
    if not script.is_file():
        script = default_inference_script()
    # a fresh module name per model: two endpoints in one process must not share handler state
    spec = importlib.util.spec_from_file_location(f"sagelaunch_inference_{next(_module_ids)}", script)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    missing = [fn for fn in ("model_fn",) if not hasattr(module, fn)]
    if missing:
        raise ValueError(f"{script} defines no {', '.join(missing)}; an inference handler needs model_fn")
    return module


class ModelHandler:
    """One loaded model and its handler functions; invoke() is safe to call from many threads."""

    def __init__(self, model_dir: str | Path):
        self.model_dir = str(model_dir)
        self.module = load_handler_module(model_dir)
        self.model = self.module.model_fn(self.model_dir)
        self._lock = threading.Lock()  # pipelines are not thread-safe; one request at a time

    def invoke(self, body: bytes, content_type: str | None, accept: str | None) -> tuple[bytes, str]:
        """(response body, response content type), or InvocationFailed with a 4xx/5xx status."""
        accept = accept or JSON_TYPE
        try:
            with self._lock:
                data = self.module.input_fn(body, content_type or JSON_TYPE)
                prediction = self.module.predict_fn(data, self.model)
                result = self.module.output_fn(prediction, accept)
        except ValueError as exc:  # the handler's way to reject a request; RequestError carries a status
            raise InvocationFailed(int(getattr(exc, "status", 400)), str(exc)) from exc
        except Exception as exc:
            raise InvocationFailed(500, f"the model failed on this request: {type(exc).__name__}: {exc}") from exc
        if isinstance(result, tuple):  # the toolkit also accepts (body, content_type)
            result, accept = result
        if isinstance(result, str):
            result = result.encode("utf-8")
        return result, accept if "*" not in accept else JSON_TYPE
