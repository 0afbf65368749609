"""The installed distribution holds one top-level name, `sagelaunch`: the design's folders are installed under it
(nothing generic such as `profiler` or `launcher` lands in a user's site-packages), scripts/ and tests/ stay out, and
the job-side stand-ins travel with it."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LIBRARIES = ("jobspec", "estimators", "profiler_config", "launcher", "profiler", "modelparallel")


@pytest.fixture(scope="module")
def wheel_names(tmp_path_factory) -> set[str]:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run([sys.executable, "-m", "pip", "wheel", str(ROOT), "--no-deps", "--no-build-isolation", "-q",
                    "-w", str(out)], check=True, capture_output=True, text=True, timeout=300)
    (wheel,) = out.glob("sagelaunch-*.whl")
    return set(zipfile.ZipFile(wheel).namelist())


def test_the_wheel_installs_only_sagelaunch(wheel_names):
    tops = {name.split("/")[0] for name in wheel_names if not name.split("/")[0].endswith(".dist-info")}
    assert tops == {"sagelaunch"}


def test_every_library_module_and_stand_in_is_inside_it(wheel_names):
    for folder in (*LIBRARIES, "job_modules"):
        sources = {f"sagelaunch/{p.relative_to(ROOT).as_posix()}" for p in (ROOT / folder).rglob("*.py")}
        assert sources and sources <= wheel_names, sorted(sources - wheel_names)[:5]
    assert not any(name.startswith(("sagelaunch/scripts/", "sagelaunch/tests/")) for name in wheel_names)
