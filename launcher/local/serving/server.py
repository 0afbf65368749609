"""The SageMaker serving contract on 127.0.0.1: GET /ping and POST /invocations around inference.py.

    python -m sagelaunch.launcher.local.serving.server --model-dir DIR [--port 8080] [--ready-file F] [--owner-fd N]

Served by tornado's HTTP server: one event loop holds the connections, so an idle or slow client costs a
socket, never a thread, and the model runs on one worker thread. Limits (see ServerLimits):
- the request line and headers must arrive within --header-timeout seconds in all (not per byte; it is
  also how long an idle keep-alive connection stays open), a body within --body-timeout; headers ≤ 64 KiB;
- at most --max-connections open connections (the next get 503), a listen backlog of 1024 for bursts;
- a body arrives into a spooled file (≤ 256 KiB of memory per waiting body) and is read into memory only
  by the worker; at most --max-body-bytes (6 MB, InvokeEndpoint's own limit);
- the Host header must be 127.0.0.1 or localhost with this port (403 otherwise), so a web page that
  rebinds a DNS name to 127.0.0.1 cannot call the model; a browser's cross-site request (an Origin other than this
  server's, Sec-Fetch-Site cross-site or same-site) gets 403 too, so no web page the user visits can run the model
  (jobspec.browser_origin, the profile browser's rule); API clients send neither header.
Bad requests get a 4xx with a JSON message and the server keeps serving: 415 for a content type the
handler refuses, 400 for empty or malformed input, 411 without a length, 413 for a body over the limit,
404 for other paths.

Lifetime: with --owner-fd (the read end of a pipe whose write end only the deploying process holds) the
server ends when that pipe closes or its parent changes, i.e. when the owner exits or is killed (kill -9
included); without it (a detached endpoint) it runs until SIGTERM (`sagelaunch endpoints stop NAME`).
On the way out it removes --workdir (its temporary folder) and its record in the endpoint registry.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, cast
import asyncio
import importlib
import json
import os
import resource
import shutil
import signal
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from sagelaunch.jobspec.browser_origin import cross_site_refusal
from sagelaunch.launcher.local.serving import endpoint_registry

if TYPE_CHECKING:
    from tornado.http1connection import HTTP1Connection
    from tornado.httputil import HTTPServerRequest

# whose serving container the server imitates → its handler class (imported when the server starts)
HANDLERS = {"pytorch": ("sagelaunch.launcher.local.serving.handler", "ModelHandler"),
            "tensorflow": ("sagelaunch.launcher.local.serving.tf_serving", "TensorFlowServingHandler")}
MAX_BODY_BYTES = 6 * 1024 * 1024  # InvokeEndpoint's payload limit
DRAIN_LIMIT = 64 * 1024 * 1024  # read (and drop) an oversized body up to this, so the client sees the 413
SPOOL_BYTES = 256 * 1024  # a waiting body above this goes to disk (the server's temporary folder)
BACKLOG = 1024  # connections the kernel queues before accept: a burst of predict() calls is not reset
OWNER_POLL_S = 1.0  # how often the parent pid is compared (the pipe's close is seen at once)
_BUSY_BODY = b'{"error": "too many open connections; try again shortly", "status": 503}'
BUSY_REPLY = (b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nConnection: close\r\n"
              b"Content-Length: %d\r\n\r\n%s" % (len(_BUSY_BODY), _BUSY_BODY))


@dataclass(frozen=True)
class ServerLimits:
    max_body_bytes: int = MAX_BODY_BYTES
    header_timeout: float = 10.0  # request line + headers, in all; also the keep-alive idle limit
    body_timeout: float = 60.0  # the whole body
    max_header_bytes: int = 64 * 1024
    max_connections: int = 2048


def _http1(request: "HTTPServerRequest") -> "HTTP1Connection":
    """The request's connection: tornado's HTTP/1 server connection (its stub names only the abstract interface)."""
    return cast("HTTP1Connection", request.connection)


def _routes():
    """The tornado handlers (built on first use, so that importing this module loads no tornado)."""
    from tornado import web

    @web.stream_request_body  # every route: no body is ever buffered whole in memory by tornado
    class Base(web.RequestHandler):
        def initialize(self, service: "InferenceService") -> None:
            self.service = service

        def set_default_headers(self) -> None:
            self.clear_header("Server")

        def prepare(self) -> None:
            _http1(self.request).set_max_body_size(self.service.limits.max_body_bytes)
            if self.request.host not in self.service.allowed_hosts:
                return self.fail(403, f"Host {self.request.host!r} is not served; call this endpoint at "
                                      f"{self.service.url} (DNS-rebinding pages are refused)", close=True)
            # a web page the user visits must not run the model: a browser's cross-site request is refused
            refusal = cross_site_refusal(self.request.headers.get("Origin"),
                                         self.request.headers.get("Sec-Fetch-Site"), self.service.allowed_origins)
            if refusal is not None:
                return self.fail(403, f"{refusal}: a local endpoint answers API clients and its own origin only",
                                 close=True)

        def data_received(self, chunk: bytes) -> None:  # the body of a request already answered: dropped
            pass

        def fail(self, status: int, message: str, close: bool = False) -> None:
            self.set_status(status)
            self.set_header("Content-Type", "application/json")
            if close:  # the body's end is unknown or unread: this connection cannot be reused
                self.set_header("Connection", "close")
            sent = self.finish(json.dumps({"error": message, "status": status}))
            if close:
                sent.add_done_callback(lambda _: _http1(self.request).close())

        def write_error(self, status_code: int, **kwargs) -> None:  # tornado's own errors (405, 500), as JSON
            self.set_header("Content-Type", "application/json")
            self.finish(json.dumps({"error": self._reason, "status": status_code}))

    class Ping(Base):
        def get(self) -> None:
            self.set_header("Content-Type", "application/json")
            self.finish(b"{}")  # the model is loaded before the server listens

    class Invocations(Base):
        body = None  # the request body's spool file, once the headers are accepted
        refusal: str | None = None  # why an oversized body, read and dropped, gets a 413

        def prepare(self) -> None:
            super().prepare()
            if self._finished or self.request.method != "POST":  # other methods: tornado's 405
                return
            raw_length = self.request.headers.get("Content-Length")
            chunked = "chunked" in self.request.headers.get("Transfer-Encoding", "").lower()
            limit = self.service.limits.max_body_bytes
            if raw_length is None and not chunked:
                return self.fail(411, "a Content-Length header is required (or a chunked body)", close=True)
            if raw_length is not None and not (raw_length.strip().isdigit() and raw_length.isascii()):
                return self.fail(400, f"Content-Length {raw_length!r} is not a byte count; send a whole number >= 0",
                                 close=True)
            if raw_length is not None and int(raw_length) > limit:
                self.refusal = f"the body has {int(raw_length)} bytes; this endpoint accepts at most {limit}"
                if int(raw_length) > DRAIN_LIMIT:
                    return self.fail(413, self.refusal, close=True)
                # answered once read and dropped: a client still sending would see a reset, not the 413
                _http1(self.request).set_max_body_size(DRAIN_LIMIT)
                return
            # a chunked body past the limit ends the connection (tornado counts it against set_max_body_size)
            self.body = tempfile.SpooledTemporaryFile(max_size=SPOOL_BYTES, dir=self.service.spool_dir)

        def data_received(self, chunk: bytes) -> None:
            if self.body is not None and not self._finished:
                self.body.write(chunk)

        async def post(self) -> None:
            if self.refusal:
                return self.fail(413, self.refusal)
            status, answer, content_type = await self.service.invoke(
                self.body, self.request.headers.get("Content-Type"), self.request.headers.get("Accept"))
            if status != 200:  # the answer is the error's text
                return self.fail(status, answer if isinstance(answer, str) else answer.decode(errors="replace"))
            self.set_header("Content-Type", content_type)
            self.finish(answer)

        def on_finish(self) -> None:
            if self.body is not None:
                self.body.close()

    class NotFound(Base):
        def prepare(self) -> None:
            super().prepare()
            if not self._finished:
                hint = "send requests to POST /invocations" if self.request.method == "POST" else \
                    "this server answers GET /ping and POST /invocations"
                self.fail(404, f"no route {self.request.method} {self.request.path}; {hint}")

    return Ping, Invocations, NotFound


class InferenceService:
    """One loaded model behind the HTTP routes; the model runs on one worker thread."""

    def __init__(self, handler, limits: ServerLimits, spool_dir: str | None = None):
        self.handler, self.limits, self.spool_dir = handler, limits, spool_dir
        self.worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="model")
        self.url = ""
        self.allowed_hosts: frozenset[str] = frozenset()
        self.allowed_origins: frozenset[str] = frozenset()

    def listen_on(self, host: str, port: int) -> None:
        self.url = f"http://{host}:{port}"
        self.allowed_hosts = frozenset(f"{name}:{port}" for name in {host, "127.0.0.1", "localhost"})
        self.allowed_origins = frozenset(f"http://{name}" for name in self.allowed_hosts)

    async def invoke(self, body, content_type: str | None, accept: str | None) -> tuple[int, bytes | str, str]:
        """(status, answer or error message, content type); the body is read into memory on the worker."""
        from sagelaunch.launcher.local.serving.handler import InvocationFailed  # lazy: the handler loads numpy

        def run():
            body.seek(0)
            try:
                answer, answer_type = self.handler.invoke(body.read(), content_type, accept)
            except InvocationFailed as exc:
                return exc.status, exc.message, "application/json"
            return 200, answer, answer_type

        return await asyncio.get_running_loop().run_in_executor(self.worker, run)


def make_server(service: InferenceService):
    """tornado's HTTPServer with ServerLimits applied; call .add_sockets(...) to serve."""
    from tornado import httpserver, web

    ping, invocations, not_found = _routes()
    options = {"service": service}
    app = web.Application([(r"/ping", ping, options), (r"/invocations", invocations, options)],
                          default_handler_class=not_found, default_handler_args=options)
    limits = service.limits

    class BoundedServer(httpserver.HTTPServer):
        def handle_stream(self, stream, address) -> None:
            if len(self._connections) >= limits.max_connections:  # answered at once, never queued
                stream.write(BUSY_REPLY).add_done_callback(lambda done: (done.exception(), stream.close()))
                return
            super().handle_stream(stream, address)

    return BoundedServer(app, idle_connection_timeout=limits.header_timeout, body_timeout=limits.body_timeout,
                         max_header_size=limits.max_header_bytes, max_body_size=DRAIN_LIMIT)


FILES_BESIDE_CONNECTIONS = 64  # the model's files, the log, spool files, the listening socket


def connections_this_process_can_hold(wanted: int) -> int:
    """Raise the open-file limit towards `wanted` connections (the soft limit is often 1,024, the hard one far
    higher) and return how many it allows, so that accept() never fails for want of a descriptor."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    needed = wanted + FILES_BESIDE_CONNECTIONS
    if soft != resource.RLIM_INFINITY and soft < needed:
        soft = needed if hard == resource.RLIM_INFINITY else min(needed, hard)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    return wanted if soft == resource.RLIM_INFINITY else max(1, min(wanted, soft - FILES_BESIDE_CONNECTIONS))


async def _until_stopped(owner_fd: int | None, owner_pid: int | None) -> str:
    """Wait for SIGTERM/SIGINT/SIGHUP, or for the owner to go (its pipe closes, or this process is re-parented)."""
    loop, stopped = asyncio.get_running_loop(), asyncio.Event()
    reason: dict[str, str] = {}

    def stop(why: str) -> None:
        reason.setdefault("why", why)
        stopped.set()

    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):  # SIGHUP: the owner's terminal closed
        loop.add_signal_handler(signum, stop, signal.Signals(signum).name)
    def owner_pipe_readable(fd: int) -> None:  # the owner never writes: readable means closed
        if not os.read(fd, 1):
            loop.remove_reader(fd)
            stop("the owner process ended")

    if owner_fd is not None:
        loop.add_reader(owner_fd, owner_pipe_readable, owner_fd)

    async def watch_parent() -> None:
        while os.getppid() == owner_pid:
            await asyncio.sleep(OWNER_POLL_S)
        stop("the owner process ended")

    watcher = asyncio.create_task(watch_parent()) if owner_pid is not None else None
    await stopped.wait()
    if watcher:
        watcher.cancel()
    return reason["why"]


async def serve(args: argparse.Namespace, limits: ServerLimits) -> None:
    from tornado.netutil import bind_sockets


    module, name = HANDLERS[args.framework]
    handler_class = getattr(importlib.import_module(module), name)
    service = InferenceService(handler_class(args.model_dir, args.program), limits, args.workdir)
    sockets = bind_sockets(args.port, address=args.host, backlog=BACKLOG)
    service.listen_on(args.host, sockets[0].getsockname()[1])
    server = make_server(service)
    server.add_sockets(sockets)
    if args.name:
        started = endpoint_registry.process_start_time(os.getpid())
        if started is None:  # the record names this process by pid and start time: without one it could not
            raise SystemExit("local endpoint: this process's start time cannot be read; the endpoint is not recorded")
        endpoint_registry.register(endpoint_registry.EndpointRecord(
            name=args.name, url=service.url, pid=os.getpid(), started=started,
            workdir=args.workdir or "", model_data=args.model_data or args.model_dir,
            owner_pid=os.getppid() if args.owner_fd is not None else None))
    if args.ready_file:
        partial = Path(args.ready_file + ".partial")
        partial.write_text(json.dumps({"url": service.url}))
        partial.replace(args.ready_file)
    print(f"serving {args.model_dir} at {service.url}", file=sys.stderr, flush=True)
    why = await _until_stopped(args.owner_fd, os.getppid() if args.owner_fd is not None else None)
    print(f"stopping: {why}", file=sys.stderr, flush=True)
    server.stop()
    service.worker.shutdown(wait=False, cancel_futures=True)


def main(argv: list[str] | None = None) -> None:
    defaults = ServerLimits()
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model-dir", required=True, help="unpacked model (with code/inference.py or not)")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8080, help="0 picks a free port")
    parser.add_argument("--max-body-bytes", type=int, default=defaults.max_body_bytes)
    parser.add_argument("--header-timeout", type=float, default=defaults.header_timeout)
    parser.add_argument("--body-timeout", type=float, default=defaults.body_timeout)
    parser.add_argument("--max-connections", type=int, default=defaults.max_connections)
    parser.add_argument("--program", help="the handler script in code/ (SAGEMAKER_PROGRAM); default inference.py")
    parser.add_argument("--framework", choices=sorted(HANDLERS), default="pytorch",
                        help="whose serving container to imitate: PyTorch's toolkit or TensorFlow Serving's")
    parser.add_argument("--ready-file", help="written with {'url': ...} once the model is loaded and serving")
    parser.add_argument("--owner-fd", type=int, help="end when this pipe closes (the deploying process is gone)")
    parser.add_argument("--workdir", help="this endpoint's temporary folder: removed when the server ends")
    parser.add_argument("--name", help="the endpoint's name in the registry (`sagelaunch endpoints list`)")
    parser.add_argument("--model-data", help="where the model came from, as the user gave it (for the listing)")
    args = parser.parse_args(argv)
    limits = ServerLimits(args.max_body_bytes, args.header_timeout, args.body_timeout,
                          max_connections=connections_this_process_can_hold(args.max_connections))
    try:
        if not Path(args.model_dir).is_dir():
            raise ValueError("no such folder; pass the folder (or unpacked model.tar.gz) the training job saved")
        asyncio.run(serve(args, limits))
    except ValueError as exc:  # the model folder or its handler is unusable: one line for the endpoint log
        print(f"error: model folder {args.model_dir}: {exc}", file=sys.stderr, flush=True)
        raise SystemExit(1) from None
    finally:
        if args.name:
            endpoint_registry.unregister(args.name, os.getpid())
        if args.workdir:
            shutil.rmtree(args.workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
