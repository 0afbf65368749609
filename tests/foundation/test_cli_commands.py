"""The command line loads a command's module only when that command runs (sagelaunch/cli_commands.py): `--help`
lists every command from its table, and the table says what each command's own help says."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from sagelaunch.cli_commands import COMMANDS, PROFILE_COMMANDS, app, load
from tests.conftest import RUN_ENV

ROOT = Path(__file__).resolve().parents[2]


def _first_paragraph(text: str | None) -> str:
    return " ".join((text or "").split("\n\n")[0].split())


@pytest.mark.parametrize("name, entry", [*COMMANDS.items(), *PROFILE_COMMANDS.items()])
def test_each_listed_summary_is_what_the_command_itself_says(name, entry):
    command = load(entry.module, name)
    assert command.name == name
    assert _first_paragraph(command.short_help or command.help) == _first_paragraph(entry.summary)


def test_the_listing_names_every_command_in_order_and_a_typo_gets_a_suggestion():
    runner = CliRunner()
    listing = runner.invoke(app, ["--help"], env={"COLUMNS": "200"})
    assert listing.exit_code == 0, listing.output
    rows = [line.strip("│ ").split()[0] for line in listing.output.splitlines() if line.startswith("│ ")
            and not line.startswith("│ --")]
    assert [r for r in rows if r in COMMANDS] == list(COMMANDS)
    typo = runner.invoke(app, ["validat"])
    assert typo.exit_code == 2 and "Did you mean 'validate'?" in typo.output
    profile_typo = runner.invoke(app, ["profile", "uii"])
    assert profile_typo.exit_code == 2 and "Did you mean 'ui'?" in profile_typo.output


PROBE = """
import json, sys
from sagelaunch.cli import main
def loaded():
    return sorted(m for m in sys.modules if m.startswith(("sagelaunch.cli_", "sagelaunch.estimators",
                                                          "sagelaunch.profile_sources")))
seen = {}
for args in (["--help"], ["validate", sys.argv[1]]):
    sys.argv = ["sagelaunch", *args]
    try:
        main()
    except SystemExit as exit:
        assert exit.code in (0, None), exit.code
    seen[args[0]] = loaded()
print(json.dumps(seen))
"""


@pytest.mark.integration
def test_help_imports_no_command_and_validate_only_its_own(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "train.py").write_text("print('train')\n")
    (tmp_path / "job.yaml").write_text("framework: pytorch\nentry_point: train.py\nsource_dir: src\n"
                                       "role: arn:aws:iam::123456789012:role/R\nframework_version: '2.0.0'\n"
                                       "py_version: py310\ninstance_type: ml.p3.2xlarge\nregion: us-west-2\n")
    out = subprocess.run([sys.executable, "-c", PROBE, str(tmp_path / "job.yaml")], capture_output=True, text=True,
                         cwd=ROOT, env={**os.environ, **RUN_ENV}, timeout=120)
    assert out.returncode == 0, out.stderr[-3000:]
    seen = json.loads(out.stdout.strip().splitlines()[-1])
    assert seen["--help"] == ["sagelaunch.cli_commands"]
    after_validate = set(seen["validate"]) - set(seen["--help"])
    assert {"sagelaunch.cli_validate", "sagelaunch.estimators"} <= after_validate
    assert not {m for m in after_validate if m.startswith(("sagelaunch.cli_", "sagelaunch.profile_sources"))} - {
        "sagelaunch.cli_validate", "sagelaunch.cli_output"}  # no other command's module
