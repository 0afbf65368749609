"""Text that cannot travel and text the toolkit's shell changes (issue 32): a lone surrogate or a NUL in an environment
value or a hyperparameter is refused by `validate` naming the field, and by fit before any record or folder exists;
a hyperparameter value /bin/sh would expand on SageMaker (a filename pattern, ~, $) is valid, with a warning saying
so. Through the real command line and a real local submit."""

from __future__ import annotations

import os
import textwrap

import pytest

from sagelaunch.jobspec.fields import ShellExpansionWarning, shell_expansion
from tests.foundation.test_cli_validate import run_cli

JOB = """
framework: pytorch
entry_point: train.py
source_dir: code
role: arn:aws:iam::123456789012:role/SageMakerRole
region: us-west-2
framework_version: "2.0.0"
instance_type: ml.m5.xlarge
"""


def validate(tmp_path, extra: str):
    (tmp_path / "code").mkdir(exist_ok=True)
    (tmp_path / "code" / "train.py").write_text("print('train')\n")
    job = tmp_path / "job.yaml"
    job.write_text(textwrap.dedent(JOB) + extra)
    return run_cli("validate", str(job))


@pytest.mark.parametrize("extra, field", [
    ('environment: {DATA_DIR: "/data/\\udc80x"}', "environment.DATA_DIR"),
    ('hyperparameters: {name: "caf\\udce9"}', "hyperparameters.name"),
    ('hyperparameters: {layers: ["ok", {inner: "\\ud800"}]}', "hyperparameters.layers"),
    ('hyperparameters: {"k\\udc80": "1"}', "hyperparameters"),
    ('environment: {NUL: "a\\0b"}', "environment.NUL"),
    ('hyperparameters: {nul: "a\\0b"}', "hyperparameters.nul"),
])
def test_validate_refuses_text_that_cannot_travel_naming_the_field(tmp_path, extra, field):
    done = validate(tmp_path, extra)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert field.split(".")[-1] in done.stderr
    assert "lone surrogate" in done.stderr or "NUL character" in done.stderr, done.stderr


def test_fit_refuses_a_lone_surrogate_before_any_record_or_folder(tmp_path, monkeypatch):
    from sagelaunch.estimators import PyTorch

    home = tmp_path / "home"
    monkeypatch.setenv("SAGELAUNCH_HOME", str(home))
    (tmp_path / "train.py").write_text("print('train')\n")
    with pytest.raises(ValueError, match=r"environment\['DATA_DIR'\]=.* contains a lone surrogate \(\\udc80\)"):
        estimator = PyTorch(entry_point="train.py", source_dir=str(tmp_path), framework_version="2.0.0",
                            py_version="py310", instance_type="local", instance_count=1, role="r",
                            environment={"DATA_DIR": "/data/\udc80"})
        estimator.fit(wait=False)
    assert not home.exists() or not os.listdir(home)


@pytest.mark.parametrize("value, said", [("*.py", "'*.py'"), ("data[0-9].csv", "'data[0-9].csv'"),
                                         ("~/data", "'~/data'"), ("$HOME/x", "'$HOME/x'")])
def test_validate_warns_where_the_toolkits_shell_would_expand_a_value(tmp_path, value, said):
    done = validate(tmp_path, f"hyperparameters: {{pattern: {value!r}}}")
    assert done.returncode == 0, done.stderr
    assert f"  ! warning: hyperparameters['pattern']={value!r}: on SageMaker the training toolkit passes " \
           "hyperparameters to the script through /bin/sh, which expands" in done.stderr
    assert said in done.stderr and done.stdout.startswith("✓ job.yaml")


@pytest.mark.parametrize("value", ["'*.py'", '"~/data"', "plain", "[64, 32]", "a-b_c.d"])
def test_quoted_or_plain_values_get_no_warning(value):
    assert shell_expansion(value) is None


def test_the_warning_is_a_python_warning_for_fit():
    from sagelaunch.jobspec import fields

    with pytest.warns(ShellExpansionWarning, match=r"hyperparameters\['files'\]='\*\.py'"):
        fields.hyperparameters({"files": "*.py"})
