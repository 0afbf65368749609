"""`git_config=`: clone the repository the SageMaker SDK v2 way and find the code in it.

The same keys and URL forms as v2 (`repo` https:// or ssh:// / git@; `branch`, `commit`; `token`, or
`username` + `password`; `2FA_enabled`); entry_point, source_dir and dependencies are then paths inside
the clone. Credentials never show in an error: the URL is printed without them.
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
from dataclasses import dataclass
from urllib.parse import quote

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
        raise ValueError(f"git_config has unknown key(s) {unknown}; allowed: {', '.join(KEYS)}")
    if "repo" not in config:
        raise ValueError("git_config needs 'repo', e.g. {'repo': 'https://github.com/org/project.git', 'branch': 'main'}")
    for key, value in config.items():
        wanted = bool if key == "2FA_enabled" else str
        if not isinstance(value, wanted) or (wanted is str and (not value or "\x00" in value)):
            raise ValueError(f"git_config[{key!r}]={'<hidden>' if key in ('password', 'token') else repr(value)} "
                             f"must be a {'bool' if wanted is bool else 'non-empty string'}")
    repo = config["repo"]
    if not (repo.startswith("https://") or repo.startswith("ssh://") or repo.startswith("git@")):
        raise ValueError(f"git_config['repo']={_shown_url(repo)!r} is not a Git URL the SageMaker SDK clones; "
                         "allowed: https://…, ssh://… or git@host:path — for a local folder use source_dir instead")
    if repo.startswith("https://") and _CREDENTIALS.match(repo):
        raise ValueError("git_config['repo'] holds credentials in the URL; pass them as git_config['token'] "
                         "(or 'username' and 'password') instead")
    return config


def _shown_url(url: str) -> str:
    return _CREDENTIALS.sub(r"\1<credentials>@", url)


def _clone_url(config: dict) -> str:
    repo = config["repo"]
    if not repo.startswith("https://"):
        return repo  # ssh: the user's keys authenticate
    codecommit = repo.startswith("https://git-codecommit")
    if "token" in config and not codecommit:
        return repo.replace("https://", f"https://{quote(config['token'], safe='')}@", 1)
    if "username" in config and "password" in config and (codecommit or not config.get("2FA_enabled")):
        user, password = quote(config["username"], safe=""), quote(config["password"], safe="")
        return repo.replace("https://", f"https://{user}:{password}@", 1)
    return repo


def _git(args: list[str], cwd: str | None, what: str, url: str) -> None:
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0"}  # never wait for a password prompt
    try:
        proc = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True,
                              stdin=subprocess.DEVNULL)
    except FileNotFoundError:
        raise ValueError("git_config needs the `git` command, which is not installed here; install git or pass "
                         "the code as source_dir") from None
    if proc.returncode != 0:
        output = (proc.stderr or proc.stdout).strip()
        detail = _shown_url(output.splitlines()[-1] if output else f"exit status {proc.returncode}")
        raise ValueError(f"git_config: {what} failed for {_shown_url(url)}: {detail}")


def clone(config: dict, entry_point: str, source_dir: str | None, dependencies: list[str] | tuple[str, ...]) -> ClonedCode:
    """Clone, check out branch/commit, and return the code's paths inside the clone (v2's git_clone_repo)."""
    check_git_config(config)
    folder = tempfile.mkdtemp(prefix="sagelaunch-git-")
    _git(["clone", "--quiet", _clone_url(config), folder], None, "git clone", config["repo"])
    for key in ("branch", "commit"):
        if key in config:
            _git(["checkout", "--quiet", config[key]], folder, f"git checkout {config[key]}", config["repo"])
    where = f"the repository {_shown_url(config['repo'])}"
    if source_dir:
        source = os.path.join(folder, source_dir)
        if not os.path.isdir(source):
            raise ValueError(f"source_dir={source_dir!r} is not a folder of {where}; give a path relative to its root")
        if not os.path.isfile(os.path.join(source, entry_point)):
            raise ValueError(f"entry_point={entry_point!r} is not a file in source_dir={source_dir!r} of {where}")
        entry, source_dir = entry_point, source
    else:
        entry = os.path.join(folder, entry_point)
        if not os.path.isfile(entry):
            raise ValueError(f"entry_point={entry_point!r} is not a file of {where}; give a path relative to its root")
    found = []
    for dependency in dependencies:
        path = os.path.join(folder, dependency)
        if not os.path.exists(path):
            raise ValueError(f"dependencies: {dependency!r} is not in {where}; give paths relative to its root")
        found.append(path)
    return ClonedCode(entry, source_dir, tuple(found), folder)
