"""`sagelaunch profile ui`: the profile browser, a small read-only web app on 127.0.0.1.

Standard-library http.server (ThreadingHTTPServer): the app serves a handful of fixed files and a
JSON API, so a web framework would add a dependency without removing code. Safety:
- binds 127.0.0.1 only and answers only requests whose Host is 127.0.0.1/localhost:<port>
  (DNS-rebinding pages cannot reach it);
- static files come from a fixed table, never from the request path;
- jobs are named, validated against SageMaker's name pattern and looked up in the listing; their
  files are found from the registry / DescribeTrainingJob, never from anything the browser sends; a profile
  given on the command line is listed (source "path") and named by the page the same way, never by its path;
- nothing is written or deleted except the server's own temporary S3 download folder;
- state-changing requests (POST) from another origin are refused (Origin / Sec-Fetch-Site), and no CORS
  header is ever sent;
- a request body is read only when its Content-Length is a number from 0 to MAX_BODY; every connection has
  an idle timeout and at most MAX_CONNECTIONS are served at once (the rest get 503), so idle or half-open
  sockets cannot pin threads; the whole request (line, headers, body) must arrive within REQUEST_TIMEOUT_S,
  so a client that trickles a byte at a time frees its slot too.

API: GET /api/jobs?q=&status=&created_after=&created_before=&refresh=1 · POST /api/load {"name","source"}
· GET /api/status · POST /api/unload · GET /api/dashboard · GET /api/timeline
"""

from __future__ import annotations

import errno
import io
import json
import logging
import socket
import sys
import threading
import time
import webbrowser
from functools import lru_cache
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from sagelaunch.jobspec.browser_origin import cross_site_refusal
from sagelaunch.jobspec.errors import SagelaunchError
from sagelaunch.profiler.ui import sources
from sagelaunch.profiler.ui.session import LoadConflict, ProfileSession
from sagelaunch.profiler.view_scripts import VIEW_UTIL_JS

log = logging.getLogger(__name__)
BIND = "127.0.0.1"
HERE = Path(__file__).parent
STATIC_FILES = {  # URL name -> (file, content type); the only files the server ever reads for a URL
    "app.js": (HERE / "static" / "app.js", "text/javascript"),
    "app.css": (HERE / "static" / "app.css", "text/css"),
    "view_util.js": (VIEW_UTIL_JS, "text/javascript"),
    "dashboard.js": (HERE.parent / "report" / "static" / "dashboard.js", "text/javascript"),
    "dashboard.css": (HERE.parent / "report" / "static" / "dashboard.css", "text/css"),
    "timeline.js": (HERE.parent / "timeline" / "static" / "timeline.js", "text/javascript"),
    "timeline_lod.js": (HERE.parent / "timeline" / "static" / "timeline_lod.js", "text/javascript"),
    "timeline_interact.js": (HERE.parent / "timeline" / "static" / "timeline_interact.js", "text/javascript"),
    "timeline_nav.js": (HERE.parent / "timeline" / "static" / "timeline_nav.js", "text/javascript"),
    "timeline.css": (HERE.parent / "timeline" / "static" / "timeline.css", "text/css"),
}
MAX_BODY = 4096
IDLE_TIMEOUT_S = 30.0  # a connection that sends nothing for this long is closed
MAX_CONNECTIONS = 32  # connections served at once; one thread each
REQUEST_TIMEOUT_S = 10.0  # the request line, headers and body in all (each byte resets the idle timeout, not this)
_BUSY_BODY = b'{"error": "too many open connections; try again shortly"}\n'
BUSY_REPLY = (b"HTTP/1.0 503 Service Unavailable\r\nContent-Type: application/json\r\nConnection: close\r\n"
              b"Content-Length: %d\r\n\r\n%s" % (len(_BUSY_BODY), _BUSY_BODY))


@lru_cache(maxsize=1)
def _plotly_js() -> bytes:
    from plotly.offline import get_plotlyjs

    return get_plotlyjs().encode()


class ProfileBrowser(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128  # the listen backlog: a page's burst of requests is queued, not reset (default 5)

    def __init__(self, port: int = 0, include_sagemaker: bool = True,
                 job_sources: sources.JobSources = sources.NO_SOURCES, *, idle_timeout: float = IDLE_TIMEOUT_S,
                 max_connections: int = MAX_CONNECTIONS, request_timeout: float = REQUEST_TIMEOUT_S):
        # set before binding: a failed bind calls server_close(), which unloads the session
        self.session = ProfileSession(job_sources)
        self.idle_timeout, self.request_timeout = idle_timeout, request_timeout
        self.slots = threading.BoundedSemaphore(max_connections)
        super().__init__((BIND, port), _Handler)
        self.catalog = sources.JobCatalog(job_sources, include_sagemaker=include_sagemaker)

    @property
    def url(self) -> str:
        return f"http://{BIND}:{self.server_address[1]}/"

    def allowed_hosts(self) -> set[str]:
        port = self.server_address[1]
        return {f"127.0.0.1:{port}", f"localhost:{port}"}

    def allowed_origins(self) -> set[str]:
        return {f"http://{host}" for host in self.allowed_hosts()}

    def process_request(self, request, client_address) -> None:
        if not self.slots.acquire(blocking=False):  # all slots held: answer at once instead of queueing a thread
            try:
                request.settimeout(1.0)  # the accepting thread must never wait on a client
                request.sendall(BUSY_REPLY)
            except OSError:
                pass
            self.shutdown_request(request)
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self.slots.release()
            raise

    def process_request_thread(self, request, client_address) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self.slots.release()

    def handle_error(self, request, client_address) -> None:
        """A client that went away or stalled past the idle timeout is routine: a debug line, not a traceback."""
        if isinstance(sys.exc_info()[1], (TimeoutError, ConnectionError)):
            log.debug("%s: connection dropped (%s)", client_address, sys.exc_info()[1])
            return
        super().handle_error(request, client_address)

    def start_background(self) -> threading.Thread:
        thread = threading.Thread(target=self.serve_forever, name="profile-browser", daemon=True)
        thread.start()
        return thread

    def open_path(self, path) -> None:
        """List a profile/trace given on the command line (so it can be opened again after unloading) and load it."""
        entry = sources.path_entry(path)
        self.catalog.add_given(entry)
        self.session.start_load(entry)

    def server_close(self) -> None:
        self.session.unload()
        super().server_close()


class _DeadlineReader(io.RawIOBase):
    """A socket's bytes, each read bounded by the idle timeout and all of them by one deadline."""

    def __init__(self, sock: socket.socket, idle_timeout: float, deadline: float):
        self.sock, self.idle_timeout, self.deadline = sock, idle_timeout, deadline

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("the request did not arrive in time")
        self.sock.settimeout(min(self.idle_timeout, left))
        return self.sock.recv_into(buffer)


class _Handler(BaseHTTPRequestHandler):
    server: ProfileBrowser
    server_version = "sagelaunch-profile-ui"
    sys_version = ""

    def setup(self) -> None:
        self.timeout = self.server.idle_timeout  # type: ignore[misc]  # StreamRequestHandler reads a per-connection timeout from this class attribute; the instance sets its own
        super().setup()
        deadline = time.monotonic() + self.server.request_timeout  # one request per connection (HTTP/1.0)
        self.rfile = io.BufferedReader(_DeadlineReader(self.connection, self.timeout, deadline))

    def flush_headers(self) -> None:  # the answer is written under the idle timeout, not the request's deadline
        self.connection.settimeout(self.timeout)
        super().flush_headers()

    def log_message(self, fmt: str, *args) -> None:  # quiet by default; --verbose turns logging on
        log.debug("%s " + fmt, self.address_string(), *args)

    # ---- helpers ----
    def _send(self, status: int, body: bytes, ctype: str, cache: bool = False) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Cache-Control", "max-age=3600" if cache else "no-store")
        if ctype.startswith("text/html"):
            self.send_header("Content-Security-Policy",
                             "default-src 'self'; script-src 'self' 'unsafe-eval'; style-src 'self' 'unsafe-inline'; "
                             "img-src 'self' data: blob:; connect-src 'self'; frame-ancestors 'none'")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _json(self, status: int, obj) -> None:
        import orjson

        self._send(status, orjson.dumps(obj), "application/json")

    def _error(self, status: int, message: str) -> None:
        self._json(status, {"error": message})

    def _host_ok(self) -> bool:
        if self.headers.get("Host", "") in self.server.allowed_hosts():
            return True
        self._error(HTTPStatus.FORBIDDEN, "unexpected Host header; open the browser at " + self.server.url)
        return False

    def _same_origin(self) -> bool:
        """A state-changing request must come from this app's own page (or from a non-browser client)."""
        refusal = cross_site_refusal(self.headers.get("Origin"), self.headers.get("Sec-Fetch-Site"),
                                     self.server.allowed_origins())
        if refusal is None:
            return True
        self._error(HTTPStatus.FORBIDDEN, f"{refusal}; use the page at " + self.server.url)
        return False

    def _body_length(self) -> int | None:
        """Content-Length when it is 0..MAX_BODY; otherwise answer 400/413 and close without reading the body."""
        raw = self.headers.get("Content-Length", "0").strip()
        status, message = None, ""
        if not raw.isdigit() or not raw.isascii():
            status, message = 400, f"Content-Length {raw[:40]!r} is not a byte count; allowed: 0..{MAX_BODY}"
        elif int(raw) > MAX_BODY:
            status, message = 413, f"request body of {raw[:40]} bytes is too large; allowed: at most {MAX_BODY}"
        if status is None:
            return int(raw)
        self.close_connection = True
        self._error(status, message)
        return None

    # ---- GET ----
    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        if not self._host_ok():
            return
        url = urlsplit(self.path)
        path, query = url.path, parse_qs(url.query)
        if path in ("/", "/index.html"):
            return self._send(200, (HERE / "static" / "index.html").read_bytes(), "text/html; charset=utf-8")
        if path.startswith("/static/"):
            name = path[len("/static/"):]
            if name == "plotly.min.js":
                return self._send(200, _plotly_js(), "text/javascript", cache=True)
            entry = STATIC_FILES.get(name)
            if entry is None:
                return self._error(404, f"no static file {name!r}")
            return self._send(200, entry[0].read_bytes(), entry[1] + "; charset=utf-8")
        if path == "/api/jobs":
            return self._jobs(query)
        if path == "/api/status":
            return self._json(200, self.server.session.status())
        if path in ("/api/dashboard", "/api/timeline"):
            s = self.server.session
            body = s.dashboard_json if path == "/api/dashboard" else s.timeline_json
            if s.state != "loaded" or body is None:
                return self._error(409, f"no profile loaded (state: {s.state}); load a job first")
            return self._send(200, body, "application/json")
        if path == "/favicon.ico":
            return self._send(204, b"", "image/x-icon")
        self._error(404, f"no such page {path!r}")

    do_HEAD = do_GET

    def _jobs(self, query: dict[str, list[str]]) -> None:
        one = lambda k: (query.get(k) or [""])[0]  # noqa: E731
        try:
            jobs, states = self.server.catalog.all(refresh=one("refresh") == "1")
            shown = sources.filter_jobs(jobs, q=one("q"), status=one("status"),
                                        created_after=one("created_after"), created_before=one("created_before"))
        except ValueError as exc:
            return self._error(400, str(exc))
        self._json(200, {"jobs": [j.to_dict() for j in shown], "total": len(jobs), "sources": states,
                         "statuses": list(sources.STATUSES)})

    # ---- POST ----
    def do_POST(self) -> None:  # noqa: N802
        if not self._host_ok() or not self._same_origin():
            return
        path = urlsplit(self.path).path
        length = self._body_length()
        if length is None:
            return
        try:
            raw = self.rfile.read(length) if length else b"{}"
        except (TimeoutError, socket.timeout, ConnectionError):  # the client stopped sending: drop it quietly
            self.close_connection = True
            return
        if len(raw) < length:
            self.close_connection = True
            return self._error(400, f"body: {len(raw)} of {length} bytes (Content-Length) arrived")
        try:
            body = json.loads(raw or b"{}")
            if not isinstance(body, dict):
                raise ValueError("expected a JSON object")
        except ValueError as exc:
            return self._error(400, f"body: not a JSON object ({exc})")
        if path == "/api/load":
            return self._load(body)
        if path == "/api/unload":
            self.server.session.unload()
            return self._json(200, self.server.session.status())
        self._error(404, f"no such action {path!r}")

    def _load(self, body: dict) -> None:
        name = body.get("name")
        try:
            source = sources.validate_source(body.get("source", "local"))
            if source != "path":
                name = sources.validate_job_name(name)
        except ValueError as exc:
            return self._error(400, str(exc))
        job = self.server.catalog.find(name, source) if isinstance(name, str) else None  # no entry has another name
        if job is None and source == "path":
            return self._error(404, f"no profile named {name!r} was given on the command line "
                                    "(`sagelaunch profile ui PATH` lists the one it opens)")
        if job is None:
            return self._error(404, f"no {source} job named {name!r} in the job list")
        if not job.has_profile:
            return self._error(404, f"{source} job {name!r} has no profiler output at {job.location}")
        try:
            self.server.session.start_load(job)
        except LoadConflict as exc:
            return self._error(409, str(exc))
        self._json(202, self.server.session.status())


class PortInUse(SagelaunchError, OSError):
    """The port is taken: the one-line message names it and the fix."""


def serve(port: int = 8008, include_sagemaker: bool = True, open_browser: bool = False,
          job_sources: sources.JobSources = sources.NO_SOURCES, open_path: str | None = None) -> None:
    """Run the profile browser until Ctrl-C; with open_path, that profile/trace is loaded at start."""
    try:
        server = ProfileBrowser(port, include_sagemaker=include_sagemaker, job_sources=job_sources)
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            raise PortInUse(f"port {port} on 127.0.0.1 is in use (another profile browser or program listens there); "
                            "fix: --port <another port>, or --port 0 to pick a free one") from None
        raise
    if open_path is not None:
        server.open_path(open_path)
    print(f"sagelaunch profile browser on {server.url} (127.0.0.1 only; Ctrl-C to stop)", flush=True)
    if open_browser:
        webbrowser.open(server.url)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
