"""Every name that becomes a file or folder name — a job's folder, an endpoint's record, a local endpoint, the profile
browser's job — is checked in one place (jobspec.names.path_name), before any file is touched (issue 32):
`sagelaunch endpoints stop ../../x` or an absolute path is refused naming the field, the value, what is allowed and a
fix, and the file it would have reached is still there."""

from __future__ import annotations

from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from sagelaunch import cli_endpoints
from sagelaunch.jobspec.errors import SagelaunchError
from sagelaunch.jobspec.names import NAME_ALLOWED
from sagelaunch.launcher.local import registry
from sagelaunch.launcher.local.serving import endpoint_registry
from sagelaunch.launcher.local.serving.endpoint import LocalEndpoint
from sagelaunch.profiler.ui.sources import validate_job_name

ESCAPING = ["../../victim", "../victim", "/tmp/victim", "a/b", "..", ".", "", "victim.json\x00", "name with space"]


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    home = tmp_path / "deep" / "home"
    home.mkdir(parents=True)
    monkeypatch.setenv("SAGELAUNCH_HOME", str(home))
    return home


def test_endpoints_stop_refuses_a_relative_or_absolute_path_and_deletes_nothing(home, tmp_path):
    victims = [home.parent / "victim.json", tmp_path / "abs-victim.json"]
    for victim in victims:
        victim.write_text('{"name": "not an endpoint"}')
    app = typer.Typer()
    cli_endpoints.register(app)
    for name in ("../../victim", str(tmp_path / "abs-victim")):
        result = CliRunner().invoke(app, ["endpoints", "stop", name])
        assert result.exit_code != 0
        assert f"endpoint_name={name!r} is not a valid SageMaker name" in result.output, result.output
        assert "Traceback" not in result.output
    assert all(victim.read_text() == '{"name": "not an endpoint"}' for victim in victims)


@pytest.mark.parametrize("name", ESCAPING)
@pytest.mark.parametrize("where, field", [
    (registry.job_dir, "job_name"),
    (endpoint_registry.find, "endpoint_name"),
    (endpoint_registry.stop, "endpoint_name"),
    (lambda name: LocalEndpoint("unused-model", name), "endpoint_name"),
    (validate_job_name, "job_name"),
])
def test_every_name_that_becomes_a_path_is_checked_in_one_place(home, where, field, name):
    with pytest.raises(SagelaunchError) as refused:
        where(name)
    error = refused.value
    assert (error.field, error.value, error.allowed) == (field, name, NAME_ALLOWED)
    assert error.fix and str(error).startswith(f"{field}={name!r} ")
    assert not (home / "endpoints").exists() and not (home / "jobs").exists()
