"""Run a model's inference.py the way the SageMaker PyTorch serving toolkit does.

`ModelHandler` imports `code/<program>` from the model folder — the program is SAGEMAKER_PROGRAM,
inference.py when unset — (or the default sentiment handler when the folder has no code/inference.py),
with code/ and code/lib on sys.path as in the container, calls model_fn once, then input_fn → predict_fn → output_fn
per request. The local server and the tests' InvokeEndpoint fake both serve through it.
"""

from __future__ import annotations

import csv
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


def load_handler_module(model_dir: str | Path, program: str | None = None) -> ModuleType:
    import sys

    script = Path(model_dir, "code", program) if program else Path(model_dir, HANDLER_PATH)
    if program and not script.is_file():
        raise ValueError(f"SAGEMAKER_PROGRAM={program!r}: the model has no code/{program}; pass the inference "
                         "script as entry_point when you deploy")
    if not script.is_file():
        if not Path(model_dir, "config.json").is_file():  # never a silent fallback that downloads another model
            raise ValueError(f"model folder {str(model_dir)!r} has neither {HANDLER_PATH} nor a transformers "
                             "config.json for the default sentiment handler; deploy with entry_point='inference.py'")
        script = default_inference_script()
    for folder in (Path(model_dir, "code", "lib"), script.parent):  # the container's import path
        if folder.is_dir() and str(folder) not in sys.path:
            sys.path.insert(0, str(folder))
    # a fresh module name per model: two endpoints in one process must not share handler state
    spec = importlib.util.spec_from_file_location(f"sagelaunch_inference_{next(_module_ids)}", script)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    missing = [fn for fn in ("model_fn",) if not hasattr(module, fn)]
    if missing:
        raise ValueError(f"{script.name} defines no {', '.join(missing)}; an inference handler needs model_fn — "
                         "deploy with entry_point='<your inference script>' (v2 serves the training script otherwise)")
    return module


class ModelHandler:
    """One loaded model and its handler functions; invoke() is safe to call from many threads."""

    def __init__(self, model_dir: str | Path, program: str | None = None):
        self.model_dir = str(model_dir)
        self.module = load_handler_module(model_dir, program)
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
        except (RecursionError, csv.Error) as exc:  # the body is too deep / a CSV field too long: the client's error
            raise InvocationFailed(400, f"the request body cannot be parsed: {type(exc).__name__}: {exc}") from exc
        except Exception as exc:
            raise InvocationFailed(500, f"the model failed on this request: {type(exc).__name__}: {exc}") from exc
        if isinstance(result, tuple):  # the toolkit also accepts (body, content_type)
            result, accept = result
        if isinstance(result, str):
            result = result.encode("utf-8")
        return result, accept if "*" not in accept else JSON_TYPE
