"""The shipped dataset and the training script's contract (arguments, data, TrainingArguments)."""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
DATA = REPO_ROOT / "scripts" / "sentiment_data"
sys.path.insert(0, str(REPO_ROOT / "scripts"))  # the training script imports its neighbours as a job would

import train_sentiment  # noqa: E402
from sentiment_data import generate  # noqa: E402


def read(split: str) -> list[dict]:
    return [json.loads(line) for line in (DATA / f"{split}.jsonl").read_text(encoding="utf-8").splitlines()]


def test_shipped_dataset_is_large_balanced_and_split_without_overlap():
    splits = {s: read(s) for s in ("train", "validation", "test")}
    total = sum(len(rows) for rows in splits.values())
    assert total >= 600
    for split, rows in splits.items():
        counts = Counter(r["label"] for r in rows)
        assert set(counts) == {0, 1, 2}, split
        assert min(counts.values()) >= len(rows) / 6, (split, counts)  # no class starved
        assert all(isinstance(r["text"], str) and 0 < len(r["text"]) <= 280 for r in rows)  # tweet-sized
    texts = [r["text"].lower() for rows in splits.values() for r in rows]
    assert len(set(texts)) == len(texts)  # no duplicates, so no test text was seen in training
    assert len(splits["train"]) > len(splits["validation"]) and len(splits["test"]) >= 100


def test_generator_reproduces_the_shipped_files(tmp_path):
    generated = generate.generate()
    for split, rows in generated.items():
        shipped = read(split)
        assert rows == shipped, f"{split}.jsonl differs from generate.py's output: rerun the generator"


def test_hub_mode_follows_the_post_and_tiny_mode_its_own_defaults(monkeypatch):
    for var in ("SM_CHANNEL_TRAIN", "SM_NUM_GPUS"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("SM_MODEL_DIR", "/opt/ml/model")
    hub = train_sentiment.parse_args([])
    assert hub.model_name_or_path == "cardiffnlp/twitter-roberta-base-sep2022"
    assert (hub.learning_rate, hub.per_device_train_batch_size, hub.tiny) == (1e-5, 16, False)
    assert (hub.dataset_name, hub.dataset_config) == ("cardiffnlp/tweet_eval", "sentiment")
    assert hub.checkpoint_dir == str(Path("/opt/ml/checkpoints"))
    tiny = train_sentiment.parse_args(["--model_name_or_path", "tiny-roberta", "--learning_rate", "0.002"])
    assert tiny.tiny and tiny.learning_rate == 0.002 and tiny.max_length == 64 and tiny.num_threads == 1


def test_sagemaker_contract_variables_become_arguments(monkeypatch, tmp_path):
    monkeypatch.setenv("SM_MODEL_DIR", str(tmp_path / "model"))
    monkeypatch.setenv("SM_OUTPUT_DATA_DIR", str(tmp_path / "out"))
    monkeypatch.setenv("SM_CHANNEL_TRAIN", str(tmp_path / "train"))
    monkeypatch.setenv("SM_CHANNEL_VALIDATION", str(tmp_path / "validation"))
    monkeypatch.delenv("SM_CHANNEL_TEST", raising=False)
    monkeypatch.setenv("SM_NUM_GPUS", "0")
    args = train_sentiment.parse_args(["--epochs", "2", "--torch_compile", "True", "--bf16", "false"])
    assert args.model_dir == str(tmp_path / "model") and args.output_data_dir == str(tmp_path / "out")
    assert args.train_dir == str(tmp_path / "train") and args.test_dir is None
    assert args.num_gpus == 0 and args.epochs == 2.0 and args.torch_compile is True and args.bf16 is False
    with pytest.raises(SystemExit):
        train_sentiment.parse_args(["--bf16", "maybe"])


def test_pytorch2_switches_map_to_transformers_v5_training_arguments(tmp_path):
    args = train_sentiment.parse_args([
        "--model_name_or_path", "tiny-roberta", "--torch_compile", "true", "--optim", "adamw_torch_fused",
        "--num_gpus", "0", "--checkpoint_dir", str(tmp_path),
    ])
    targs = train_sentiment.build_training_args(args)
    assert targs.torch_compile is True and targs.optim == "adamw_torch_fused"
    assert targs.per_device_train_batch_size == 16 and targs.use_cpu is True
    assert str(targs.eval_strategy) in ("epoch", "IntervalStrategy.EPOCH") and targs.load_best_model_at_end
    assert targs.metric_for_best_model == "recall" and targs.greater_is_better is True


def test_channels_read_jsonl_and_csv_with_label_names(tmp_path):
    (tmp_path / "a.jsonl").write_text('{"text": "great", "label": 2}\n{"text": "meh", "label": "1"}\n')
    (tmp_path / "b.csv").write_text("text,label\nawful,negative\nfine,Positive\n")
    rows = train_sentiment.read_rows(str(tmp_path))
    assert rows == [{"text": "great", "label": 2}, {"text": "meh", "label": 1},
                    {"text": "awful", "label": 0}, {"text": "fine", "label": 2}]
    (tmp_path / "c.csv").write_text("text,label\nodd,angry\n")
    with pytest.raises(ValueError, match="'angry' is not one of"):
        train_sentiment.read_rows(str(tmp_path))
    with pytest.raises(ValueError, match="no .jsonl/.json/.csv file"):
        train_sentiment.read_rows(str(tmp_path / "missing"))


def test_profiler_callback_is_attached_only_for_profiled_jobs(monkeypatch, tmp_path):
    monkeypatch.delenv("SAGELAUNCH_PROFILER_CONFIG", raising=False)
    assert train_sentiment.profiler_callbacks() == []
    monkeypatch.setenv("SAGELAUNCH_PROFILER_CONFIG", str(tmp_path / "profilerconfig.json"))
    callbacks = train_sentiment.profiler_callbacks()
    from transformers import TrainerCallback

    assert len(callbacks) == 1 and isinstance(callbacks[0], TrainerCallback)
    assert type(callbacks[0]).__module__ == "sagelaunch.profiler.hf_callback"


def test_train_channel_without_validation_holds_out_a_seeded_share(monkeypatch, tmp_path, capsys):
    for split in ("train", "test"):
        (tmp_path / split).mkdir()
        (tmp_path / split / f"{split}.jsonl").write_bytes((DATA / f"{split}.jsonl").read_bytes())
    monkeypatch.setenv("SM_CHANNEL_TRAIN", str(tmp_path / "train"))
    monkeypatch.setenv("SM_CHANNEL_TEST", str(tmp_path / "test"))
    monkeypatch.delenv("SM_CHANNEL_VALIDATION", raising=False)
    args = train_sentiment.parse_args(["--model_name_or_path", "tiny-roberta"])
    splits = train_sentiment.load_splits(args)
    n = len(read("train"))
    assert len(splits["validation"]) == round(0.15 * n) and len(splits["train"]) + len(splits["validation"]) == n
    assert not set(splits["train"]["text"]) & set(splits["validation"]["text"])
    assert len(splits["test"]) == len(read("test"))
    assert list(train_sentiment.load_splits(args)["validation"]["text"]) == list(splits["validation"]["text"])
    assert f"held out {len(splits['validation'])} of {n} training rows" in capsys.readouterr().out
    with pytest.raises(ValueError, match="validation_split=1.5.*between 0 and 1"):
        train_sentiment.load_splits(train_sentiment.parse_args(["--validation_split", "1.5"]))


def test_shipped_dataset_is_not_trivially_separable():
    """Words alone must not solve it: negations, sarcasm, mixed and emotive-neutral texts in the test split,
    and a TF-IDF (1–2-gram) logistic regression stays well short of perfect (the first, easy data: 0.99)."""
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import recall_score

    train, test = read("train"), read("test")
    texts = [r["text"].lower() for r in test]
    for marker in (" not ", "oh great", " but ", "poll:"):
        assert any(marker in t for t in texts), marker
    vectorizer = TfidfVectorizer(ngram_range=(1, 2))
    baseline = LogisticRegression(max_iter=2000).fit(vectorizer.fit_transform([r["text"] for r in train]),
                                                     [r["label"] for r in train])
    predicted = baseline.predict(vectorizer.transform([r["text"] for r in test]))
    assert recall_score([r["label"] for r in test], predicted, average="macro") < 0.93
