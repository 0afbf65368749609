"""Classify a few tweets with a fine-tuned sentiment model and print label and score.

    python scripts/test_trained_model.py MODEL            # a model folder or a model.tar.gz
    python scripts/test_trained_model.py MODEL "some text" "another text"
"""

from __future__ import annotations

import argparse
import sys
import tarfile
import tempfile
from pathlib import Path

EXAMPLES = [
    "Covid cases are increasing fast!",
    "Covid cases are dropping fast, such good news!",
    "The new album is absolutely amazing, I love it",
    "The meeting about the bus route is at city hall",
    "Waited three hours for my flight, never again 😡",
]


def load_classifier(model: str):
    """A text-classification pipeline from a model folder, or from a model.tar.gz unpacked to a temp folder."""
    from transformers import pipeline

    path = Path(model)
    if path.is_file() and tarfile.is_tarfile(path):
        sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script: sagelaunch's packages
        from sagelaunch.launcher.common.archive import unpack

        folder = tempfile.mkdtemp(prefix="sentiment-model-")
        unpack(path, folder)
        path = Path(folder)
    return pipeline("sentiment-analysis", model=str(path), tokenizer=str(path), device="cpu")


def main(argv: list[str] | None = None) -> list[dict]:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("model", help="model folder (SM_MODEL_DIR of the job) or model.tar.gz")
    parser.add_argument("texts", nargs="*", help=f"texts to classify (default: {len(EXAMPLES)} examples)")
    args = parser.parse_args(argv)
    classifier = load_classifier(args.model)
    texts = args.texts or EXAMPLES
    results = classifier(texts)
    width = max(len(t) for t in texts)
    for text, result in zip(texts, results):
        print(f"{text:<{width}}  {result['label']:<8}  {result['score']:.3f}")
    return [{"text": t, **r} for t, r in zip(texts, results)]


if __name__ == "__main__":
    main()
