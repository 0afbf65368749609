"""The SageMaker PyTorch serving toolkit's default handlers, for inference scripts that leave some out.

As sagemaker-pytorch-inference-toolkit's DefaultPytorchInferenceHandler with sagemaker-inference-toolkit's decoder
and encoder: model_fn loads a TorchScript model.pt (else the one .pt/.pth file); input_fn decodes
application/x-npy, application/json and text/csv into a tensor on the model's device; predict_fn calls `model(x)`
in eval mode under `torch.no_grad()`; output_fn encodes by the first type of Accept that is one of the three.
torch is imported when a default runs: only the serving process loads it.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from sagelaunch.jobspec.errors import SagelaunchError

JSON_TYPE = "application/json"
CSV_TYPE = "text/csv"
NPY_TYPE = "application/x-npy"
UTF8_TYPES = (JSON_TYPE, CSV_TYPE)  # bodies the toolkit hands to input_fn as str, not bytes
SUPPORTED_TYPES = (NPY_TYPE, JSON_TYPE, CSV_TYPE)
DEFAULT_MODEL_FILE = "model.pt"


class UnsupportedFormat(SagelaunchError):
    """The toolkit's UnsupportedFormatError: a content type or Accept it cannot decode or encode (HTTP 415)."""

    status = 415

    def __init__(self, what: str, value: str | None):
        allowed = ", ".join(SUPPORTED_TYPES)
        fix = "define input_fn/output_fn in your inference script"
        super().__init__(f"{what} {value!r} is not supported by the default handlers; use one of {allowed}, or {fix}",
                         field=what, value=value, allowed=allowed, fix=fix)


def media_type(header: str | None) -> str:
    """'application/json; charset=utf-8' → 'application/json'."""
    return (header or "").split(";")[0].strip().lower()


def decode(body: bytes | str, content_type: str | None) -> np.ndarray:
    media = media_type(content_type)
    if media == NPY_TYPE:
        # the toolkit passes allow_pickle=True; a local endpoint will not unpickle what a client sends
        return np.load(io.BytesIO(body if isinstance(body, bytes) else body.encode("latin-1")), allow_pickle=False)
    if media == JSON_TYPE:
        return np.array(json.loads(body))
    if media == CSV_TYPE:
        return np.genfromtxt(io.StringIO(body if isinstance(body, str) else body.decode("utf-8")), delimiter=",")
    raise UnsupportedFormat("content type", content_type)


def encode(array_like, media: str) -> bytes | str:
    if media == NPY_TYPE:
        buffer = io.BytesIO()
        np.save(buffer, array_like)
        return buffer.getvalue()
    if media == JSON_TYPE:
        return json.dumps(array_like, default=lambda value: value.tolist() if hasattr(value, "tolist") else
                          json.JSONEncoder().default(value))
    if media == CSV_TYPE:
        stream = io.StringIO()
        np.savetxt(stream, array_like, delimiter=",", fmt="%s")
        return stream.getvalue().encode("utf-8")
    raise UnsupportedFormat("Accept", media)


def _device():
    import torch

    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def default_model_fn(model_dir: str):
    import torch

    path = Path(model_dir, DEFAULT_MODEL_FILE)
    if not path.is_file():
        candidates = sorted(p.name for p in Path(model_dir).iterdir() if p.is_file() and p.suffix in (".pt", ".pth"))
        if len(candidates) != 1:
            raise SagelaunchError(
                f"the inference script defines no model_fn, so the default model_fn loads a TorchScript "
                f"{DEFAULT_MODEL_FILE} (or the only .pt/.pth file) from the model, and the model has "
                f"{candidates or 'none'}; define model_fn(model_dir) in your entry_point",
                field="model_fn", value=candidates, allowed=f"{DEFAULT_MODEL_FILE} or one .pt/.pth file",
                fix="define model_fn(model_dir) in your entry_point")
        path = Path(model_dir, candidates[0])
    try:
        return torch.jit.load(str(path), map_location=_device())
    except RuntimeError as exc:
        raise SagelaunchError(f"the default model_fn could not load {path.name} as TorchScript ({exc}); save it with "
                              "torch.jit.save(torch.jit.script(model), ...) or define model_fn in your entry_point",
                              field="model_fn", value=path.name, allowed="a TorchScript file",
                              fix="save it with torch.jit.save(torch.jit.script(model), ...) or define model_fn"
                              ) from exc


def default_input_fn(input_data: bytes | str, content_type: str | None):
    import torch

    array = decode(input_data, content_type)
    tensor = torch.FloatTensor(array) if media_type(content_type) in UTF8_TYPES else torch.from_numpy(array)
    return tensor.to(_device())


def default_predict_fn(data, model):
    import torch

    with torch.no_grad():
        device = _device()
        model = model.to(device)
        model.eval()
        return model(data.to(device))


def default_output_fn(prediction, accept: str | None) -> tuple[bytes | str, str]:
    """(body, the one type chosen from Accept): the response names what it holds, not the whole Accept list."""
    import torch

    if isinstance(prediction, torch.Tensor):
        prediction = prediction.detach().cpu().numpy().tolist()
    for media in (media_type(part) for part in (accept or JSON_TYPE).split(",")):
        if media in SUPPORTED_TYPES:
            return encode(prediction, media), media
    raise UnsupportedFormat("Accept", accept)


DEFAULTS: dict[str, Callable[..., Any]] = {"model_fn": default_model_fn, "input_fn": default_input_fn, "predict_fn": default_predict_fn,
            "output_fn": default_output_fn}
