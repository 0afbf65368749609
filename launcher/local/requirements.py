"""A source_dir's requirements.txt, installed for a local job as SageMaker's training toolkit installs it.

The toolkit runs `pip install -r requirements.txt` in the code folder before the script starts. Locally the job's
Python is the user's own environment, which a job must not change: the requirements go into a cache folder per
(what pip would install now, Python) under $SAGELAUNCH_HOME/requirements/, and that folder's site-packages goes on
the job's PYTHONPATH. "What pip would install" is pip's own resolution (`pip install --dry-run --report`): each
package's name, version, source and the hash of a local archive (a folder's files), so a rebuilt wheel at the same
path, or a newer release in a --find-links folder or on the index, is a new install — never the text of the file. The folder is a venv whose site-packages also sees the
job Python's own packages (a .pth file), so pip installs only what is missing or pinned differently — never a
second torch. pip runs in the code folder, so `./wheels` or `--find-links wheels` lines resolve as in the container.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path
from urllib.parse import unquote, urlparse

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


def _tree_digest(folder: Path) -> str:
    digest = hashlib.sha256()
    for file in sorted(folder.rglob("*")):
        if file.is_file() and "__pycache__" not in file.parts:
            digest.update(str(file.relative_to(folder)).encode() + b"\0" + file.read_bytes())
    return digest.hexdigest()


def _where(url: str, code_dir: Path) -> str:
    """A source as the key sees it: a file in the code folder by its relative path (each job has its own copy of
    the code), anything else as it is."""
    if url.startswith("file://"):
        path = Path(unquote(urlparse(url).path))
        if path.is_relative_to(code_dir):
            return "code:" + path.relative_to(code_dir).as_posix()
    return url


def resolution(requirements: Path, python: str) -> list[list[str]]:
    """What `pip install -r requirements.txt` would install into the job's Python now (what it already has is left
    out, as the install leaves it): [name, version, source, hash] each; a local folder's hash is its files'."""
    code_dir = requirements.parent.resolve()
    # not --quiet: pip's "Processing ./pkg" lines are how a failure is traced back to its requirements line
    with tempfile.TemporaryDirectory() as scratch:
        report = Path(scratch, "report.json")
        result = subprocess.run([python, "-m", "pip", "install", "--dry-run", "--disable-pip-version-check",
                                 "--no-input", "--report", str(report), "-r", str(requirements)],
                                cwd=code_dir, capture_output=True, text=True, timeout=3600)
        if result.returncode != 0:
            raise _failure(requirements, result.stdout + result.stderr)
        planned = json.loads(report.read_text()).get("install", [])
    found = []
    for item in planned:
        info = item.get("download_info", {})
        url = info.get("url", "")
        archive = info.get("archive_info", {})
        digest = archive.get("hash") or json.dumps(archive.get("hashes", {}), sort_keys=True)
        if "dir_info" in info and url.startswith("file://"):
            digest = _tree_digest(Path(unquote(urlparse(url).path)))
        found.append([item["metadata"]["name"], item["metadata"]["version"], _where(url, code_dir), digest])
    return sorted(found)


def cache_folder(requirements: Path, python: str, root: Path) -> Path:
    """One folder per (requirements text, what pip resolves it to now, job Python): the same install is reused only
    while pip would install exactly the same files."""
    key = hashlib.sha256(requirements.read_bytes() + b"\0" + json.dumps(resolution(requirements, python)).encode()
                         + b"\0" + str(Path(python).resolve()).encode()).hexdigest()
    return root / "requirements" / key[:16]


# a build step failed (metadata-generation-failed, a backend or its hook): pip names the package by what it fetched
# (a file:// URL), the requirements line only where it started on it: "Collecting <line>" or "Processing <path>"
# pip ≥ 24 reports a build backend it cannot load as a failed build; pip 23 (Python 3.11's bundled pip) crashes
# with "ERROR: Exception" and the hook's BackendUnavailable traceback
_BUILD_FAILED = re.compile(r"error: subprocess-exited-with-error|error: metadata-generation-failed|"
                           r"ERROR: Failed to build |pyproject_hooks\._impl\.BackendUnavailable")
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
