"""Local jobs start the script as SageMaker's training toolkit does: a source_dir's requirements.txt installed first
(into a cache folder reused between jobs), hyperparameters turned into arguments by the toolkit's own to_cmd_args
(vendored, the oracle) and split as the real /bin/sh splits the line the toolkit joins."""

from __future__ import annotations

import collections
import collections.abc
import importlib.util
import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from sagelaunch.launcher.local.host_layout import HostLayout
from sagelaunch.launcher.local import contract
from sagelaunch.launcher.local import registry
from sagelaunch.launcher.backends import attach, submit
from sagelaunch.launcher.local import requirements
from sagelaunch.launcher.common.request import encode_hyperparameters
from tests.conftest import RUN_ENV
from tests.local.conftest import local_job, make_spec

TOOLKIT_MAPPING = Path(__file__).parents[1] / "data" / "sagemaker_training_toolkit" / "mapping.py"
PRINT_ARGV = "import json, sys; print(json.dumps(sys.argv[1:]))"

# every JSON type a hyperparameter can decode to, and the shapes scripts rely on
HYPERPARAMETERS = {
    "do_train": "", "epochs": 3, "learning_rate": 5e-05, "fp16": True, "resume": False, "seed": None,
    "layers": [64, 32], "names": ["a b", "c"], "mp": {"partitions": 2, "ddp": True}, "model_name_or_path": "gpt2",
    "title": "two words", "quoted": '"kept together"', "x": 1,
}


@pytest.fixture(scope="module")
def toolkit():
    """The training toolkit's own mapping.py (vendored, unchanged)."""
    collections.Mapping = collections.abc.Mapping  # the toolkit's module predates Python 3.10's removal
    spec = importlib.util.spec_from_file_location("toolkit_mapping", TOOLKIT_MAPPING)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def to_cmd_args(toolkit):
    return toolkit.to_cmd_args


def _decoded(values: dict) -> dict:
    """What the toolkit reads back from hyperparameters.json, which holds v2's json.dumps of each value."""
    return contract.decode_hyperparameters(encode_hyperparameters(values))


def _through_the_shell(args: list[str], tmp_path: Path) -> list[str]:
    """The toolkit's run_async: " ".join(cmd) through /bin/sh (create_subprocess_shell), here printing argv."""
    line = " ".join([sys.executable, "-c", f"'{PRINT_ARGV}'", *args])
    out = subprocess.run(["/bin/sh", "-c", line], capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_user_args_are_the_toolkits_to_cmd_args_for_every_type(to_cmd_args):
    decoded = _decoded(HYPERPARAMETERS)
    assert contract.user_args(decoded) == to_cmd_args(decoded)  # SM_USER_ARGS


def test_sm_hp_variables_are_the_toolkits_to_env_vars_for_every_type(toolkit, tmp_path):
    job = local_job(make_spec(hyperparameters=HYPERPARAMETERS), tmp_path)
    hosts = contract.host_names(1)
    layout = HostLayout(tmp_path / hosts[0])
    env = contract.environment(layout, job, hosts[0], hosts, job.host_hyperparameters(layout), num_gpus=0, num_cpus=2)
    expected = toolkit.to_env_vars({f"hp_{k}": v for k, v in _decoded(HYPERPARAMETERS).items()})
    assert {k: env[k] for k in expected} == expected


def test_the_command_line_is_what_the_toolkits_shell_makes_of_it(to_cmd_args, tmp_path):
    decoded = _decoded(HYPERPARAMETERS)
    expected = _through_the_shell(to_cmd_args(decoded), tmp_path)
    assert contract.command_line_args(decoded) == expected
    # the cases scripts depend on: a bare flag (the AWS GPT-2 Trainer notebook's do_train), Python's words for
    # bools and lists, an empty value for None, a dict as k=v pairs, split words, shell quotes removed
    assert expected[:2] == ["--do_train", "--epochs"]
    for piece in (["--fp16", "True"], ["--resume", "False"], ["--seed", "--title"], ["--layers", "[64,", "32]"],
                  ["--mp", "ddp=True,partitions=2"], ["--names", "[a b,", "c]"], ["--quoted", "kept together"],
                  ["--title", "two", "words"]):
        assert any(expected[i:i + len(piece)] == piece for i in range(len(expected))), piece


@pytest.mark.parametrize("value, named", [("a; touch pwned", ";"), ("$HOME", "$"), ("x > out", ">"),
                                          ("`id`", "`"), ("keep #comment", "#")])
def test_values_the_shell_would_act_on_are_refused_by_name(value, named, tmp_path):
    with pytest.raises(ValueError, match=rf"hyperparameter note=.*/bin/sh, which would act on '{'[$]' if named == '$' else '[' + named + ']'}'"):
        contract.command_line_args({"note": value})


def test_a_local_job_is_refused_before_launch(tmp_path):
    spec = make_spec(hyperparameters={"note": "a | b"}, output_path=str(tmp_path / "out"))
    with pytest.raises(ValueError, match=r"hyperparameter note='a \| b'.*/bin/sh"):
        submit(spec, wait=False)
    record = attach(spec.job_name).describe()  # recorded as a client error; no supervisor was started
    assert record["TrainingJobStatus"] == "Failed" and record["FailureReason"].startswith("ClientError: hyperparameter")
    assert registry.supervisor(spec.job_name) is None


def test_an_unclosed_quote_is_refused_as_the_shell_fails_on_it(tmp_path):
    assert subprocess.run(["/bin/sh", "-c", "true --name it's"], capture_output=True).returncode != 0
    with pytest.raises(ValueError, match="hyperparameter name=\"it's\": .*unclosed quote"):
        contract.command_line_args({"name": "it's"})


# ------------------------------------------------------------------ requirements.txt
def build_wheel(root: Path, out: Path, version: str = "1.0", value: int = 42) -> Path:
    """sagelaunch-tinypkg `version` (VALUE = `value`) built into a wheel in `out`; its dependency, six, is already
    in the job's Python."""
    shutil.rmtree(root / "src", ignore_errors=True)
    (root / "src" / "sagelaunch_tinypkg").mkdir(parents=True)
    (root / "src" / "sagelaunch_tinypkg" / "__init__.py").write_text(f"VALUE = {value}\n")
    (root / "src" / "pyproject.toml").write_text(textwrap.dedent(f"""\
        [build-system]
        requires = ["setuptools"]
        build-backend = "setuptools.build_meta"
        [project]
        name = "sagelaunch-tinypkg"
        version = "{version}"
        dependencies = ["six"]
        """))
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-build-isolation", "--no-deps", "-q", "-w",
                    str(out), str(root / "src")], check=True, capture_output=True, timeout=600)
    return out


@pytest.fixture(scope="module")
def wheels(tmp_path_factory) -> Path:
    """A tiny package built into a wheel here."""
    root = tmp_path_factory.mktemp("tinypkg")
    return build_wheel(root, root / "wheels")


def _source_dir(folder: Path, wheels: Path, requirement: str = "sagelaunch-tinypkg==1.0") -> Path:
    folder.mkdir()
    shutil.copytree(wheels, folder / "wheels")
    # offline: the index is off and the wheels folder is found relative to the code folder, as pip in the container
    (folder / "requirements.txt").write_text(f"--no-index\n--find-links wheels\n{requirement}\n")
    return folder


def test_requirements_install_into_a_cache_folder_reused_for_the_same_file(wheels, tmp_path):
    code = _source_dir(tmp_path / "code", wheels)
    paths, notes = requirements.install(code, sys.executable, tmp_path / "home")
    assert notes[0].startswith("requirements.txt: installed into ")
    installed = sorted(p.name for p in Path(paths[0]).iterdir())
    # only what the job's Python lacks: six is already there, so it is not installed again
    assert [n for n in installed if not n.startswith("_")] == ["sagelaunch_tinypkg", "sagelaunch_tinypkg-1.0.dist-info"]
    probe = subprocess.run([sys.executable, "-c", "import sagelaunch_tinypkg, six; print(sagelaunch_tinypkg.VALUE)"],
                           env={"PYTHONPATH": paths[0], **RUN_ENV}, capture_output=True, text=True, timeout=120)
    assert probe.stdout.strip() == "42", probe.stderr
    again, notes = requirements.install(code, sys.executable, tmp_path / "home")
    assert again == paths and notes[0].startswith("requirements.txt: reusing the packages installed in ")
    assert requirements.install(tmp_path, sys.executable, tmp_path / "home") == ([], [])  # no file, nothing to do
    wheel = next((code / "wheels").iterdir())
    wheel.write_bytes(wheel.read_bytes() + b"\0")  # a rebuilt wheel, the same requirements.txt: not the old install
    assert requirements.cache_folder(code / "requirements.txt", sys.executable, tmp_path / "home") != \
        Path(paths[0]).parents[2]


def _value(paths: list[str]) -> str:
    probe = subprocess.run([sys.executable, "-c", "import sagelaunch_tinypkg; print(sagelaunch_tinypkg.VALUE)"],
                           env={"PYTHONPATH": paths[0], **RUN_ENV}, capture_output=True, text=True, timeout=120)
    return probe.stdout.strip()


@pytest.mark.slow
def test_the_cache_follows_what_pip_would_install_not_the_files_text(wheels, tmp_path):
    """A newer release in a --find-links folder outside the code, or a wheel rebuilt at the same path, reaches the
    next job although requirements.txt is unchanged (issue 32)."""
    shared = tmp_path / "shared-wheels"
    shutil.copytree(wheels, shared)
    code, home = tmp_path / "code", tmp_path / "home"
    code.mkdir()
    (code / "requirements.txt").write_text(f"--no-index\n--find-links {shared}\nsagelaunch-tinypkg>=1.0\n")
    first, _ = requirements.install(code, sys.executable, home)
    assert _value(first) == "42"
    build_wheel(tmp_path / "v11", shared, version="1.1", value=43)  # a newer release appears
    second, notes = requirements.install(code, sys.executable, home)
    assert second != first and notes[0].startswith("requirements.txt: installed into ") and _value(second) == "43"
    build_wheel(tmp_path / "v11-again", shared, version="1.1", value=44)  # 1.1 rebuilt under the same name
    third, _ = requirements.install(code, sys.executable, home)
    assert third != second and _value(third) == "44"
    again, notes = requirements.install(code, sys.executable, home)  # nothing changed: the install is reused
    assert again == third and notes[0].startswith("requirements.txt: reusing the packages installed in ")


def test_a_requirement_that_cannot_be_installed_is_named(wheels, tmp_path):
    code = _source_dir(tmp_path / "code", wheels, requirement="sagelaunch-no-such-package>=9")
    with pytest.raises(ValueError, match="requirements.txt of source_dir: pip could not install "
                                         "'sagelaunch-no-such-package>=9'.*fix or remove that line"):
        requirements.install(code, sys.executable, tmp_path / "home")
    cache = tmp_path / "home" / "requirements"
    assert not cache.exists() or not list(cache.iterdir())  # nothing half-installed is left to reuse


@pytest.mark.slow
def test_a_local_job_gets_its_requirements_and_the_toolkits_arguments(wheels, tmp_path):
    code = _source_dir(tmp_path / "code", wheels)
    (code / "train.py").write_text(textwrap.dedent("""\
        import argparse, json, os, sagelaunch_tinypkg
        parser = argparse.ArgumentParser()
        parser.add_argument("--do_train", action="store_true")   # as transformers' Trainer scripts declare it
        parser.add_argument("--epochs", type=int)
        parser.add_argument("--title", nargs="+")
        args = parser.parse_args()
        report = {"args": vars(args), "value": sagelaunch_tinypkg.VALUE, "user_args": os.environ["SM_USER_ARGS"]}
        open(os.path.join(os.environ["SM_OUTPUT_DATA_DIR"], "report.json"), "w").write(json.dumps(report))
        """))
    spec = make_spec("train.py", source_dir=str(code), output_path=str(tmp_path / "out"),
                     hyperparameters={"do_train": "", "epochs": 2, "title": "two words"})
    job = submit(spec, wait=True, logs=False)
    record = job.describe()
    assert record["TrainingJobStatus"] == "Completed", record.get("FailureReason")
    report = json.loads((Path(record["JobDir"]) / "algo-1" / "output" / "data" / "report.json").read_text())
    assert report["args"] == {"do_train": True, "epochs": 2, "title": ["two", "words"]}
    assert report["value"] == 42
    assert json.loads(report["user_args"]) == ["--do_train", "", "--epochs", "2", "--title", "two words"]
    assert "requirements.txt: installed into" in (Path(record["JobDir"]) / "logs" / "job.log").read_text()


def test_a_value_the_toolkit_splits_is_split_as_on_sagemaker_with_a_warning():
    import pytest

    from sagelaunch.launcher.local.contract import HyperparameterSplitWarning, command_line_args

    with pytest.warns(HyperparameterSplitWarning, match="3 separate arguments"):
        assert command_line_args({"note": "a b c"}) == ["--note", "a", "b", "c"]
    assert command_line_args({"note": "'a b c'"}) == ["--note", "a b c"]  # quoted inside the value: one argument
