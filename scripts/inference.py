"""SageMaker PyTorch inference handler for the sentiment model: JSON text in, label and score out.

The SageMaker PyTorch serving toolkit imports this file from `code/inference.py` in model.tar.gz
and calls model_fn once, then input_fn → predict_fn → output_fn per request. sagelaunch's local
server and the test fake of InvokeEndpoint call the same four functions.

Request (Content-Type application/json): {"inputs": "text"} or {"inputs": ["text", ...]}
(a bare JSON string or list works too); text/csv: one text per line (what the SDK's CSVSerializer
sends for a list of texts); application/x-npy: an array of texts (NumpySerializer; no pickles).
Response (Accept application/json): [{"label": "negative", "score": 0.98}, ...], one entry per text;
text/csv: "label,score" lines; application/x-npy: a structured array with fields label and score.
Bad requests raise RequestError, a ValueError carrying an HTTP status. It depends on torch and
transformers only (numpy comes with torch), so it runs in the inference images unchanged.
"""

from __future__ import annotations

import json

JSON_TYPE = "application/json"
CSV_TYPE = "text/csv"
NPY_TYPE = "application/x-npy"
MAX_TEXTS = 256  # per request: keeps one request from holding the model for long
MAX_TEXT_CHARS = 10_000


class RequestError(ValueError):
    """A request the model cannot answer; `status` is the HTTP status a server should reply with."""

    status = 400


class UnsupportedMediaType(RequestError):
    status = 415


class NotAcceptable(RequestError):
    status = 406


def _media_type(header: str | None) -> str:
    return (header or JSON_TYPE).split(";")[0].strip().lower()


def model_fn(model_dir: str, context=None):
    """A text-classification pipeline over the model and tokenizer saved in `model_dir`."""
    import torch
    from transformers import pipeline

    device = 0 if torch.cuda.is_available() else -1
    return pipeline("sentiment-analysis", model=model_dir, tokenizer=model_dir, device=device)


def input_fn(request_body: bytes | str, request_content_type: str | None = JSON_TYPE, context=None) -> list[str]:
    """Parse the request into a non-empty list of non-empty texts."""
    media = _media_type(request_content_type)
    if media not in (JSON_TYPE, CSV_TYPE, NPY_TYPE):
        raise UnsupportedMediaType(
            f"content type {request_content_type!r} is not supported; send {JSON_TYPE} "
            f'with a body like {{"inputs": "I love this"}}, {CSV_TYPE} (one text per line) or {NPY_TYPE}'
        )
    if media == NPY_TYPE:
        return _checked(_npy_texts(request_body))
    if isinstance(request_body, (bytes, bytearray)):
        try:
            request_body = request_body.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise RequestError(f"the body is not UTF-8 text ({exc})") from None
    if media == CSV_TYPE:
        import csv

        return _checked([",".join(row) for row in csv.reader(request_body.splitlines()) if row])
    try:
        payload = json.loads(request_body)
    except json.JSONDecodeError as exc:
        raise RequestError(f"the body is not valid JSON ({exc.msg} at position {exc.pos})") from None
    if isinstance(payload, dict) and "inputs" not in payload:
        raise RequestError(f'the JSON object has no "inputs" key (keys: {sorted(payload)}); send {{"inputs": "text"}}')
    return _checked(payload.get("inputs") if isinstance(payload, dict) else payload)


def _npy_texts(body: bytes | str) -> list[str]:
    import io

    import numpy as np

    try:
        array = np.load(io.BytesIO(body if isinstance(body, (bytes, bytearray)) else body.encode("latin-1")),
                        allow_pickle=False)
    except ValueError as exc:  # pickled (object) arrays included: never unpickle a request
        raise RequestError(f"the body is not a .npy array of texts ({exc}); send numpy.array(['text', ...])") from None
    if array.dtype.kind != "U":
        raise RequestError(f"the .npy array holds {array.dtype}, not text; send numpy.array(['text', ...])")
    return [str(t) for t in array.reshape(-1)]


def _checked(texts) -> list[str]:
    if isinstance(texts, str):
        texts = [texts]
    if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
        raise RequestError('"inputs" must be a string or a list of strings')
    if not texts:
        raise RequestError('"inputs" is an empty list: send at least one text')
    if len(texts) > MAX_TEXTS:
        raise RequestError(f"{len(texts)} texts in one request; at most {MAX_TEXTS}: split the batch")
    for i, text in enumerate(texts):
        if not text.strip():
            raise RequestError(f"text {i} is empty: send some words to classify")
        if len(text) > MAX_TEXT_CHARS:
            raise RequestError(f"text {i} has {len(text)} characters; at most {MAX_TEXT_CHARS}")
    return texts


def predict_fn(texts: list[str], model, context=None) -> list[dict]:
    """Label and score per text; long texts are truncated to the model's maximum length."""
    results = model(texts, truncation=True)
    return [{"label": r["label"], "score": float(r["score"])} for r in results]


def output_fn(prediction: list[dict], accept: str | None = JSON_TYPE, context=None):
    """JSON list of {"label", "score"} (any Accept that admits JSON), "label,score" CSV lines, or a .npy
    structured array (label, score); returns (body, content type)."""
    media = _media_type(accept)
    if media in (JSON_TYPE, "*/*", "application/*"):
        return json.dumps(prediction), JSON_TYPE
    if media == CSV_TYPE:
        return "".join(f"{p['label']},{p['score']}\n" for p in prediction), CSV_TYPE
    if media == NPY_TYPE:
        import io

        import numpy as np

        rows = np.array([(p["label"], p["score"]) for p in prediction], dtype=[("label", "U32"), ("score", "f8")])
        buffer = io.BytesIO()
        np.save(buffer, rows)
        return buffer.getvalue(), NPY_TYPE
    raise NotAcceptable(f"cannot answer in {accept!r}; this model answers {JSON_TYPE}, {CSV_TYPE} or {NPY_TYPE}")
