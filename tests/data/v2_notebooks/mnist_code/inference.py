"""Serving handler in the shape of the AWS getting-started MNIST deploy notebook (sagelaunch's own code): all four
handlers, JSON in and out, `output_fn` answering a bare string as that notebook's does."""
import json
import os

import torch
from torch import nn


def model_fn(model_dir):
    model = nn.Sequential(nn.Flatten(), nn.Linear(28 * 28, 16), nn.ReLU(), nn.Linear(16, 10), nn.LogSoftmax(dim=1))
    with open(os.path.join(model_dir, "model.pth"), "rb") as f:
        model.load_state_dict(torch.load(f))
    return model.eval()


def input_fn(request_body, request_content_type):
    assert request_content_type == "application/json"
    return torch.tensor(json.loads(request_body)["inputs"], dtype=torch.float32)


def predict_fn(input_object, model):
    with torch.no_grad():
        return model(input_object)


def output_fn(predictions, content_type):
    assert content_type == "application/json"
    return json.dumps(predictions.numpy().tolist())
