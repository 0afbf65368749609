"""Serving handler of the v2-style notebook: answers each JSON request's inputs, summed per row."""
import json


def model_fn(model_dir, context=None):
    return "sum"


def input_fn(body, content_type, context=None):
    return json.loads(body)["inputs"]


def predict_fn(rows, model, context=None):
    return [sum(row) for row in rows]


def output_fn(prediction, accept, context=None):
    return json.dumps(prediction), "application/json"
