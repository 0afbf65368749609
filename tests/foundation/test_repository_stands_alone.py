"""The repository stands alone: no tracked file reaches outside it to a `shared` folder kept beside a checkout.

A user's clone has nothing next to it, so a link, path or script argument pointing there breaks for them.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
OUTSIDE = ".." + "/shared"  # assembled, so that this file does not match itself


def references_outside(checkout: Path) -> str:
    """`git grep` of the tracked text files for OUTSIDE: one `file:line:text` per hit."""
    found = subprocess.run(["git", "grep", "-n", "-I", "-F", OUTSIDE], cwd=checkout, capture_output=True, text=True)
    assert found.returncode in (0, 1), f"git grep failed in {checkout}: {found.stderr}"  # 1: no match
    return found.stdout


def test_no_tracked_file_refers_to_a_folder_beside_the_repository():
    hits = references_outside(REPO)
    assert hits == "", f"tracked files refer to {OUTSIDE}, which a clone does not have:\n{hits}"


def test_the_check_finds_such_a_reference(tmp_path):
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / "README.md").write_text(f"see [design]({OUTSIDE}/DESIGN.md)\n")
    (tmp_path / "untracked.md").write_text(f"{OUTSIDE}/x\n")  # not in git: not the repository's
    subprocess.run(["git", "add", "README.md"], cwd=tmp_path, check=True)
    assert references_outside(tmp_path) == f"README.md:1:see [design]({OUTSIDE}/DESIGN.md)\n"
