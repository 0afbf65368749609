"""A local endpoint: the model unpacked as a container would see it, served by a child process.

The server runs in its own process (like a serving container): a handler that crashes or leaks
cannot take the caller down, and stop() frees everything it held. It lives as long as the process
that started it: it holds the read end of a pipe whose write end only this process has, and ends
(removing its temporary folder) when that pipe closes — at exit, on an exception, on kill -9.
A detached endpoint (detach=True, or SAGELAUNCH_DETACH_ENDPOINTS=1 so that SDK v2 code runs unchanged)
outlives its starter in a session of its own until `sagelaunch endpoints stop NAME`; every running
endpoint is listed by `sagelaunch endpoints list`.
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from typing import IO
from pathlib import Path

from sagelaunch.jobspec.errors import SagelaunchError, SagelaunchRuntimeError
from sagelaunch.jobspec.install import INSTALL_ROOT
from sagelaunch.jobspec.names import path_name
from sagelaunch.jobspec.s3uri import parse_s3_uri
from sagelaunch.launcher.common.aws.clients import client
from sagelaunch.launcher.common.aws.errors import translate
from sagelaunch.launcher.common.package import unpack_model
from sagelaunch.launcher.local.serving import endpoint_registry
from sagelaunch.launcher.local.serving.server import ServerLimits


def fetch_model(model_data: str | Path, workdir: Path, region: str | None = None) -> Path:
    """The model as a folder: a local folder as is; a .tar.gz (local, file:// or s3://) unpacked."""
    source = str(model_data)
    if source.startswith("s3://"):
        bucket, key = parse_s3_uri(source)
        local = workdir / "model.tar.gz"
        with translate(f"download {source}"):
            client("s3", region).download_file(bucket, key, str(local))
        source = str(local)
    local = Path(source.removeprefix("file://")).expanduser()
    if not local.exists():
        where = "" if local.is_absolute() else f" (resolved against the current directory {os.getcwd()})"
        raise SagelaunchError(f"model_data={str(model_data)!r} does not exist{where}; pass a model folder or model.tar.gz",
                              field="model_data", value=str(model_data), allowed="a model folder or model.tar.gz",
                              fix="pass a model folder or model.tar.gz")
    # absolute: the server runs in its own folder, where a relative path would name nothing
    return unpack_model(local.resolve(), workdir / "model")


DETACH_VARIABLE = "SAGELAUNCH_DETACH_ENDPOINTS"


def detach_requested() -> bool:
    """SAGELAUNCH_DETACH_ENDPOINTS: 1/true/yes detaches local endpoints, 0/false/no/unset ties them to their starter."""
    raw = os.environ.get(DETACH_VARIABLE, "").strip().lower()
    if raw in ("", "0", "false", "no"):
        return False
    if raw in ("1", "true", "yes"):
        return True
    raise SagelaunchError(f"{DETACH_VARIABLE}={raw!r} is not a yes/no value; set it to 1 to keep local endpoints running "
                          "after this process ends, or unset it", field=DETACH_VARIABLE, value=raw,
                          allowed="1, true, yes, 0, false, no", fix="set it to 1, or unset it")


_RUNNING: dict[str, "LocalEndpoint"] = {}  # this process's started endpoints, by name (Session.delete_endpoint)


def running_endpoint(name: str) -> "LocalEndpoint | None":
    return _RUNNING.get(name)


@atexit.register
def _stop_running_endpoints() -> None:
    """A local endpoint lives no longer than the process that started it: the AWS examples' local-mode clean-up
    removes a Docker container (`docker container rm`), which never reaches our server process, and nothing
    else could find it from a fresh shell."""
    for endpoint in list(_RUNNING.values()):
        if not endpoint.detach:  # a detached endpoint outlives its owner on purpose (`sagelaunch endpoints stop`)
            endpoint.stop()


class LocalEndpoint:
    """Start with `LocalEndpoint(model_data).start()`; `url`, `invoke(...)`, `stop()`."""

    def __init__(self, model_data: str | Path, name: str = "local-endpoint", *, region: str | None = None,
                 max_body_bytes: int | None = None, startup_timeout: float = 180.0, program: str | None = None,
                 detach: bool | None = None, limits: ServerLimits | None = None, framework: str = "pytorch"):
        self.model_data, self.name, self.region = model_data, path_name(name, "endpoint_name"), region
        self.detach = detach_requested() if detach is None else detach
        self.limits = limits  # None: the server's defaults (ServerLimits())
        self.program = program  # code/<program> is the handler (SAGEMAKER_PROGRAM); None: code/inference.py
        self.framework = framework  # whose serving container the server imitates: "pytorch" or "tensorflow"
        self.max_body_bytes, self.startup_timeout = max_body_bytes, startup_timeout
        self.url: str | None = None
        self.workdir: Path | None = None
        self.process: subprocess.Popen | None = None
        self._owner_pipe: int | None = None  # the write end the server watches; closed by stop() or our exit
        self._log: IO[bytes] | None = None  # a handle on endpoint.log: readable after the server removed its folder

    @property
    def log_path(self) -> Path | None:
        return self.workdir / "endpoint.log" if self.workdir else None

    def start(self) -> "LocalEndpoint":
        claim = endpoint_registry.claim(self.name)  # one server per name: refused here when it is taken
        try:
            self.workdir = Path(tempfile.mkdtemp(prefix=f"sagelaunch-{self.name}-"))
            model_dir = fetch_model(self.model_data, self.workdir, self.region)
            ready = self.workdir / "ready.json"
            cmd = [sys.executable, "-m", "sagelaunch.launcher.local.serving.server", "--model-dir", str(model_dir),
                   "--port", "0", "--ready-file", str(ready), "--workdir", str(self.workdir), "--name", self.name,
                   "--model-data", str(self.model_data), "--framework", self.framework]
            if self.limits:
                cmd += ["--max-body-bytes", str(self.limits.max_body_bytes), "--header-timeout",
                        str(self.limits.header_timeout), "--body-timeout", str(self.limits.body_timeout),
                        "--max-connections", str(self.limits.max_connections)]
            if self.max_body_bytes:
                cmd += ["--max-body-bytes", str(self.max_body_bytes)]
            if self.program:
                cmd += ["--program", self.program]
            env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(INSTALL_ROOT), os.environ.get("PYTHONPATH")])))
            owner_read = None
            if not self.detach:
                owner_read, self._owner_pipe = os.pipe()  # both non-inheritable: no other child gets the write end
                cmd += ["--owner-fd", str(owner_read)]
            log_path = self.workdir / "endpoint.log"
            with open(log_path, "wb") as log:
                self._log = open(log_path, "rb")
                try:  # the server inherits the name's lock and holds it while it lives
                    self.process = process = subprocess.Popen(
                        cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env, cwd=self.workdir,
                        pass_fds=(claim,) + ((owner_read,) if owner_read is not None else ()),
                        start_new_session=self.detach)
                finally:
                    if owner_read is not None:
                        os.close(owner_read)
                    os.close(claim)
                    claim = -1
            self.url = self._wait_ready(ready, process)
            _RUNNING[self.name] = self
        except BaseException:
            if claim >= 0:
                os.close(claim)
            self.stop()
            raise
        return self

    def _wait_ready(self, ready: Path, process: subprocess.Popen) -> str:
        deadline = time.monotonic() + self.startup_timeout
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise SagelaunchRuntimeError(
                    f"local endpoint {self.name} exited with code {process.returncode} while loading the "
                    f"model:\n{self.log_tail()}",
                    field="endpoint_name", value=self.name, fix="read the log above, fix the model or its script",
                )
            if ready.is_file():
                url = json.loads(ready.read_text())["url"]
                if self._ping(url):
                    return url
            time.sleep(0.1)
        raise TimeoutError(f"local endpoint {self.name} was not ready after {self.startup_timeout:.0f}s:\n{self.log_tail()}")

    @staticmethod
    def _ping(url: str) -> bool:
        try:
            with urllib.request.urlopen(f"{url}/ping", timeout=5) as answer:
                return answer.status == 200
        except (urllib.error.URLError, ConnectionError):
            return False

    def ping(self) -> bool:
        if not self.url or self.process is None or self.process.poll() is not None:
            return False
        return self._ping(self.url)

    def invoke(self, body: bytes, content_type: str = "application/json", accept: str = "application/json",
               timeout: float = 60.0) -> tuple[int, bytes, str]:
        """(status, body, content type) of POST /invocations; 4xx/5xx are returned, not raised."""
        if not self.url:
            raise SagelaunchRuntimeError(f"local endpoint {self.name} is not running; call start() (or deploy) first",
                                         field="endpoint_name", value=self.name, fix="call start() (or deploy) first")
        request = urllib.request.Request(f"{self.url}/invocations", data=body, method="POST",
                                         headers={"Content-Type": content_type, "Accept": accept})
        try:
            with urllib.request.urlopen(request, timeout=timeout) as answer:
                return answer.status, answer.read(), answer.headers.get("Content-Type", "")
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read(), exc.headers.get("Content-Type", "")

    def log_tail(self, lines: int = 30) -> str:
        if self._log is None:
            return ""
        self._log.seek(0)
        return "\n".join(self._log.read().decode(errors="replace").splitlines()[-lines:])

    def stop(self) -> None:
        if _RUNNING.get(self.name) is self:
            del _RUNNING[self.name]
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=15)
        self.process, self.url = None, None
        for handle in (self._owner_pipe, self._log):
            if handle is not None:
                os.close(handle) if isinstance(handle, int) else handle.close()
        self._owner_pipe = self._log = None
        if self.workdir is not None:
            shutil.rmtree(self.workdir, ignore_errors=True)
            self.workdir = None
