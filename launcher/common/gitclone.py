"""`git_config=`: clone the repository the SageMaker SDK v2 way and find the code in it.

The same keys and URL forms as v2 (`repo` https:// or ssh:// / git@; `branch`, `commit`; `token`, or
`username` + `password`; `2FA_enabled`); entry_point, source_dir and dependencies are then paths inside
the clone. Credentials never show in an error: the URL is printed without them.

A token or password never reaches the disk: git gets it from an askpass helper reading this process's
environment (not from the URL, which git would store in the clone's .git/config), with git's credential
helpers switched off for the command. The clone is removed when cloning fails, and by fit() when it ends;
the code's paths must stay inside it (a committed symlink to the user's home is refused).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass

from sagelaunch.jobspec.errors import SagelaunchError

KEYS = ("repo", "branch", "commit", "2FA_enabled", "username", "password", "token")
_CREDENTIALS = re.compile(r"(https://)[^@/]+@")


@dataclass(frozen=True)
class ClonedCode:
    entry_point: str
    source_dir: str | None
    dependencies: tuple[str, ...]
    folder: str  # the clone, removed by the caller when done


def check_git_config(config: dict) -> dict:
    """The single-field check of git_config (no network)."""
    unknown = sorted(set(config) - set(KEYS))
    if unknown:
        raise SagelaunchError(f"git_config has unknown key(s) {unknown}; allowed: {', '.join(KEYS)}",
                              field="git_config", value=unknown, allowed=", ".join(KEYS), fix="drop or rename them")
    if "repo" not in config:
        example = "{'repo': 'https://github.com/org/project.git', 'branch': 'main'}"
        raise SagelaunchError(f"git_config needs 'repo', e.g. {example}", field="git_config.repo", value=None,
                              allowed="a Git URL", fix=f"e.g. {example}")
    for key, value in config.items():
        wanted = bool if key == "2FA_enabled" else str
        if not isinstance(value, wanted) or (isinstance(value, str) and (not value or "\x00" in value)):
            kind = "bool" if wanted is bool else "non-empty string"
            raise SagelaunchError(f"git_config[{key!r}]={'<hidden>' if key in ('password', 'token') else repr(value)} "
                                  f"must be a {kind}", field=f"git_config.{key}", value=value, allowed=f"a {kind}",
                                  fix=f"give a {kind}")
    repo = config["repo"]
    if not (repo.startswith("https://") or repo.startswith("ssh://") or repo.startswith("git@")):
        allowed, fix = "https://…, ssh://… or git@host:path", "for a local folder use source_dir instead"
        raise SagelaunchError(f"git_config['repo']={_shown_url(repo)!r} is not a Git URL the SageMaker SDK clones; "
                              f"allowed: {allowed} — {fix}", field="git_config.repo", value=_shown_url(repo),
                              allowed=allowed, fix=fix)
    if repo.startswith("https://") and _CREDENTIALS.match(repo):
        fix = "pass them as git_config['token'] (or 'username' and 'password') instead"
        raise SagelaunchError(f"git_config['repo'] holds credentials in the URL; {fix}", field="git_config.repo",
                              value=_shown_url(repo), allowed="a URL without credentials", fix=fix)
    return config


def _shown_url(url: str) -> str:
    return _CREDENTIALS.sub(r"\1<credentials>@", url)


def _credentials(config: dict) -> tuple[str, str] | None:
    """(username, password) git answers with for an https repository, as v2 puts them into the URL."""
    repo = config["repo"]
    if not repo.startswith("https://"):
        return None  # ssh: the user's keys authenticate
    codecommit = repo.startswith("https://git-codecommit")
    if "token" in config and not codecommit:
        return config["token"], ""
    if "username" in config and "password" in config and (codecommit or not config.get("2FA_enabled")):
        return config["username"], config["password"]
    return None


# git runs it for "Username for …" and "Password for …"; it holds no secret, the values are in git's environment
_ASKPASS = """#!/bin/sh
case "$1" in
  Username*) printf '%s\\n' "$SAGELAUNCH_GIT_USERNAME" ;;
  *) printf '%s\\n' "$SAGELAUNCH_GIT_PASSWORD" ;;
esac
"""


def _git(args: list[str], cwd: str | None, what: str, url: str, askpass: dict[str, str] | None = None) -> None:
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", **(askpass or {})}  # never wait for a password prompt
    # with our credentials, no credential helper: none may store them (`store` writes ~/.git-credentials);
    # without, the user's own helper authenticates as it always does
    no_helper = ["-c", "credential.helper="] if askpass else []
    try:
        proc = subprocess.run(["git", *no_helper, *args], cwd=cwd, env=env, capture_output=True, text=True,
                              stdin=subprocess.DEVNULL)
    except FileNotFoundError:
        raise SagelaunchError("git_config needs the `git` command, which is not installed here; install git or pass "
                              "the code as source_dir", field="git_config", value=None, allowed="with git installed",
                              fix="install git or pass the code as source_dir") from None
    if proc.returncode != 0:
        output = (proc.stderr or proc.stdout).strip()
        detail = _shown_url(output.splitlines()[-1] if output else f"exit status {proc.returncode}")
        raise SagelaunchError(f"git_config: {what} failed for {_shown_url(url)}: {detail}", field="git_config",
                              value=_shown_url(url), allowed="a repository, branch and commit git can fetch",
                              fix="check the repo URL, branch, commit and credentials")


def _askpass_environment(config: dict, workdir: str) -> dict[str, str] | None:
    credentials = _credentials(config)
    if credentials is None:
        return None
    helper = os.path.join(workdir, "askpass.sh")
    with open(os.open(helper, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o700), "w") as script:
        script.write(_ASKPASS)
    return {"GIT_ASKPASS": helper, "SAGELAUNCH_GIT_USERNAME": credentials[0],
            "SAGELAUNCH_GIT_PASSWORD": credentials[1]}


def _inside_clone(folder: str, path: str, field: str, value: str, where: str) -> str:
    """`path` when it resolves inside the clone; a committed symlink out of it would ship the user's files.
    An absolute `value` is a local path the user gave (v2 joins it to the clone, which keeps it as it is)."""
    if os.path.isabs(value):
        return path
    real, root = os.path.realpath(path), os.path.realpath(folder)
    if real != root and not real.startswith(root + os.sep):
        raise SagelaunchError(f"{field}={value!r} of {where} is a symlink to {real!r}, outside the repository; only "
                              "the repository's own files ship — commit the files instead of a link", field=field,
                              value=value, allowed="files inside the repository",
                              fix="commit the files instead of a link")
    return path


def clone(config: dict, entry_point: str, source_dir: str | None, dependencies: list[str] | tuple[str, ...]) -> ClonedCode:
    """Clone, check out branch/commit, and return the code's paths inside the clone (v2's git_clone_repo).

    On any failure (or an interrupt) nothing is left: the clone is removed before the error propagates."""
    check_git_config(config)
    folder = tempfile.mkdtemp(prefix="sagelaunch-git-")
    try:
        return _clone_into(folder, config, entry_point, source_dir, dependencies)
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise


def _clone_into(folder: str, config: dict, entry_point: str, source_dir: str | None,
                dependencies: list[str] | tuple[str, ...]) -> ClonedCode:
    helper_dir = tempfile.mkdtemp(prefix="sagelaunch-askpass-")
    try:
        _git(["clone", "--quiet", config["repo"], folder], None, "git clone", config["repo"],
             _askpass_environment(config, helper_dir))
    finally:
        shutil.rmtree(helper_dir, ignore_errors=True)
    for key in ("branch", "commit"):
        if key in config:
            _git(["checkout", "--quiet", config[key]], folder, f"git checkout {config[key]}", config["repo"])
    where = f"the repository {_shown_url(config['repo'])}"
    if source_dir:
        source = _inside_clone(folder, os.path.join(folder, source_dir), "source_dir", source_dir, where)
        if not os.path.isdir(source):
            raise SagelaunchError(f"source_dir={source_dir!r} is not a folder of {where}; give a path relative to its "
                                  "root", field="source_dir", value=source_dir, allowed=f"a folder of {where}",
                                  fix="give a path relative to its root")
        if not os.path.isfile(os.path.join(source, entry_point)):
            raise SagelaunchError(f"entry_point={entry_point!r} is not a file in source_dir={source_dir!r} of {where}",
                                  field="entry_point", value=entry_point, allowed=f"a file in source_dir={source_dir!r}",
                                  fix="give a path relative to source_dir")
        _inside_clone(folder, os.path.join(source, entry_point), "entry_point", entry_point, where)
        entry, source_dir = entry_point, source
    else:
        entry = _inside_clone(folder, os.path.join(folder, entry_point), "entry_point", entry_point, where)
        if not os.path.isfile(entry):
            raise SagelaunchError(f"entry_point={entry_point!r} is not a file of {where}; give a path relative to its "
                                  "root", field="entry_point", value=entry_point, allowed=f"a file of {where}",
                                  fix="give a path relative to its root")
    found = []
    for dependency in dependencies:
        path = os.path.join(folder, dependency)
        if not os.path.lexists(path):
            raise SagelaunchError(f"dependencies: {dependency!r} is not in {where}; give paths relative to its root",
                                  field="dependencies", value=dependency, allowed=f"paths in {where}",
                                  fix="give paths relative to its root")
        found.append(_inside_clone(folder, path, "dependencies", dependency, where))
    return ClonedCode(entry, source_dir, tuple(found), folder)
