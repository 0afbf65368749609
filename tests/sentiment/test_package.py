"""`sagelaunch package` and package_model: the SageMaker PyTorch inference layout."""

from __future__ import annotations

import tarfile

import pytest
from typer.testing import CliRunner

from sagelaunch.cli import app
from sagelaunch.launcher.common.package import DEFAULT_REQUIREMENTS, archive_members, default_inference_script, package_model

MODEL_FILES = {"config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json"}


def test_archive_has_model_at_top_and_handler_in_code(sentiment_archive):
    members = set(archive_members(sentiment_archive))
    assert MODEL_FILES <= members
    assert {"code/inference.py", "code/requirements.txt"} <= members
    assert "training_args.bin" not in members  # a training pickle has no place in serving
    with tarfile.open(sentiment_archive) as tar:
        handler = tar.extractfile("code/inference.py").read()
        requirements = tar.extractfile("code/requirements.txt").read().decode()
    assert handler == default_inference_script().read_bytes()
    assert requirements == DEFAULT_REQUIREMENTS and "transformers" in requirements


def test_repacking_an_archive_replaces_its_code(sentiment_archive, tmp_path):
    handler = tmp_path / "my_handler.py"
    handler.write_text("def model_fn(model_dir):\n    return model_dir\n")
    requirements = tmp_path / "requirements.txt"
    requirements.write_text("orjson\n")
    out = package_model(sentiment_archive, tmp_path / "repacked.tar.gz", entry_point=handler, requirements=requirements)
    members = archive_members(out)
    assert members.count("code/inference.py") == 1 and MODEL_FILES <= set(members)
    with tarfile.open(out) as tar:
        assert b"return model_dir" in tar.extractfile("code/inference.py").read()
        assert tar.extractfile("code/requirements.txt").read() == b"orjson\n"


def test_bad_inputs_are_named(tmp_path):
    with pytest.raises(ValueError, match="neither a folder nor a .tar.gz"):
        package_model(tmp_path / "missing", tmp_path / "m.tar.gz")
    (tmp_path / "weights").mkdir()
    (tmp_path / "weights" / "model.pt").write_bytes(b"0")
    with pytest.raises(ValueError, match="no config.json"):
        package_model(tmp_path / "weights", tmp_path / "m.tar.gz")
    with pytest.raises(ValueError, match="entry_point='nope.py' does not exist"):
        package_model(tmp_path / "weights", tmp_path / "m.tar.gz", entry_point="nope.py")
    assert not (tmp_path / "m.tar.gz").exists() and not list(tmp_path.glob("*.partial"))


def test_cli_packages_a_model_folder(sentiment_model, tmp_path):
    out = tmp_path / "cli" / "model.tar.gz"
    result = CliRunner().invoke(app, ["package", str(sentiment_model.model_dir), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert "code/inference.py" in result.output and str(out) in result.output.replace("\n", "")
    assert MODEL_FILES | {"code/inference.py", "code/requirements.txt"} <= set(archive_members(out))
    failed = CliRunner().invoke(app, ["package", str(tmp_path / "nothing"), "-o", str(out)])
    assert failed.exit_code == 1 and "neither a folder nor" in failed.output
    assert "--output" in CliRunner().invoke(app, ["package", "--help"]).output
