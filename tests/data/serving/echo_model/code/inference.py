"""A model handler that answers its JSON input: the local server's tests need serving, not a model."""

import json


def model_fn(model_dir):
    return "echo"


def input_fn(body, content_type):
    if content_type != "application/json":
        raise ValueError(f"content type {content_type!r} is not supported; send application/json")
    return json.loads(body)


def predict_fn(data, model):
    return data


def output_fn(prediction, accept):
    return json.dumps(prediction)
