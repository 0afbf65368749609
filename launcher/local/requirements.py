"""A source_dir's requirements.txt, installed for a local job as SageMaker's training toolkit installs it.

The toolkit runs `pip install -r requirements.txt` in the code folder before the script starts. Locally the job's
Python is the user's own environment, which a job must not change: the requirements go into a cache folder per
(requirements text, Python) under $SAGELAUNCH_HOME/requirements/, reused by every job with the same file, and
that folder's site-packages goes on the job's PYTHONPATH. The folder is a venv whose site-packages also sees the
job Python's own packages (a .pth file), so pip installs only what is missing or pinned differently — never a
second torch. pip runs in the code folder, so `./wheels` or `--find-links wheels` lines resolve as in the container.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from sagelaunch.jobspec.errors import SagelaunchError

REQUIREMENTS_FILE = "requirements.txt"
_SITE_PACKAGES = ("import sysconfig, sys; print(sysconfig.get_paths()['purelib']); "
                  "print(sysconfig.get_paths()['platlib'])")
# pip's own words for the requirement it could not satisfy or build
_FAILED_REQUIREMENT = re.compile(r"(?:No matching distribution found for|satisfies the requirement|"
                                 r"Failed to build|Could not install packages due to an OSError.*?|"
                                 r"Invalid requirement:|Could not open requirements file:)\s*'?([^'\s(]+)")


def _site_packages(python: str) -> list[str]:
    out = subprocess.run([python, "-c", _SITE_PACKAGES], capture_output=True, text=True, check=True, timeout=120)
    return list(dict.fromkeys(out.stdout.split()))


def _local_sources(requirements: Path) -> bytes:
    """The content of what the file names by path inside the code folder (wheels, --find-links folders, source
    trees): a rebuilt wheel with an unchanged requirements.txt must not reuse the old install."""
    code_dir = requirements.parent.resolve()
    digest = hashlib.sha256()
    for token in sorted(set(re.split(r"[\s=]+", requirements.read_text(errors="replace")))):
        path = (code_dir / token).resolve() if token else None
        if path is None or path == code_dir / REQUIREMENTS_FILE or not path.is_relative_to(code_dir) \
                or not path.exists():
            continue
        for file in sorted([path] if path.is_file() else path.rglob("*")):
            if file.is_file():
                digest.update(str(file.relative_to(code_dir)).encode() + b"\0" + file.read_bytes())
    return digest.digest()


def cache_folder(requirements: Path, python: str, root: Path) -> Path:
    """One folder per requirements text, the local files it names and the job Python: the same inputs reuse the
    same install."""
    key = hashlib.sha256(requirements.read_bytes() + b"\0" + _local_sources(requirements) + b"\0"
                         + str(Path(python).resolve()).encode()).hexdigest()
    return root / "requirements" / key[:16]


# a build step failed (metadata-generation-failed, a backend or its hook): pip names the package by what it fetched
# (a file:// URL), the requirements line only where it started on it: "Collecting <line>" or "Processing <path>"
_BUILD_FAILED = re.compile(r"error: subprocess-exited-with-error|error: metadata-generation-failed|"
                           r"ERROR: Failed to build ")
_STARTED_ON = re.compile(r"^(?:Collecting|Processing) (\S+)", re.MULTILINE)


def failed_requirement(output: str) -> str | None:
    """The requirement pip's output says it could not install (the line as the file has it), or None."""
    build_failed = _BUILD_FAILED.search(output)
    if build_failed:
        started = _STARTED_ON.findall(output[:build_failed.start()])
        if started:
            return started[-1]
    found = _FAILED_REQUIREMENT.search(output)
    return found.group(1) if found else None


def _failure(requirements: Path, output: str) -> SagelaunchError:
    failed = failed_requirement(output)
    named = f"{failed!r} " if failed else ""
    tail = "\n".join(output.strip().splitlines()[-6:])
    fix = f"fix or remove that line in {requirements}"
    return SagelaunchError(f"{REQUIREMENTS_FILE} of source_dir: pip could not install {named}(the toolkit installs "
                           f"this file before the script starts, so the job cannot run); {fix}. pip said:\n{tail}",
                           field=f"source_dir/{REQUIREMENTS_FILE}", value=failed,
                           allowed="requirements pip can install", fix=fix)


def install(code_dir: Path, python: str, root: Path) -> tuple[list[str], list[str]]:
    """(folders for the job's PYTHONPATH, log lines) for code_dir/requirements.txt; nothing when there is none."""
    requirements = code_dir / REQUIREMENTS_FILE
    if not requirements.is_file():
        return [], []
    folder = cache_folder(requirements, python, root)
    ready = folder / "sagelaunch-installed"
    if ready.is_file():
        return [ready.read_text()], [f"{REQUIREMENTS_FILE}: reusing the packages installed in {folder}"]
    folder.parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=f"{folder.name}-", dir=folder.parent))
    try:
        subprocess.run([python, "-m", "venv", "--without-pip", str(scratch)], check=True, capture_output=True,
                       timeout=300)
        venv_python = scratch / "bin" / "python"
        site = _site_packages(str(venv_python))[0]
        Path(site, "_sagelaunch_job_python.pth").write_text("\n".join(_site_packages(python)) + "\n")
        result = subprocess.run([python, "-m", "pip", "--python", str(venv_python), "install",
                                 "--disable-pip-version-check", "--no-input", "-r", str(requirements)],
                                cwd=code_dir, capture_output=True, text=True, timeout=3600)
        if result.returncode != 0:
            raise _failure(requirements, result.stdout + result.stderr)
        final_site = site.replace(str(scratch), str(folder), 1)
        Path(scratch, ready.name).write_text(final_site)
        try:
            os.rename(scratch, folder)  # atomic: a job with the same file at the same time keeps its own copy
        except OSError:
            if not ready.is_file():
                raise
            shutil.rmtree(scratch, ignore_errors=True)  # another job finished first: use its folder
    except BaseException:
        shutil.rmtree(scratch, ignore_errors=True)
        raise
    return [final_site], [f"{REQUIREMENTS_FILE}: installed into {folder} (reused by jobs with the same file)"]
