"""A vendored SMP v1 example (tests/data/smp_examples/<name>): its upstream record (repository, commit, each file's
sha256) and its mechanical changes — each an exact text replacement, listed with why, that must match the
upstream text as many times as the record says — applied to a copy the test runs."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parents[1] / "data" / "smp_examples"


def record(name: str) -> dict:
    return json.loads((EXAMPLES / name / "upstream.json").read_text())


def changed_files(name: str) -> list[str]:
    """The vendored files that differ from upstream's text (sha256 mismatch); empty when all are upstream's."""
    folder = EXAMPLES / name
    return [file for file, digest in record(name)["sha256"].items()
            if hashlib.sha256((folder / file).read_bytes()).hexdigest() != digest]


def prepared_copy(name: str, destination: Path, extra: tuple[Path, ...] = ()) -> Path:
    """The example copied to `destination` with its mechanical changes applied, and `extra` files beside it."""
    shutil.copytree(EXAMPLES / name, destination, ignore=shutil.ignore_patterns("upstream.json", "LICENSE", "NOTICE"))
    for change in record(name)["mechanical_changes"]:
        path = destination / change["file"]
        text = path.read_text()
        found = text.count(change["old"])
        if found != change["count"]:
            raise AssertionError(f"{change['file']}: {change['old']!r} found {found} times, the record says "
                                 f"{change['count']}")
        path.write_text(text.replace(change["old"], change["new"]))
    for file in extra:
        shutil.copy(file, destination / file.name)
    return destination
