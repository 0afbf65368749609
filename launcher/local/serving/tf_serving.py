"""A TensorFlow SavedModel answering /invocations as SageMaker's TensorFlow Serving container does, without TFS.

The container (aws/sagemaker-tensorflow-serving-container, tensorflow-serving.js) turns each request into a TF
Serving REST predict call: a JSON body with "instances" or "inputs" goes as it is; any other JSON becomes
{"instances": [...]} (one row wrapped in a list), JSON lines one instance per line, CSV one instance per line;
other content types get 415. Here TF Serving's REST predict is computed in process with `tf.saved_model.load`
and the signature's concrete function (serving_default unless the body names "signature_name"):
the row format answers {"predictions": [...]}, the columnar format {"outputs": ...}, as TFS does.

A code/inference.py runs as the container's Python service runs it: input_handler(data, context) makes the TF
Serving request, output_handler(response, context) turns TF Serving's answer (status_code, content, text, json())
into (body, content type); here the request goes to the in-process predict instead of TFS's REST port.

Refused by name: several models in one archive (the container's multi-model mode), "examples" bodies (TFS's
classify/regress APIs), an inference.py `handler` (it posts to TF Serving's REST port itself, which does not exist
here) and an entry point not named inference.py (the container only ever runs code/inference.py).
"""

from __future__ import annotations

import io
import json
import re
import threading
from dataclasses import dataclass
from pathlib import Path

from sagelaunch.jobspec.errors import SagelaunchError
from sagelaunch.launcher.local.serving.handler import InvocationFailed, load_handler_module
from sagelaunch.launcher.local.serving.toolkit_defaults import media_type

JSON_TYPES = ("application/json", "application/jsonlines", "application/jsons")
CSV_TYPE = "text/csv"
DEFAULT_SIGNATURE = "serving_default"
CONTAINER_SCRIPT = "inference.py"  # the only script the TF container runs (/opt/ml/model/code/inference.py)
_JSON_LINES = re.compile(r"[}\]]\s*[\[{]")  # the container's test: objects separated only by whitespace


class RequestError(SagelaunchError):
    status = 400


class UnsupportedMediaType(RequestError):
    status = 415


def find_saved_model(model_dir: str | Path) -> Path:
    """The SavedModel folder to serve: <model>/<version>/saved_model.pb (the highest version), as TFS picks."""
    model_dir = Path(model_dir)
    found = [p.parent for p in model_dir.rglob("saved_model.pb") if "code" not in p.relative_to(model_dir).parts]
    if not found:
        raise SagelaunchError("the model has no saved_model.pb; TensorFlow Serving needs a SavedModel under a version "
                              "folder (model.tar.gz: 1/saved_model.pb, 1/variables/…); save it with "
                              "tf.saved_model.save(model, os.path.join(model_dir, '1'))",
                              field="model_data", value=str(model_dir), allowed="a SavedModel under a version folder",
                              fix="tf.saved_model.save(model, os.path.join(model_dir, '1'))")
    bases = sorted({str(folder.parent.relative_to(model_dir)) for folder in found})
    if len(bases) > 1:
        raise SagelaunchError(f"the model holds several SavedModels ({', '.join(bases)}): the container's multi-model "
                              "serving (tfs-model-name) is not available locally; package one model per archive",
                              field="model_data", value=bases, allowed="one SavedModel per archive",
                              fix="package one model per archive")
    numbered = [folder for folder in found if folder.name.isdigit()]
    return max(numbered, key=lambda folder: int(folder.name)) if numbered else found[0]


def tfs_request(body: bytes, content_type: str | None) -> dict:
    """The TF Serving REST body the container would send for this request."""
    media = media_type(content_type)
    if media not in (*JSON_TYPES, CSV_TYPE):
        raise UnsupportedMediaType(f"content type {content_type!r} is not supported by TensorFlow Serving's "
                                   "container; send application/json (or JSON lines) or text/csv")
    try:
        text = body.decode("utf-8").strip()
    except UnicodeDecodeError as exc:
        raise RequestError(f"the {content_type} body is not UTF-8 text: {exc}") from exc
    if not text:
        raise RequestError("the request body is empty; send JSON such as {\"instances\": [[1.0, 2.0]]} or CSV rows")
    try:
        if media in JSON_TYPES:
            if re.search(r'"(instances|inputs|examples)"\s*:', text):
                return json.loads(text)
            if _JSON_LINES.search(text):
                return {"instances": [json.loads(line) for line in text.splitlines() if line.strip()]}
            data = json.loads(text)
            return {"instances": data if re.match(r"\s*\[\s*\[", text) else [data]}
    except json.JSONDecodeError as exc:
        raise RequestError(f"the body is not valid JSON ({exc}); send {{\"instances\": [...]}}") from exc
    return {"instances": [_csv_row(line) for line in text.splitlines() if line.strip()]}


def _csv_row(line: str):
    values = [json.loads(v) if re.fullmatch(r"\s*[-+]?[\d.]+([eE][-+]?\d+)?\s*", v) else v.strip().strip('"')
              for v in line.split(",")]
    return values if len(values) > 1 else values[0]


def _to_json(value):
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    if isinstance(value, list):
        return [_to_json(v) for v in value]
    return value

def _columns(request: dict, names: list[str]) -> tuple[dict, bool]:
    """({input name: batch}, whether the request used the row format), as TF Serving reads either format."""
    if "instances" in request:
        instances = request["instances"]
        if not isinstance(instances, list) or not instances:
            raise RequestError('"instances" must be a non-empty list, one entry per instance')
        if len(names) == 1 and not (isinstance(instances[0], dict) and names[0] in instances[0]):
            columns = {names[0]: instances}
        elif all(isinstance(i, dict) for i in instances):
            columns = {name: [i.get(name) for i in instances] for name in names}
        else:
            raise RequestError(f"the model takes several inputs ({', '.join(names)}): each instance must be an "
                               "object with one value per input name")
        row_format = True
    elif "inputs" in request:
        inputs = request["inputs"]
        if isinstance(inputs, dict) and inputs and set(inputs) <= set(names):
            columns = inputs
        elif len(names) == 1:
            columns = {names[0]: inputs}
        else:
            raise RequestError(f'the model takes several inputs ({", ".join(names)}): "inputs" must be an object '
                               "with one batch per input name")
        row_format = False
    else:
        raise RequestError('the body needs "instances" (row format) or "inputs" (columnar format)')
    missing = [name for name in names if columns.get(name) is None]
    if missing:
        raise RequestError(f"the request has no value for the model's input(s) {missing}; it takes {names}")
    return columns, row_format


def _answer(outputs: dict, row_format: bool) -> dict:
    """TF Serving's answer: one output bare, several by name (per instance in the row format)."""
    if not row_format:
        return {"outputs": next(iter(outputs.values())) if len(outputs) == 1 else outputs}
    if len(outputs) == 1:
        return {"predictions": next(iter(outputs.values()))}
    count = len(next(iter(outputs.values())))
    return {"predictions": [{k: v[i] for k, v in outputs.items()} for i in range(count)]}


class TensorFlowServingHandler:
    """One loaded SavedModel; invoke() has ModelHandler's shape, so the local server serves either."""

    def __init__(self, model_dir: str | Path, program: str | None = None):
        if program and program != CONTAINER_SCRIPT:
            raise SagelaunchError(f"SAGEMAKER_PROGRAM={program!r}: SageMaker's TensorFlow container only runs "
                                  f"code/{CONTAINER_SCRIPT}; name your entry_point {CONTAINER_SCRIPT}",
                                  field="SAGEMAKER_PROGRAM", value=program, allowed=CONTAINER_SCRIPT,
                                  fix=f"name your entry_point {CONTAINER_SCRIPT}")
        import tensorflow as tf

        self.tf = tf
        self.saved_model_dir = find_saved_model(model_dir)
        self.model = tf.saved_model.load(str(self.saved_model_dir))
        self.handlers = container_handlers(model_dir)
        self._lock = threading.Lock()

    def _signature(self, name: str):
        signatures = self.model.signatures
        if name not in signatures:
            raise RequestError(f"signature_name={name!r} is not in the model; it has {sorted(signatures)}")
        function = signatures[name]
        return function, function.structured_input_signature[1]

    def _tensor(self, value, spec):
        try:
            return self.tf.constant(value, dtype=spec.dtype)
        except (ValueError, TypeError, self.tf.errors.InvalidArgumentError) as exc:
            raise RequestError(f"input {spec.name!r} ({spec.dtype.name}, shape {spec.shape}) cannot take "
                               f"{json.dumps(value)[:200]}: {exc}") from exc

    def predict(self, request: dict) -> dict:
        """TF Serving's REST predict: {"instances": …} → {"predictions": …}, {"inputs": …} → {"outputs": …}."""
        if not isinstance(request, dict):
            raise RequestError('the TF Serving request must be a JSON object: {"instances": [...]} or {"inputs": ...}')
        if "examples" in request:
            raise RequestError('"examples" bodies are for TF Serving\'s classify/regress APIs, which the local '
                               'TensorFlow server does not offer; send {"instances": [...]} for predict')
        function, specs = self._signature(request.get("signature_name", DEFAULT_SIGNATURE))
        columns, row_format = _columns(request, sorted(specs))
        tensors = {name: self._tensor(columns[name], specs[name]) for name in sorted(specs)}
        try:
            with self._lock:
                outputs = {k: _to_json(v.numpy().tolist()) for k, v in function(**tensors).items()}
        except self.tf.errors.InvalidArgumentError as exc:
            raise RequestError(f"the model refused the input: {exc.message}") from exc
        return _answer(outputs, row_format)

    def tfs_response(self, request_body) -> "TFServingResponse":
        """What TF Serving's REST predict answers to a request body: 200 with the result, 400 with {"error": …}."""
        try:
            text = request_body.decode("utf-8") if isinstance(request_body, bytes) else request_body
            answer, status = self.predict(json.loads(text)), 200
        except (RequestError, ValueError, TypeError) as exc:  # JSONDecodeError is a ValueError
            answer, status = {"error": str(exc)}, 400
        return TFServingResponse(status, json.dumps(answer).encode("utf-8"))

    def invoke(self, body: bytes, content_type: str | None, accept: str | None) -> tuple[bytes, str]:
        if self.handlers:
            return self._invoke_handlers(self.handlers, body, content_type, accept)
        try:
            answer = self.predict(tfs_request(body, content_type or "application/json"))
        except RequestError as exc:
            raise InvocationFailed(exc.status, str(exc)) from exc
        except Exception as exc:
            raise InvocationFailed(500, f"the model failed on this request: {type(exc).__name__}: {exc}") from exc
        return json.dumps(answer).encode("utf-8"), "application/json"

    def _invoke_handlers(self, handlers: tuple, body: bytes, content_type: str | None,
                         accept: str | None) -> tuple[bytes, str]:
        input_handler, output_handler = handlers
        context = Context(request_content_type=content_type or "application/json",
                          accept_header=accept or "application/json", content_length=len(body))
        try:
            response = self.tfs_response(input_handler(io.BytesIO(body), context))
            result, result_type = output_handler(response, context)
        except Exception as exc:  # the container answers 500 with the handler's message for anything it raises
            raise InvocationFailed(500, f"inference.py failed on this request: {type(exc).__name__}: {exc}") from exc
        return (result.encode("utf-8") if isinstance(result, str) else result), result_type


@dataclass(frozen=True)
class Context:
    """The container's request context (tfs_utils.Context); there is no TF Serving REST or gRPC port here."""

    request_content_type: str
    accept_header: str
    content_length: int
    model_name: str = "model"
    model_version: str | None = None
    method: str = "predict"
    rest_uri: str | None = None
    grpc_uri: str | None = None
    custom_attributes: str | None = None


@dataclass(frozen=True)
class TFServingResponse:
    """The part of requests.Response an output_handler reads."""

    status_code: int
    content: bytes

    @property
    def text(self) -> str:
        return self.content.decode("utf-8")

    def json(self):
        return json.loads(self.content)


def container_handlers(model_dir: str | Path) -> tuple | None:
    """(input_handler, output_handler) of the model's code/inference.py, None without one; as the container does,
    a script with neither pair nor handler is refused, and `handler` is refused here (it needs TF Serving's port)."""
    if not Path(model_dir, "code", CONTAINER_SCRIPT).is_file():
        return None
    module = load_handler_module(model_dir, CONTAINER_SCRIPT)
    if module is None:  # the script exists (checked above): load_handler_module finds it
        return None
    if hasattr(module, "handler"):
        raise SagelaunchError(f"code/{CONTAINER_SCRIPT} defines handler(data, context), which posts to TF Serving's REST "
                              "port (context.rest_uri) itself; the local TensorFlow server has no TF Serving process — "
                              "define input_handler and output_handler instead, or deploy to an ml.* instance type",
                              field=f"code/{CONTAINER_SCRIPT}", value="handler", allowed="input_handler + output_handler",
                              fix="define input_handler and output_handler instead, or deploy to an ml.* instance type")
    if not (hasattr(module, "input_handler") and hasattr(module, "output_handler")):
        raise SagelaunchError(f"code/{CONTAINER_SCRIPT} defines neither handler nor input_handler + output_handler; the "
                              "TensorFlow container needs input_handler(data, context) and output_handler(response, "
                              "context)", field=f"code/{CONTAINER_SCRIPT}", value=None,
                              allowed="input_handler + output_handler",
                              fix="define input_handler(data, context) and output_handler(response, context)")
    return module.input_handler, module.output_handler
