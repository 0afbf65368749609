"""A requirements.txt line whose package pip cannot even describe (pip's metadata-generation-failed, or a build
backend that cannot be loaded) is named by its requirements line, as a missing package is: the real pip, real broken
packages."""

from __future__ import annotations

import sys
import textwrap

import pytest

from sagelaunch.jobspec.errors import SagelaunchError
from sagelaunch.launcher.local import requirements

# an in-tree build backend: its build requirements are fine, its metadata step fails
BACKEND = textwrap.dedent("""\
    def get_requires_for_build_wheel(config_settings=None):
        return []

    def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
        raise RuntimeError("this package cannot describe itself")
    """)
BROKEN_SETUP = 'raise RuntimeError("setup.py cannot run")\n'


def _code(tmp_path, package: dict[str, str]):
    code = tmp_path / "code"
    (code / "brokenpkg").mkdir(parents=True)
    for name, text in package.items():
        (code / "brokenpkg" / name).write_text(text)
    (code / "requirements.txt").write_text("--no-index\n./brokenpkg\n")
    return code


@pytest.mark.parametrize("package", [
    {"pyproject.toml": '[build-system]\nrequires = []\nbuild-backend = "backend"\nbackend-path = ["."]\n',
     "backend.py": BACKEND},
    # setuptools not among the build requirements: pip cannot load the backend (offline: it cannot fetch it either)
    {"pyproject.toml": '[build-system]\nrequires = []\nbuild-backend = "setuptools.build_meta:__legacy__"\n',
     "setup.py": BROKEN_SETUP},
], ids=["metadata-generation-failed", "build-backend-unavailable"])
def test_a_package_pip_cannot_build_is_named(tmp_path, package):
    with pytest.raises(SagelaunchError, match=r"pip could not install './brokenpkg'.*fix or remove that line") as err:
        requirements.install(_code(tmp_path, package), sys.executable, tmp_path / "home")
    assert err.value.value == "./brokenpkg"


def test_pips_own_words_name_the_requirement():
    collected = ("Collecting good==1.0 (from -r requirements.txt (line 1))\n"
                 "Collecting broken==2.0 (from -r requirements.txt (line 2))\n"
                 "  error: subprocess-exited-with-error\n")
    assert requirements.failed_requirement(collected) == "broken==2.0"
    assert requirements.failed_requirement("ERROR: No matching distribution found for nope>=9") == "nope>=9"
    assert requirements.failed_requirement("something else") is None
    # pip 23 (Python 3.11's bundled pip) crashes on a backend it cannot load instead of reporting a failed build
    pip23 = ("Processing ./brokenpkg\n  Getting requirements to build wheel: started\nERROR: Exception:\n"
             "Traceback (most recent call last):\npip._vendor.pyproject_hooks._impl.BackendUnavailable: Traceback\n"
             "ModuleNotFoundError: No module named 'setuptools'\n")
    assert requirements.failed_requirement(pip23) == "./brokenpkg"
