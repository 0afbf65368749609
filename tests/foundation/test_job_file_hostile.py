"""Hostile or odd job files and field values: each ends in one clear line (field or file, value, what is allowed,
a fix), before anything is built, run or registered. Each case reproduces a probe result of issue 15.

Inputs that once took gigabytes run as real processes with their address space capped, so a regression fails
with MemoryError instead of taking the machine's memory; the others run the same command line in-process.
"""

from __future__ import annotations

import contextlib
import os
import resource
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MEMORY_CAP = 2 * 1024**3  # the YAML bomb below grew `validate` past 5.5 GB before the fix

HEAD = """\
framework: pytorch
entry_point: train.py
source_dir: code
framework_version: '2.0.0'
instance_type: local
"""


def alias_bomb() -> str:
    """Nine levels of nine aliases in one hyperparameter: ~400 bytes that stand for 9**9 (387 million) strings."""
    levels = ['&a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for prev, name in zip("abcdefgh", "bcdefghi"):
        levels.append(f"&{name} [{','.join('*' + prev for _ in range(9))}]")
    return "hyperparameters:\n  lol:\n" + "".join(f"    - {level}\n" for level in levels)


def _cap_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))


def capped_sagelaunch(*args: str, home: Path) -> subprocess.CompletedProcess:
    """`sagelaunch ARGS` as a process limited to MEMORY_CAP of address space."""
    code = "import sys; from sagelaunch.cli import main; sys.argv = ['sagelaunch', *sys.argv[1:]]; main()"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "SAGELAUNCH_HOME": str(home), "COLUMNS": "300"}
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=180,
                          cwd=ROOT, env=env, preexec_fn=_cap_memory)


@pytest.fixture
def sagelaunch(monkeypatch):
    """`sagelaunch ARGS` in-process (the real Typer app), in `cwd`, with its own SAGELAUNCH_HOME."""
    from typer.testing import CliRunner

    from sagelaunch.cli import app

    def run(*args: str, home: Path, cwd: Path = ROOT) -> subprocess.CompletedProcess:
        monkeypatch.setenv("SAGELAUNCH_HOME", str(home))
        monkeypatch.setenv("COLUMNS", "300")
        monkeypatch.chdir(cwd)
        result = CliRunner().invoke(app, list(args), catch_exceptions=False)
        return subprocess.CompletedProcess(args, result.exit_code, result.stdout, result.stderr)

    return run


@pytest.fixture
def job_dir(tmp_path):
    (tmp_path / "code").mkdir()
    (tmp_path / "code" / "train.py").write_text("print('train')\n")
    return tmp_path


def write(job_dir: Path, body: str | bytes, name: str = "job.yaml") -> Path:
    path = job_dir / name
    if isinstance(body, bytes):
        path.write_bytes(body)
    else:
        path.write_text(body)
    return path


def refused(done: subprocess.CompletedProcess) -> list[str]:
    """The problem lines of a refused `validate` (✗ header, then one `  - …` line per problem)."""
    assert done.returncode == 1, done
    assert "Traceback" not in done.stderr and "MemoryError" not in done.stderr, done.stderr
    lines = done.stderr.splitlines()
    assert lines[0].startswith("✗ ") and all(line.startswith("  - ") for line in lines[1:]), done.stderr
    return [line[4:] for line in lines[1:]]


def fit_refused(done: subprocess.CompletedProcess, home: Path) -> str:
    """`fit` refused in one line, and nothing was started or registered."""
    assert done.returncode == 1, done
    assert "Traceback" not in done.stderr and "Started" not in done.stdout, done
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith("error: ")
    assert not (home / "jobs").exists() or not any((home / "jobs").iterdir()), "no job folder was made"
    if (home / "registry.db").exists():
        with contextlib.closing(sqlite3.connect(home / "registry.db")) as db:
            assert db.execute("SELECT COUNT(*) FROM jobs").fetchone() == (0,), "no job was registered"
    return line[len("error: "):]


def test_alias_bomb_is_refused_before_anything_is_built(job_dir, tmp_path):
    bomb = HEAD + alias_bomb()
    assert len(alias_bomb().encode()) < 500
    path = write(job_dir, bomb)
    line = 9  # the first alias: level b
    expected = (f"{path}: line {line}, column 11: YAML alias *a is not allowed in a job file (aliases can expand a "
                "few bytes into gigabytes); write the value out in full")
    assert refused(capped_sagelaunch("validate", str(path), home=tmp_path / "home")) == [expected]
    done = capped_sagelaunch("fit", str(path), "--no-wait", home=tmp_path / "home")
    assert fit_refused(done, tmp_path / "home") == expected


def test_anchors_alone_are_fine(sagelaunch, job_dir, tmp_path):
    path = write(job_dir, HEAD + "hyperparameters: &hp {epochs: 2}\n")
    done = sagelaunch("validate", str(path), home=tmp_path / "home")
    assert done.returncode == 0 and done.stdout.startswith("✓ job.yaml"), done


def test_nesting_600_deep_is_one_line_not_a_recursion_error(sagelaunch, job_dir, tmp_path):
    for value in ("[" * 600 + "]" * 600, "{a: " * 600 + "1" + "}" * 600):
        path = write(job_dir, HEAD + f"hyperparameters:\n  deep: {value}\n")
        (line,) = refused(sagelaunch("validate", str(path), home=tmp_path / "home"))
        assert line.startswith(f"{path}: line 7, column ")
        assert line.endswith("nested more than 64 levels deep; allowed: at most 64 — flatten the value")


def test_hyperparameter_nested_deeper_than_allowed_names_the_field(sagelaunch, job_dir, tmp_path):
    path = write(job_dir, HEAD + "hyperparameters:\n  deep: " + "[" * 40 + "]" * 40 + "\n")
    assert refused(sagelaunch("validate", str(path), home=tmp_path / "home")) == [
        "hyperparameters['deep'] nests lists/dicts more than 32 levels deep; allowed: at most 32 levels — flatten "
        "it, or pass it as a JSON string the script decodes"]


PYTHON_API = """
from pydantic import ValidationError
from sagelaunch.estimators import PyTorch

bomb = ["lol"] * 9
for _ in range(8):
    bomb = [bomb] * 9  # 387 million strings by reference, a few kilobytes of memory
deep = []
for _ in range(5000):
    deep = [deep]
loop = []
loop.append(loop)
for value in (bomb, deep, loop):
    try:
        PyTorch(entry_point="train.py", framework_version="2.0.0", instance_type="local", hyperparameters={"hp": value})
    except ValidationError as err:
        text = str(err)  # pydantic prints the input too: it must be printed short
        assert len(text) < 1000, len(text)
        print(err.errors()[0]["msg"].removeprefix("Value error, "))
"""


def test_python_api_bounds_its_work_before_serialising(tmp_path):
    done = subprocess.run([sys.executable, "-c", PYTHON_API], capture_output=True, text=True, timeout=180,
                          cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, preexec_fn=_cap_memory)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.splitlines() == [
        "hyperparameters['hp'] encodes to more than 2500 characters; allowed: at most 2500 (SageMaker's limit) — "
        "pass large settings as an input channel or a file in source_dir",
        "hyperparameters['hp'] nests lists/dicts more than 32 levels deep; allowed: at most 32 levels — flatten it, "
        "or pass it as a JSON string the script decodes",
        "hyperparameters['hp'] nests lists/dicts more than 32 levels deep; allowed: at most 32 levels — flatten it, "
        "or pass it as a JSON string the script decodes",
    ]


def test_numeric_job_name_is_one_line_with_the_fix(sagelaunch, job_dir, tmp_path):
    path = write(job_dir, HEAD + "job_name: 12345\n")
    expected = ("job_name=12345 is not text (int); allowed: letters, digits and hyphens (at most 63); "
                "quote it: job_name: '12345'")
    assert refused(sagelaunch("validate", str(path), home=tmp_path / "home")) == [expected]
    assert fit_refused(sagelaunch("fit", str(path), "--no-wait", home=tmp_path / "home"), tmp_path / "home") == expected


def test_nul_in_environment_or_hyperparameters_is_refused_at_validation(sagelaunch, job_dir, tmp_path):
    path = write(job_dir, HEAD + 'environment: {TOKEN: "ab\\0cd"}\nhyperparameters: {tag: ["ok", "x\\0y"]}\n')
    problems = sorted(refused(sagelaunch("validate", str(path), home=tmp_path / "home")))
    assert problems == [
        "environment['TOKEN']=<hidden> contains a NUL character (\\x00), which no process environment can hold; "
        "allowed: text without \\x00 — remove it",
        "hyperparameters['tag'] contains a NUL character (\\x00) in 'x\\x00y'; jobs receive hyperparameters as "
        "arguments and environment variables, which cannot hold one; allowed: text without \\x00 — remove it",
    ]
    only_env = write(job_dir, HEAD + 'environment: {TOKEN: "ab\\0cd"}\n', "env.yaml")
    assert fit_refused(sagelaunch("fit", str(only_env), "--no-wait", home=tmp_path / "home"),
                       tmp_path / "home") == problems[0]


def test_nul_in_an_input_path_names_the_channel(sagelaunch, job_dir, tmp_path):
    path = write(job_dir, HEAD + 'inputs: {train: "data\\0x"}\n')
    (line,) = refused(sagelaunch("validate", str(path), home=tmp_path / "home"))
    assert line.startswith("inputs['train']=") and "contains a NUL character" in line


def test_non_utf8_job_file_names_the_file_and_line(sagelaunch, job_dir, tmp_path):
    path = write(job_dir, (HEAD + "base_job_name: caf\xe9\n").encode("latin-1"))
    expected = f"{path}: not UTF-8 text (byte 0xe9 on line 6); allowed: UTF-8 — save the file as UTF-8"
    assert refused(sagelaunch("validate", str(path), home=tmp_path / "home")) == [expected]
    assert fit_refused(sagelaunch("fit", str(path), "--no-wait", home=tmp_path / "home"), tmp_path / "home") == expected


def test_yaml_syntax_error_names_file_line_and_column(sagelaunch, job_dir, tmp_path):
    path = write(job_dir, HEAD + "hyperparameters: {epochs: 2\n")
    (line,) = refused(sagelaunch("validate", str(path), home=tmp_path / "home"))
    assert line.startswith(f"{path}: not valid YAML: line 7, column 1: expected ',' or '}}'"), line
    assert line.endswith("; fix the syntax there")


def test_oversized_job_file_is_refused_unread(sagelaunch, job_dir, tmp_path):
    path = write(job_dir, HEAD + "# " + "x" * 1_000_000 + "\n")
    assert refused(sagelaunch("validate", str(path), home=tmp_path / "home")) == [
        f"{path}: {path.stat().st_size:,} bytes; a job file is at most 1,000,000 bytes — put data in an input "
        "channel, not in the job file"]


def test_missing_local_input_path_is_refused_for_a_local_job(sagelaunch, job_dir, tmp_path):
    path = write(job_dir, HEAD + "inputs: {train: /nonexistent/sagelaunch-data, test: data}\n")
    expected = "inputs['train']: '/nonexistent/sagelaunch-data' does not exist; pass an existing folder or file"
    assert refused(sagelaunch("validate", str(path), home=tmp_path / "home")) == [expected]
    assert fit_refused(sagelaunch("fit", str(path), "--no-wait", home=tmp_path / "home"), tmp_path / "home") == expected
    write(job_dir, HEAD + "inputs: {test: data}\n")  # relative to the job file, like source_dir
    done = sagelaunch("validate", str(path), home=tmp_path / "home", cwd=tmp_path.parent)
    assert refused(done) == [f"inputs['test']: '{job_dir / 'data'}' does not exist; pass an existing folder or file"]
    (job_dir / "data").mkdir()
    (job_dir / "data" / "rows.csv").write_text("1,2\n")
    done = sagelaunch("validate", str(path), home=tmp_path / "home", cwd=tmp_path.parent)
    assert done.returncode == 0 and done.stdout.startswith("✓ job.yaml"), done


@pytest.mark.parametrize("field", ["hyperparameters", "distribution", "tags", "environment", "profiler_config",
                                   "subnets", "ignore_patterns"])
def test_values_nested_5000_deep_in_any_field_give_a_short_error_not_a_recursion_error(field):
    from pydantic import ValidationError

    from sagelaunch.estimators import PyTorch

    deep: list = []
    for _ in range(5000):
        deep = [deep]
    value = {"hyperparameters": {"hp": deep}, "distribution": {"torch_distributed": {"enabled": deep}},
             "tags": {"team": deep}, "environment": {"A": deep}}.get(field, deep)
    with pytest.raises(ValidationError) as refused_:
        PyTorch(entry_point="train.py", framework_version="2.0.0", instance_type="local", **{field: value})
    (error,) = refused_.value.errors()
    named = error["loc"][:1] == (field,) or error["msg"].startswith(f"Value error, {field}.")  # cross-field: loc ()
    assert named and len(str(refused_.value)) < 1000, error
