"""One packing rule (launcher.common.sourcedir) for everything that leaves the machine: a training job's code, its
dependencies (their roots included), deploy's repack and git_config clones. Credentials and VCS data never ship,
links out of a folder are not followed, what was left out is warned about once; clones never linger and
tokens never reach the disk. Checked on what was really uploaded to the moto server."""

from __future__ import annotations

import base64
import http.server
import io
import logging
import subprocess
import tarfile
import tempfile
import threading
from functools import partial
from pathlib import Path

import pytest

from sagelaunch.jobspec.net import free_port
from sagelaunch.launcher.common.package import package_model, repack_model
from sagelaunch.launcher.common.sourcedir import iter_source_files
from tests.local.conftest import make_spec

SECRET = "do-not-ship-7f3a"
# credential and VCS files at every depth of a source_dir (and of a dependency folder)
SECRETS = [".aws/credentials", "sub/.env", "a/b/c/id_rsa", "a/b/.netrc", "deploy/server.pem", ".git/config",
           "secrets/token.txt", "sub/deeper/.ssh/id_ed25519", "a/.git-credentials", "tls/client.key"]
CODE = {"train.py": "print('train')\n", "inference.py": "def model_fn(d):\n    return d\n", "lib/util.py": "X = 1\n"}
DEPENDENCY = {"util.py": "Y = 2\n", ".env": f"TOKEN={SECRET}\n", ".git/config": f"[remote] url = https://{SECRET}@h\n"}


def _write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


@pytest.fixture
def project(tmp_path) -> dict[str, Path]:
    outside = _write(tmp_path / "home", {"notes.txt": f"home {SECRET}\n", ".aws/credentials": f"key={SECRET}\n"})
    src = _write(tmp_path / "src", {**CODE, **{rel: f"{SECRET}\n" for rel in SECRETS}})
    (src / "passwd").symlink_to(outside / "notes.txt")  # a file outside: its content must not ship
    (src / "home").symlink_to(outside, target_is_directory=True)
    shared = _write(tmp_path / "deps" / "shared", DEPENDENCY)
    (shared / "escape.txt").symlink_to(outside / "notes.txt")
    return {"src": src, "shared": shared, "home": outside}


def _members(archive: bytes) -> dict[str, bytes]:
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        assert all(m.isfile() or m.isdir() for m in tar.getmembers()), "no links are stored"
        return {m.name: tar.extractfile(m).read() for m in tar.getmembers() if m.isfile()}


def _one_warning(caplog) -> str:
    records = [r for r in caplog.records if r.name == "sagelaunch.sourcedir"]
    assert len(records) == 1, [r.getMessage() for r in records]
    return records[0].getMessage()


def test_training_upload_ships_no_credentials_no_vcs_and_no_outside_content(project, bucket, caplog):
    from sagelaunch.launcher.sagemaker.training import upload_code

    s3, name = bucket
    spec = make_spec("train.py", source_dir=str(project["src"]), dependencies=(str(project["shared"]),))
    with caplog.at_level(logging.WARNING, logger="sagelaunch.sourcedir"):
        upload_code(spec, f"s3://{name}/code/sourcedir.tar.gz")
    members = _members(s3.get_object(Bucket=name, Key="code/sourcedir.tar.gz")["Body"].read())
    assert sorted(members) == ["inference.py", "lib/util.py", "shared/util.py", "train.py"]
    assert not any(SECRET.encode() in data for data in members.values())
    warning = _one_warning(caplog)
    for left_out in (".aws", "a/b/c/id_rsa", "deploy/server.pem", ".git", "sub/.env", "shared/.env",
                     "'passwd' → ", "outside source_dir", "'shared/escape.txt' → "):
        assert left_out in warning, (left_out, warning)


def test_deploy_repack_uploads_the_same_files_under_code(project, bucket, tmp_path, caplog):
    from sagelaunch.launcher.sagemaker.endpoint import repack_to_s3

    s3, name = bucket
    model = _write(tmp_path / "model", {"config.json": "{}", "weights.bin": "w"})
    archive = tmp_path / "model.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(model, arcname=".")
    with caplog.at_level(logging.WARNING, logger="sagelaunch.sourcedir"):
        repack_to_s3(str(archive), f"s3://{name}/repack/model.tar.gz", "us-west-2", entry_point="inference.py",
                     source_dir=str(project["src"]), dependencies=(str(project["shared"]),))
    members = _members(s3.get_object(Bucket=name, Key="repack/model.tar.gz")["Body"].read())
    assert sorted(members) == ["code/inference.py", "code/lib/shared/util.py", "code/lib/util.py", "code/train.py",
                               "config.json", "weights.bin"]
    assert not any(SECRET.encode() in data for data in members.values())
    assert "'passwd' → " in _one_warning(caplog)


def test_deploy_repack_of_a_lone_entry_point_with_file_dependencies(project, tmp_path):
    model = _write(tmp_path / "model", {"config.json": "{}"})
    helper = _write(tmp_path / "helpers", {"helper.py": "H = 1\n"}) / "helper.py"
    out = repack_model(model, tmp_path / "out.tar.gz", entry_point=str(project["src"] / "inference.py"),
                       dependencies=[str(helper)])
    assert sorted(_members(out.read_bytes())) == ["code/inference.py", "code/lib/helper.py", "config.json"]


@pytest.mark.parametrize("how", ["package (Model.deploy)", "repack (PyTorchModel.deploy)"])
def test_a_model_folder_ships_by_the_same_rule(project, bucket, tmp_path, caplog, how):
    from sagelaunch.launcher.sagemaker import endpoint as sme

    s3, name = bucket
    model = _write(tmp_path / "model", {"config.json": "{}", "weights.bin": "w", ".env": SECRET,
                                        ".git/config": SECRET, "sub/.aws/credentials": SECRET})
    (model / "vocab.json").symlink_to("config.json")  # inside: ships as a file
    with caplog.at_level(logging.WARNING, logger="sagelaunch.sourcedir"):
        if how.startswith("package"):
            uri = sme.upload_model_data(str(model), "us-west-2", "model-folder", bucket=name)
        else:
            uri = sme.repack_to_s3(str(model), f"s3://{name}/repack/model.tar.gz", "us-west-2",
                                   entry_point=str(project["src"] / "inference.py"))
    members = _members(s3.get_object(Bucket=name, Key=uri.split(f"s3://{name}/", 1)[1])["Body"].read())
    assert sorted(m for m in members if not m.startswith("code/")) == ["config.json", "vocab.json", "weights.bin"]
    assert not any(SECRET.encode() in data for data in members.values())
    warning = _one_warning(caplog)
    assert "'.env' (credentials)" in warning and "'sub/.aws' (credentials)" in warning and "'.git'" in warning


@pytest.mark.parametrize("how", ["package", "repack"])
def test_a_model_file_linked_out_of_its_folder_is_refused_not_dropped(project, tmp_path, how):
    """A model whose weights are links out of the folder (a Hugging Face cache snapshot) must not ship without
    them, nor ship what the links point at."""
    model = _write(tmp_path / "model", {"config.json": "{}"})
    (model / "model.safetensors").symlink_to(project["home"] / "notes.txt")
    with pytest.raises(ValueError, match=r"1 file\(s\) are symlinks out of the folder \('model.safetensors'\), "
                                         r"whose content never ships; .*cp -rL"):
        if how == "package":
            package_model(model, tmp_path / "out.tar.gz")
        else:
            repack_model(model, tmp_path / "out.tar.gz", entry_point=str(project["src"] / "inference.py"))
    assert not (tmp_path / "out.tar.gz").exists()


@pytest.mark.parametrize("root", [".aws", "id_rsa", ".netrc", "server.pem", ".git", "link-to-aws"])
def test_a_credential_folder_or_file_given_as_a_dependency_is_refused_by_name(project, tmp_path, root):
    home = project["home"]
    (home / "id_rsa").write_text(SECRET)
    (home / ".netrc").write_text(SECRET)
    (home / "server.pem").write_text(SECRET)
    (home / ".git").mkdir()
    (tmp_path / "link-to-aws").symlink_to(home / ".aws", target_is_directory=True)
    dependency = str(tmp_path / root) if root == "link-to-aws" else str(home / root)
    with pytest.raises(ValueError, match=r"dependencies: .* is (credentials|version control data) \(matches "):
        list(iter_source_files(project["src"], "train.py", (), [dependency]))
    with pytest.raises(ValueError, match=r"dependencies: .* which never ships"):  # and in deploy's repack
        repack_model(_write(tmp_path / "model", {"config.json": "{}"}), tmp_path / "m.tar.gz",
                     entry_point="inference.py", source_dir=project["src"], dependencies=[dependency])
    assert not (tmp_path / "m.tar.gz").exists()


def test_a_local_job_with_a_credential_dependency_is_refused_before_it_exists(project):
    from sagelaunch.launcher.local import registry
    from sagelaunch.launcher.local.backend import submit

    spec = make_spec("train.py", source_dir=str(project["src"]), dependencies=(str(project["home"] / ".aws"),))
    with pytest.raises(ValueError, match=r"is credentials \(matches '.aws'\), which never ships"):
        submit(spec, wait=False)
    assert not registry.job_dir(spec.job_name).exists()


# ---------- git_config ----------

def _git(*args: str, cwd: Path | None = None) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args], cwd=cwd, check=True,
                   capture_output=True)


def _bare_repository(tmp_path: Path, home: Path) -> Path:
    """src/train.py, and `shared`, `code` committed as symlinks to the user's home folder."""
    bare, seed = tmp_path / "project.git", tmp_path / "seed"
    _git("init", "-q", "--bare", str(bare))
    _git("init", "-q", str(seed))
    _write(seed, {"src/train.py": "print(1)\n", "inside/util.py": "U = 1\n"})
    (seed / "shared").symlink_to(home, target_is_directory=True)
    (seed / "code").symlink_to(home, target_is_directory=True)
    _git("add", "-A", cwd=seed)
    _git("commit", "-qm", "one", cwd=seed)
    _git("branch", "-M", "main", cwd=seed)
    _git("push", "-q", str(bare), "main", cwd=seed)
    _git("--git-dir", str(bare), "symbolic-ref", "HEAD", "refs/heads/main")
    return bare


def _reach(monkeypatch, url: str, base: str) -> None:
    monkeypatch.setenv("GIT_CONFIG_COUNT", "1")
    monkeypatch.setenv("GIT_CONFIG_KEY_0", f"url.{base}.insteadOf")
    monkeypatch.setenv("GIT_CONFIG_VALUE_0", url)


@pytest.fixture
def scratch(tmp_path, monkeypatch) -> Path:
    """The temp folder clones are made in, to see that none is left."""
    folder = tmp_path / "tmp"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder


@pytest.fixture
def repository(tmp_path, project, monkeypatch) -> str:
    url = "https://git.example.com/team/project.git"
    _reach(monkeypatch, url, f"file://{_bare_repository(tmp_path, project['home'])}")
    return url


def _estimator(repository: str, tmp_path: Path, **overrides):
    from sagelaunch.estimators import PyTorch

    options = dict(entry_point="train.py", source_dir="src", git_config={"repo": repository, "branch": "main"},
                   framework_version="2.0.0", py_version="py310", instance_type="local",
                   output_path=str(tmp_path / "out"))
    return PyTorch(**{**options, **overrides})


@pytest.mark.parametrize("field", ["dependencies", "source_dir"])
def test_a_symlinked_git_folder_pointing_home_is_refused_and_the_clone_removed(repository, scratch, tmp_path, field):
    overrides = {"dependencies": ["shared"]} if field == "dependencies" else {"source_dir": "code"}
    with pytest.raises(ValueError, match=rf"{field}='(shared|code)' of the repository https://git.example.com/"
                                         r"team/project.git is a symlink to .*home'?, outside the repository"):
        _estimator(repository, tmp_path, **overrides).fit(wait=False)
    assert list(scratch.iterdir()) == [], "the clone is removed"


@pytest.mark.parametrize("git_config", [{"branch": "nope"}, {"commit": "0" * 40}])
def test_a_failed_git_config_fit_leaves_no_clone(repository, scratch, tmp_path, git_config):
    with pytest.raises(ValueError, match="git checkout .* failed"):
        _estimator(repository, tmp_path, git_config={"repo": repository, **git_config}).fit(wait=False)
    with pytest.raises(ValueError, match="entry_point='missing.py' is not a file"):
        _estimator(repository, tmp_path, entry_point="missing.py").fit(wait=False)
    assert list(scratch.iterdir()) == []


class _AuthenticatedGit(http.server.SimpleHTTPRequestHandler):
    """git's dumb HTTP protocol over a bare repository, answering only with the right Basic credentials."""

    expected = ""

    def do_GET(self):
        if self.headers.get("Authorization") != self.expected:
            self.send_response(401)
            self.send_header("WWW-Authenticate", 'Basic realm="git"')
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        super().do_GET()

    def log_message(self, *args):
        pass


@pytest.fixture
def token_server(tmp_path, project, monkeypatch):
    bare = _bare_repository(tmp_path, project["home"])
    _git("--git-dir", str(bare), "update-server-info")
    token = f"ghp_{SECRET}"
    handler = partial(_AuthenticatedGit, directory=str(bare))
    _AuthenticatedGit.expected = "Basic " + base64.b64encode(f"{token}:".encode()).decode()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", free_port()), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = "https://git.example.com/team/private.git"
    _reach(monkeypatch, url, f"http://127.0.0.1:{server.server_address[1]}/")
    home = tmp_path / "user-home"  # a user whose git stores every credential it is given
    _write(home, {".gitconfig": "[credential]\n\thelper = store\n"})
    monkeypatch.setenv("HOME", str(home))
    try:
        yield url, token, home
    finally:
        server.shutdown()
        server.server_close()


def _files_holding(root: Path, text: str) -> list[str]:
    return [str(p) for p in root.rglob("*") if p.is_file() and not p.is_symlink() and text.encode() in p.read_bytes()]


def test_a_token_authenticates_the_clone_without_reaching_the_disk(token_server, scratch, tmp_path):
    from sagelaunch.launcher.common.gitclone import clone

    url, token, home = token_server
    cloned = clone({"repo": url, "token": token}, "train.py", "src", ["inside"])
    try:
        assert Path(cloned.source_dir, "train.py").read_text() == "print(1)\n"
        assert _files_holding(Path(cloned.folder), token) == [], "the token is in the clone"
        assert _files_holding(scratch, token) == [] and not (home / ".git-credentials").exists()
    finally:
        import shutil

        shutil.rmtree(cloned.folder)
    with pytest.raises(ValueError) as refused:  # the server does check: a wrong token is refused
        clone({"repo": url, "token": "wrong"}, "train.py", "src", [])
    assert "git clone failed" in str(refused.value) and "wrong" not in str(refused.value)
    assert list(scratch.iterdir()) == []
