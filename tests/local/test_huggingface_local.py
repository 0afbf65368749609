"""v2's `HuggingFace` estimator runs locally as the PyTorch job it is on SageMaker: a script using transformers
(a tiny model built from a config, no hub) trains one step under torchrun, gets v2's hyperparameters and the
SM_* contract, and leaves its model in model.tar.gz; the job names the Hugging Face image v2 resolves."""

from __future__ import annotations

import tarfile

import pytest

from sagelaunch.estimators import HuggingFace
from tests.local.conftest import unique

pytestmark = pytest.mark.slow  # a local job: supervisor, torchrun, one rank

SCRIPT = """import argparse, os, torch
from transformers import BertConfig, BertForSequenceClassification
parser = argparse.ArgumentParser()
parser.add_argument("--epochs", type=int)
parser.add_argument("--model_name", type=str)
args = parser.parse_args()
config = BertConfig(vocab_size=64, hidden_size=16, num_hidden_layers=1, num_attention_heads=2, intermediate_size=32)
model = BertForSequenceClassification(config)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
ids = torch.randint(0, 64, (4, 8))
for _ in range(args.epochs):
    loss = model(input_ids=ids, labels=torch.tensor([0, 1, 0, 1])).loss
    loss.backward(); optimizer.step(); optimizer.zero_grad()
print("trained", args.model_name, "loss", float(loss), "hosts", os.environ["SM_HOSTS"], flush=True)
model.save_pretrained(os.environ["SM_MODEL_DIR"])
"""


def test_huggingface_trains_locally_as_a_pytorch_job(tmp_path):
    source = tmp_path / "src"
    source.mkdir()
    (source / "train.py").write_text(SCRIPT)
    est = HuggingFace(py_version="py310", entry_point="train.py", source_dir=str(source), transformers_version="4.28.1",
                      pytorch_version="2.0.0", instance_type="local", output_path=str(tmp_path / "out"),
                      hyperparameters={"epochs": 2, "model_name": "tiny-bert"})
    assert est.training_image_uri().endswith(
        "/huggingface-pytorch-training:2.0.0-transformers4.28.1-gpu-py310-cu118-ubuntu20.04")
    job = est.fit(job_name=unique("hf-local"))
    assert job.describe()["TrainingJobStatus"] == "Completed"
    log = "\n".join(job.logs())
    assert "trained tiny-bert loss" in log and '["algo-1"]' in log
    with tarfile.open(est.model_data.removeprefix("file://")) as tar:
        assert {"config.json", "model.safetensors"} <= {m.name.lstrip("./") for m in tar.getmembers()}
