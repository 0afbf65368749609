"""The README's test command runs the suite in lanes (scripts/test_lanes.py): together they select every test exactly
once, and the command fails when any lane fails."""

from __future__ import annotations

import sys
from pathlib import Path

from scripts.test_lanes import LANES, Lane, run

TESTS = Path(__file__).resolve().parents[1]


def _selects(lane: Lane, folder: str, slow: bool) -> bool:
    """Whether pytest run with the lane's arguments selects a test of tests/<folder> that is (not) `slow`: the
    lanes use only a folder to collect, `--ignore=FOLDER` and `-m slow` / `-m "not slow"`."""
    args = list(lane.args)
    marker = args[args.index("-m") + 1]
    ignored = {a.removeprefix("--ignore=") for a in args if a.startswith("--ignore=")}
    folders = [a for a in args if a.startswith("tests/")]
    return ((not folders or f"tests/{folder}" in folders) and f"tests/{folder}" not in ignored
            and {"slow": slow, "not slow": not slow}[marker])


def test_every_test_is_in_exactly_one_lane():
    folders = sorted(p.name for p in TESTS.iterdir() if p.is_dir() and any(p.glob("test_*.py")))
    assert "modelparallel" in folders and "local" in folders
    for folder in folders:
        for slow in (True, False):
            lanes = [lane.name for lane in LANES if _selects(lane, folder, slow)]
            assert len(lanes) == 1, (folder, slow, lanes)


def test_the_command_fails_when_one_lane_fails_and_shows_each_lanes_lines(tmp_path, capsys):
    # a line printed at the interpreter's exit (a ResourceWarning, say) comes after pytest's summary line
    (tmp_path / "test_good.py").write_text("import atexit\natexit.register(print, 'said at exit')\n\n"
                                           "def test_good():\n    pass\n")
    (tmp_path / "test_bad.py").write_text("def test_bad():\n    assert 1 == 2\n")
    lanes = (Lane("good", ("test_good.py",)), Lane("bad", ("test_bad.py",)))
    assert run(sys.executable, ["-p", "no:cacheprovider"], lanes, cwd=str(tmp_path)) == 1
    out = capsys.readouterr().out
    assert "good | test_good.py ." in out and "bad  | test_bad.py F" in out and "good | said at exit" in out
    summary = out[out.index("\nlanes ("):]
    assert "good  exit   0" in summary and "1 passed" in summary
    assert "bad   exit   1" in summary and "1 failed" in summary


def test_a_lane_that_selects_nothing_fails_the_command(tmp_path, capsys):
    (tmp_path / "test_good.py").write_text("def test_good():\n    pass\n")
    lanes = (Lane("good", ("test_good.py",)), Lane("empty", ("test_good.py", "-m", "slow")))
    assert run(sys.executable, ["-p", "no:cacheprovider"], lanes, cwd=str(tmp_path)) == 1
    assert "empty  exit   5" in capsys.readouterr().out
