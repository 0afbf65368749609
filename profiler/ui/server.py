"""`sagelaunch profile ui`: the profile browser, a small read-only web app on 127.0.0.1.

Standard-library http.server (ThreadingHTTPServer): the app serves a handful of fixed files and a
JSON API, so a web framework would add a dependency without removing code. Safety:
- binds 127.0.0.1 only and answers only requests whose Host is 127.0.0.1/localhost:<port>
  (DNS-rebinding pages cannot reach it);
- static files come from a fixed table, never from the request path;
- jobs are named, validated against SageMaker's name pattern and looked up in the listing; their
  files are found from the registry / DescribeTrainingJob, never from anything the browser sends;
- nothing is written or deleted except the server's own temporary S3 download folder.

API: GET /api/jobs?q=&status=&created_after=&created_before=&refresh=1 · POST /api/load {"name","source"}
· GET /api/status · POST /api/unload · GET /api/dashboard · GET /api/timeline
"""

from __future__ import annotations

import json
import logging
import threading
from functools import lru_cache
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from profiler.ui import sources
from profiler.ui.session import LoadConflict, ProfileSession

log = logging.getLogger(__name__)
BIND = "127.0.0.1"
HERE = Path(__file__).parent
STATIC_FILES = {  # URL name -> (file, content type); the only files the server ever reads for a URL
    "app.js": (HERE / "static" / "app.js", "text/javascript"),
    "app.css": (HERE / "static" / "app.css", "text/css"),
    "dashboard.js": (HERE.parent / "report" / "static" / "dashboard.js", "text/javascript"),
    "dashboard.css": (HERE.parent / "report" / "static" / "dashboard.css", "text/css"),
    "timeline.js": (HERE.parent / "timeline" / "static" / "timeline.js", "text/javascript"),
    "timeline_lod.js": (HERE.parent / "timeline" / "static" / "timeline_lod.js", "text/javascript"),
    "timeline_interact.js": (HERE.parent / "timeline" / "static" / "timeline_interact.js", "text/javascript"),
    "timeline.css": (HERE.parent / "timeline" / "static" / "timeline.css", "text/css"),
}
MAX_BODY = 4096


@lru_cache(maxsize=1)
def _plotly_js() -> bytes:
    from plotly.offline import get_plotlyjs

    return get_plotlyjs().encode()


class ProfileBrowser(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, port: int = 0, include_sagemaker: bool = True,
                 job_sources: sources.JobSources = sources.NO_SOURCES):
        super().__init__((BIND, port), _Handler)
        self.catalog = sources.JobCatalog(job_sources, include_sagemaker=include_sagemaker)
        self.session = ProfileSession(job_sources)

    @property
    def url(self) -> str:
        return f"http://{BIND}:{self.server_address[1]}/"

    def allowed_hosts(self) -> set[str]:
        port = self.server_address[1]
        return {f"127.0.0.1:{port}", f"localhost:{port}"}

    def start_background(self) -> threading.Thread:
        thread = threading.Thread(target=self.serve_forever, name="profile-browser", daemon=True)
        thread.start()
        return thread

    def server_close(self) -> None:
        self.session.unload()
        super().server_close()


class _Handler(BaseHTTPRequestHandler):
    server: ProfileBrowser
    server_version = "sagelaunch-profile-ui"
    sys_version = ""

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
        if not self._host_ok():
            return
        path = urlsplit(self.path).path
        length = int(self.headers.get("Content-Length") or 0)
        if length > MAX_BODY:
            return self._error(413, "request body too large")
        raw = self.rfile.read(length) if length else b"{}"
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
        try:
            name = sources.validate_job_name(body.get("name"))
            source = sources.validate_source(body.get("source", "local"))
        except ValueError as exc:
            return self._error(400, str(exc))
        job = self.server.catalog.find(name, source)
        if job is None:
            return self._error(404, f"no {source} job named {name!r} in the job list")
        if not job.has_profile:
            return self._error(404, f"{source} job {name!r} has no profiler output at {job.location}")
        try:
            self.server.session.start_load(job)
        except LoadConflict as exc:
            return self._error(409, str(exc))
        self._json(202, self.server.session.status())


def serve(port: int = 8008, include_sagemaker: bool = True, open_browser: bool = False,
          job_sources: sources.JobSources = sources.NO_SOURCES) -> None:
    """Run the profile browser until Ctrl-C."""
    server = ProfileBrowser(port, include_sagemaker=include_sagemaker, job_sources=job_sources)
    print(f"sagelaunch profile browser on {server.url} (127.0.0.1 only; Ctrl-C to stop)", flush=True)
    if open_browser:
        import webbrowser

        webbrowser.open(server.url)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
