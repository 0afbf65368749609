"""The session's tiny RoBERTa, trained once by scripts/train_sentiment.py under the SageMaker contract."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO_ROOT / "scripts"))

import test_trained_model as check_script  # noqa: E402  scripts/test_trained_model.py


def test_tiny_model_reaches_the_macro_recall_target(sentiment_model):
    metrics = sentiment_model.metrics
    assert metrics["test_recall"] >= 0.70, metrics  # macro recall on the shipped test split
    assert metrics["eval_recall"] >= 0.70, metrics
    assert 0.0 <= metrics["test_accuracy"] <= 1.0 and metrics["epoch"] == 8.0
    # evaluation and a checkpoint every epoch, the best one reloaded at the end
    log = sentiment_model.log
    assert log.count("'eval_recall'") >= 8
    checkpoints = sorted(p.name for p in (sentiment_model.model_dir.parent / "checkpoints").iterdir())
    assert checkpoints and all(name.startswith("checkpoint-") for name in checkpoints)


def test_saved_folder_is_a_sentiment_pipeline_model(sentiment_model):
    files = {p.name for p in sentiment_model.model_dir.iterdir()}
    assert {"config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json"} <= files
    config = json.loads((sentiment_model.model_dir / "config.json").read_text())
    assert config["model_type"] == "roberta"
    assert {int(k): v for k, v in config["id2label"].items()} == {0: "negative", 1: "neutral", 2: "positive"}

    from transformers import pipeline

    classify = pipeline("sentiment-analysis", model=str(sentiment_model.model_dir), device="cpu")
    [result] = classify(["Covid cases are increasing fast!"])
    assert result["label"] == "negative" and 0.5 < result["score"] <= 1.0


def test_check_script_prints_label_and_score(sentiment_model, capsys):
    results = check_script.main([str(sentiment_model.model_dir)])
    printed = capsys.readouterr().out
    assert results[0]["text"] == "Covid cases are increasing fast!" and results[0]["label"] == "negative"
    labels = [r["label"] for r in results]
    assert labels[1] == "positive" and labels[3] == "neutral"  # the examples cover all three classes
    for r in results:
        assert r["text"] in printed and f"{r['score']:.3f}" in printed and r["label"] in printed


def test_check_script_reads_a_model_archive(sentiment_archive, capsys):
    results = check_script.main([str(sentiment_archive), "what a wonderful morning, love it"])
    assert [r["label"] for r in results] == ["positive"]
    assert "positive" in capsys.readouterr().out


@pytest.mark.slow  # trains under torchrun
def test_script_runs_unchanged_under_torchrun(tmp_path):
    """Two processes (DDP on gloo): half the optimizer steps of one process, one saved model."""
    from tests.fixtures.sentiment import train_tiny_sentiment_model

    run = train_tiny_sentiment_model(tmp_path, "--epochs", "1", "--max_train_samples", "256",
                                     "--max_eval_samples", "64", nproc=2, timeout=120)
    # 256 samples / (16 per device × 2 processes) = 8 steps per epoch
    assert [p.name for p in (tmp_path / "checkpoints").iterdir()] == ["checkpoint-8"]
    assert (run.model_dir / "model.safetensors").is_file() and run.metrics["epoch"] == 1.0
    assert run.log.count("model saved to") == 1  # only the main process reports (and writes metrics)
