"""Fine-tune RoBERTa for 3-class tweet sentiment (negative / neutral / positive) with the HF Trainer.

As in AWS's "PyTorch 2.0 on SageMaker" post: `cardiffnlp/twitter-roberta-base-sep2022` on
`cardiffnlp/tweet_eval`/`sentiment`, learning rate 1e-5, per-device batch 16, evaluation and a checkpoint
each epoch, the best model chosen by macro recall, and the PyTorch 2 features as switches
(`--torch_compile`, `--bf16`, `--optim adamw_torch_fused`).

Offline mode (`--model_name_or_path tiny-roberta`): a tiny RoBERTa built from a RobertaConfig, a
byte-level BPE tokenizer trained on the training text, and the dataset shipped in
scripts/sentiment_data/. Nothing is downloaded.

It reads the SageMaker container contract, so it runs unchanged under the local backend, on
SageMaker, and under torchrun: SM_MODEL_DIR, SM_OUTPUT_DATA_DIR, SM_CHANNEL_TRAIN / VALIDATION /
TEST (folders of .jsonl / .csv files with `text` and `label`; without a validation channel 15% of
train is held out, seeded), SM_NUM_GPUS, hyperparameters as `--name value`. With SAGELAUNCH_PROFILER_CONFIG set, training steps are annotated by the
profiler's Trainer callback when the `profiler` package is importable.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))  # tiny_roberta.py sits next to this script in the source dir

from tiny_roberta import LABELS  # noqa: E402  (light: no torch/transformers at import)

HUB_MODEL = "cardiffnlp/twitter-roberta-base-sep2022"
TINY_MODEL = "tiny-roberta"
SHIPPED_DATA = HERE / "sentiment_data"
SPLITS = ("train", "validation", "test")
# what each mode defaults to when a hyperparameter is not given: the post's recipe for the hub
# model; for the tiny randomly-initialised model a larger step size and more epochs
DEFAULTS = {
    "hub": {"learning_rate": 1e-5, "epochs": 3, "max_length": 128, "warmup_steps": 0, "num_threads": 0},
    # one CPU thread: the tiny model's matrices are too small to split, and on a busy machine idle
    # OpenMP workers spin-wait (measured 3.5 s vs 70 s per epoch on 2 shared cores)
    "tiny": {"learning_rate": 1e-3, "epochs": 8, "max_length": 64, "warmup_steps": 30, "num_threads": 1},
}


def str2bool(value: str | bool) -> bool:
    if isinstance(value, bool):
        return value
    if value.lower() in ("1", "true", "yes", "y", "on"):
        return True
    if value.lower() in ("0", "false", "no", "n", "off"):
        return False
    raise argparse.ArgumentTypeError(f"expected a boolean (true/false), got {value!r}")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    env = os.environ
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model_name_or_path", default=HUB_MODEL, help=f"hub id or local folder; '{TINY_MODEL}' = offline")
    p.add_argument("--dataset_name", default="cardiffnlp/tweet_eval",  # the hub's home of tweet_eval
                   help="hub dataset when no channels are given ('shipped' = scripts/sentiment_data)")
    p.add_argument("--dataset_config", default="sentiment")
    p.add_argument("--epochs", type=float, default=None)
    p.add_argument("--learning_rate", type=float, default=None)
    p.add_argument("--per_device_train_batch_size", type=int, default=16)
    p.add_argument("--per_device_eval_batch_size", type=int, default=64)
    p.add_argument("--max_length", type=int, default=None)
    p.add_argument("--max_train_samples", type=int, default=None, help="train on the first N rows only")
    p.add_argument("--max_eval_samples", type=int, default=None, help="evaluate/test on the first N rows only")
    p.add_argument("--validation_split", type=float, default=0.15,
                   help="share of train held out for evaluation when no validation channel is given")
    p.add_argument("--warmup_steps", type=int, default=None)
    p.add_argument("--weight_decay", type=float, default=0.01)
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--logging_steps", type=int, default=20)
    p.add_argument("--torch_compile", type=str2bool, default=False)
    p.add_argument("--bf16", type=str2bool, default=False)
    p.add_argument("--optim", default="adamw_torch", help="e.g. adamw_torch_fused (PyTorch 2 fused AdamW)")
    p.add_argument("--num_threads", type=int, default=None, help="torch CPU threads; 0 = torch's default")
    p.add_argument("--vocab_size", type=int, default=1000, help="tiny mode: BPE vocabulary size")
    p.add_argument("--model_dir", default=env.get("SM_MODEL_DIR", "model"))
    p.add_argument("--output_data_dir", default=env.get("SM_OUTPUT_DATA_DIR", "output"))
    p.add_argument("--checkpoint_dir", default=None, help="default: <model_dir>/../checkpoints (/opt/ml/checkpoints)")
    for split in SPLITS:
        p.add_argument(f"--{split}_dir", default=env.get(f"SM_CHANNEL_{split.upper()}"))
    p.add_argument("--num_gpus", type=int, default=int(env["SM_NUM_GPUS"]) if "SM_NUM_GPUS" in env else None)
    args = p.parse_args(argv)
    args.tiny = args.model_name_or_path == TINY_MODEL
    for key, value in DEFAULTS["tiny" if args.tiny else "hub"].items():
        if getattr(args, key) is None:
            setattr(args, key, value)
    if args.checkpoint_dir is None:
        args.checkpoint_dir = str(Path(args.model_dir).resolve().parent / "checkpoints")
    return args


# ---------------------------------------------------------------- data


def read_rows(folder: str) -> list[dict]:
    """Every .jsonl/.json/.csv file in a channel folder (or one file), as {"text", "label"} rows."""
    path = Path(folder)
    files = sorted(p for p in (path.iterdir() if path.is_dir() else [path]) if p.suffix in (".jsonl", ".json", ".csv"))
    if not files:
        raise ValueError(f"no .jsonl/.json/.csv file in {folder}: put the split's rows there (text,label)")
    rows: list[dict] = []
    for file in files:
        with file.open(encoding="utf-8") as f:
            rows += list(csv.DictReader(f)) if file.suffix == ".csv" else [json.loads(line) for line in f if line.strip()]
    return [{"text": r["text"], "label": label_id(r["label"])} for r in rows]


def label_id(label) -> int:
    if isinstance(label, str) and not label.isdigit():
        if label.lower() not in LABELS:
            raise ValueError(f"label {label!r} is not one of {LABELS} (or 0/1/2)")
        return LABELS.index(label.lower())
    return int(label)


def load_splits(args) -> dict:
    """Channels when the job has them, else the shipped data (offline) or the hub dataset."""
    from datasets import Dataset, load_dataset

    if args.train_dir:
        folders = {s: getattr(args, f"{s}_dir") for s in SPLITS}
        splits = {s: Dataset.from_list(read_rows(f)) for s, f in folders.items() if f}
        if "validation" not in splits:
            splits["train"], splits["validation"] = split_off_validation(splits["train"], args)
    elif args.tiny or args.dataset_name == "shipped":
        splits = {s: Dataset.from_list(read_rows(str(SHIPPED_DATA / f"{s}.jsonl"))) for s in SPLITS}
    else:
        hub = load_dataset(args.dataset_name, args.dataset_config)
        splits = {s: hub[s].select_columns(["text", "label"]) for s in SPLITS if s in hub}
    if args.max_train_samples:
        splits["train"] = splits["train"].select(range(min(args.max_train_samples, len(splits["train"]))))
    if args.max_eval_samples:
        for s in ("validation", "test"):
            if s in splits:
                splits[s] = splits[s].select(range(min(args.max_eval_samples, len(splits[s]))))
    return splits


def split_off_validation(train, args):
    """No validation channel: hold out `validation_split` of train (seeded, so every rank and rerun agrees)."""
    if not 0 < args.validation_split < 1:
        raise ValueError(f"validation_split={args.validation_split}: no 'validation' channel was given, so a share "
                         "of 'train' is held out for the per-epoch evaluation; pass a value between 0 and 1 "
                         "(e.g. 0.15) or a 'validation' channel")
    parts = train.train_test_split(test_size=args.validation_split, seed=args.seed)
    print(f"no 'validation' channel: held out {len(parts['test'])} of {len(train)} training rows "
          f"(validation_split={args.validation_split}, seed={args.seed})")
    return parts["train"], parts["test"]


# ---------------------------------------------------------------- model


def load_model_and_tokenizer(args, train_texts: list[str]):
    if args.tiny:
        from tiny_roberta import build_tiny_model, train_tokenizer

        # every rank (and host) trains the same tokenizer: BPE training is deterministic for the same text
        tokenizer = train_tokenizer(train_texts, vocab_size=args.vocab_size, max_length=args.max_length)
        return build_tiny_model(tokenizer, seed=args.seed), tokenizer
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(args.model_name_or_path)
    model = AutoModelForSequenceClassification.from_pretrained(
        args.model_name_or_path, num_labels=len(LABELS), id2label=dict(enumerate(LABELS)),
        label2id={name: i for i, name in enumerate(LABELS)}, ignore_mismatched_sizes=True,
    )
    return model, tokenizer


def compute_metrics(eval_pred) -> dict[str, float]:
    """Macro recall picks the best checkpoint (the post's choice); accuracy and macro F1 for the log."""
    import numpy as np
    from sklearn.metrics import accuracy_score, f1_score, recall_score

    logits, labels = eval_pred
    preds = np.argmax(logits, axis=-1)
    return {
        "recall": recall_score(labels, preds, average="macro", zero_division=0),
        "accuracy": accuracy_score(labels, preds),
        "f1": f1_score(labels, preds, average="macro", zero_division=0),
    }


def profiler_callbacks() -> list:
    """The profiler's Trainer callback when the job is profiled and the package is importable."""
    if not os.environ.get("SAGELAUNCH_PROFILER_CONFIG"):
        return []
    try:
        from sagelaunch.profiler import hf_callback
    except ImportError as exc:
        print(f"profiler configured but profiler.hf_callback is not importable ({exc}); steps not annotated")
        return []
    factory = getattr(hf_callback, "ProfilerCallback", None) or getattr(hf_callback, "SMProfilerCallback")
    return [factory()]


def build_training_args(args):
    """TrainingArguments of the recipe (transformers v5 names: eval_strategy, use_cpu, processing_class…)."""
    import torch
    from transformers import TrainingArguments

    use_cpu = args.num_gpus == 0 if args.num_gpus is not None else not torch.cuda.is_available()
    return TrainingArguments(
        output_dir=args.checkpoint_dir,
        num_train_epochs=args.epochs,
        learning_rate=args.learning_rate,
        per_device_train_batch_size=args.per_device_train_batch_size,
        per_device_eval_batch_size=args.per_device_eval_batch_size,
        warmup_steps=args.warmup_steps,
        weight_decay=args.weight_decay,
        eval_strategy="epoch",
        save_strategy="epoch",
        save_total_limit=2,
        load_best_model_at_end=True,
        metric_for_best_model="recall",
        greater_is_better=True,
        logging_strategy="steps",
        logging_steps=args.logging_steps,
        torch_compile=args.torch_compile,
        bf16=args.bf16,
        optim=args.optim,
        use_cpu=use_cpu,
        seed=args.seed,
        report_to="none",
        disable_tqdm=True,  # one log line per logging step reads better in job logs than a redrawn bar
        dataloader_num_workers=0,
        ddp_find_unused_parameters=False,  # every RoBERTa classifier weight is used each step
    )


def main(argv: list[str] | None = None) -> dict:
    args = parse_args(argv)
    import datasets
    import transformers
    from transformers import DataCollatorWithPadding, Trainer, set_seed

    if args.num_threads:
        import torch

        torch.set_num_threads(args.num_threads)
    datasets.disable_progress_bars()  # job logs are line-based: no redrawn bars
    transformers.utils.logging.disable_progress_bar()
    set_seed(args.seed)
    splits = load_splits(args)
    model, tokenizer = load_model_and_tokenizer(args, list(splits["train"]["text"]))

    def tokenize(batch):
        return tokenizer(batch["text"], truncation=True, max_length=args.max_length)

    encoded = {s: d.map(tokenize, batched=True, remove_columns=["text"]) for s, d in splits.items()}
    training_args = build_training_args(args)
    trainer = Trainer(
        model=model,
        args=training_args,
        train_dataset=encoded["train"],
        eval_dataset=encoded["validation"],
        processing_class=tokenizer,
        data_collator=DataCollatorWithPadding(tokenizer),
        compute_metrics=compute_metrics,
        callbacks=profiler_callbacks(),
    )
    train_result = trainer.train()
    metrics = {"train_runtime": train_result.metrics.get("train_runtime")}
    metrics.update(trainer.evaluate(encoded["validation"], metric_key_prefix="eval"))
    if "test" in encoded:
        metrics.update(trainer.evaluate(encoded["test"], metric_key_prefix="test"))

    # every rank calls save_model (sharded setups need them all); the Trainer writes from the main one.
    # Model + tokenizer: pipeline("sentiment-analysis") loads the folder.
    trainer.save_model(args.model_dir)
    if trainer.is_world_process_zero():
        Path(args.output_data_dir).mkdir(parents=True, exist_ok=True)
        Path(args.output_data_dir, "metrics.json").write_text(json.dumps(metrics, indent=2))
        print("metrics " + json.dumps({k: round(v, 4) for k, v in metrics.items() if isinstance(v, float)}))
        print(f"model saved to {args.model_dir}")
    return metrics


if __name__ == "__main__":
    main()
