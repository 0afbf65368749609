"""Run a model's inference script the way the SageMaker PyTorch serving toolkit does.

`ModelHandler` imports `code/<program>` from the model folder — the program is SAGEMAKER_PROGRAM, inference.py when
unset — with code/ and code/lib on sys.path as in the container. What the script leaves out the toolkit's defaults
supply (launcher/local/serving/toolkit_defaults.py): model_fn, input_fn, predict_fn, output_fn; or the script defines
transform_fn instead of the last three. A model without code/inference.py is served by the defaults alone, except a
transformers folder (config.json), which gets sagelaunch's sentiment handler. model_fn runs once; each request runs
transform_fn, or input_fn → predict_fn → output_fn. The local server and the tests' InvokeEndpoint fake both serve
through it.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
import importlib.machinery
import importlib.util
import inspect
import itertools
import sys
import threading
from pathlib import Path
from types import CodeType, ModuleType
from typing import Callable

from sagelaunch.jobspec.errors import SagelaunchError, SagelaunchException
from sagelaunch.launcher.common.package import HANDLER_PATH, default_inference_script
from sagelaunch.launcher.local.serving.toolkit_defaults import DEFAULTS, JSON_TYPE, UTF8_TYPES, media_type

_module_ids = itertools.count()
PIPELINE_FUNCTIONS = ("input_fn", "predict_fn", "output_fn")


class InvocationFailed(SagelaunchException):
    """A request the handler refused or could not answer, with the HTTP status to reply with."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status, self.message = status, message


def handler_script(model_dir: str | Path, program: str | None = None) -> Path | None:
    """The script to import: code/<program>, code/inference.py, the sentiment handler, or None (defaults only)."""
    if program:
        script = Path(model_dir, "code", program)
        if not script.is_file():
            raise SagelaunchError(f"SAGEMAKER_PROGRAM={program!r}: the model has no code/{program}; pass the inference "
                                  "script as entry_point when you deploy", field="SAGEMAKER_PROGRAM", value=program,
                                  allowed="a script under the model's code/",
                                  fix="pass the inference script as entry_point when you deploy")
        return script
    script = Path(model_dir, HANDLER_PATH)
    if script.is_file():
        return script
    return default_inference_script() if Path(model_dir, "config.json").is_file() else None


class _SourceOnlyLoader(importlib.machinery.SourceFileLoader):
    """Runs the script's source as it is now: no code/__pycache__ written into the model's folder, and no compiled
    copy of an earlier inference.py (same size, same second) reused."""

    def get_code(self, fullname: str) -> CodeType:
        return compile(self.get_data(self.path), self.path, "exec", dont_inherit=True)


def load_handler_module(model_dir: str | Path, program: str | None = None) -> ModuleType | None:
    script = handler_script(model_dir, program)
    if script is None:
        return None
    for folder in (Path(model_dir, "code", "lib"), script.parent):  # the container's import path
        if folder.is_dir() and str(folder) not in sys.path:
            sys.path.insert(0, str(folder))
    # a fresh module name per model: two endpoints in one process must not share handler state
    name = f"sagelaunch_inference_{next(_module_ids)}"
    spec = importlib.util.spec_from_file_location(name, script, loader=_SourceOnlyLoader(name, str(script)))
    if spec is None or spec.loader is None:
        raise SagelaunchError(f"{script}: Python cannot load it as a module", field="entry_point", value=str(script),
                              allowed="a Python file", fix="name the model's handler script with a .py suffix")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@dataclass(frozen=True)
class HandlerFunctions:
    """The functions a model is served with: the script's own, else the SageMaker toolkit's defaults."""

    model_fn: Callable
    input_fn: Callable
    predict_fn: Callable
    output_fn: Callable
    transform_fn: Callable | None  # the script's, replacing the three above


def handler_functions(module: ModuleType | None) -> HandlerFunctions:
    """model_fn, input_fn, predict_fn, output_fn (the script's, else the toolkit's) and transform_fn (or None)."""
    own = {name: getattr(module, name, None) for name in (*DEFAULTS, "transform_fn")}
    if own["transform_fn"] and any(own[name] for name in PIPELINE_FUNCTIONS):
        defined = ", ".join(name for name in PIPELINE_FUNCTIONS if own[name])
        raise SagelaunchError(f"{getattr(module, '__file__', 'the handler script')} defines transform_fn and {defined}: the SageMaker toolkit refuses "
                              "both; keep transform_fn alone or input_fn/predict_fn/output_fn without it",
                              field="transform_fn", value=defined,
                              allowed="transform_fn alone, or input_fn/predict_fn/output_fn",
                              fix="keep transform_fn alone or input_fn/predict_fn/output_fn without it")
    return HandlerFunctions(model_fn=own["model_fn"] or DEFAULTS["model_fn"],
                            input_fn=own["input_fn"] or DEFAULTS["input_fn"],
                            predict_fn=own["predict_fn"] or DEFAULTS["predict_fn"],
                            output_fn=own["output_fn"] or DEFAULTS["output_fn"], transform_fn=own["transform_fn"])


def call_handler(function: Callable, *args):
    """As the toolkit: a function that takes one more parameter than the call gets the request context (None here,
    where there is no model server context)."""
    try:
        takes_context = len(inspect.signature(function).parameters) == len(args) + 1
    except (TypeError, ValueError):  # builtins without a signature
        takes_context = False
    return function(*args, None) if takes_context else function(*args)


class ModelHandler:
    """One loaded model and its handler functions; invoke() is safe to call from many threads."""

    def __init__(self, model_dir: str | Path, program: str | None = None):
        self.model_dir = str(model_dir)
        self.module = load_handler_module(model_dir, program)
        self.functions = handler_functions(self.module)
        self.model = call_handler(self.functions.model_fn, self.model_dir)
        self._lock = threading.Lock()  # pipelines are not thread-safe; one request at a time

    def _transform(self, data, content_type: str, accept: str):
        functions = self.functions
        if functions.transform_fn:
            return call_handler(functions.transform_fn, self.model, data, content_type, accept)
        data = call_handler(functions.input_fn, data, content_type)
        prediction = call_handler(functions.predict_fn, data, self.model)
        return call_handler(functions.output_fn, prediction, accept)

    def invoke(self, body: bytes, content_type: str | None, accept: str | None) -> tuple[bytes, str]:
        """(response body, response content type), or InvocationFailed with a 4xx/5xx status."""
        accept = JSON_TYPE if not accept or accept.strip() == "*/*" else accept  # the toolkit's default accept
        content_type = content_type or JSON_TYPE
        data: bytes | str = body
        if media_type(content_type) in UTF8_TYPES:  # the toolkit hands JSON and CSV bodies over as text
            try:
                data = body.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise InvocationFailed(400, f"the {content_type} body is not UTF-8 text: {exc}") from exc
        try:
            with self._lock:
                result = self._transform(data, content_type, accept)
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
        if not isinstance(result, (bytes, bytearray)):  # the model server could not send it either
            raise InvocationFailed(500, f"the handler returned {type(result).__name__}, not a response body; "
                                        "output_fn/transform_fn must return bytes or str (or (body, content_type))")
        return bytes(result), accept if "*" not in accept else JSON_TYPE
