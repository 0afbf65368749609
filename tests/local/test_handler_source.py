"""A local endpoint runs its handler script's source as it is: nothing is written into the model's folder, and an
inference.py rewritten within the same second at the same size is not served from an earlier compiled copy."""

from __future__ import annotations

import os
import sys

from sagelaunch.launcher.local.serving.handler import load_handler_module


def test_the_handler_runs_the_scripts_current_source_and_writes_nothing_beside_it(tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "dont_write_bytecode", False)  # Python's default: the import system caches bytecode
    code = tmp_path / "code"
    code.mkdir()
    script = code / "inference.py"
    script.write_text("ANSWER = 1\n")
    first = load_handler_module(tmp_path)
    stat = script.stat()
    script.write_text("ANSWER = 2\n")  # same size; same mtime below: an import-system cache would look valid
    os.utime(script, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    second = load_handler_module(tmp_path)
    assert (first.ANSWER, second.ANSWER) == (1, 2)
    assert sorted(p.name for p in code.iterdir()) == ["inference.py"]
