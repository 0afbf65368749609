"""The SageMaker serving contract on 127.0.0.1: GET /ping and POST /invocations around inference.py.

    python -m launcher.deploy.local_server --model-dir DIR [--port 8080] [--ready-file F]

Bad requests get a 4xx with a JSON message and the server keeps serving: 415 for a content
type the handler refuses, 400 for empty or malformed input, 411 without a length, 413 for a body
over --max-body-bytes (6 MB by default, InvokeEndpoint's own limit), 404 for other paths.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from launcher.deploy.handler import InvocationFailed, ModelHandler
from launcher.deploy.tf_serving import TensorFlowServingHandler

HANDLERS = {"pytorch": ModelHandler, "tensorflow": TensorFlowServingHandler}  # the serving container imitated

MAX_BODY_BYTES = 6 * 1024 * 1024  # InvokeEndpoint's payload limit
DRAIN_LIMIT = 64 * 1024 * 1024  # read (and drop) an oversized body up to this, so the client sees the 413


class _RequestHandler(BaseHTTPRequestHandler):
    server: "InferenceServer"
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args) -> None:  # one line per request, on stderr (the endpoint log)
        sys.stderr.write(f"[local-endpoint] {self.address_string()} {format % args}\n")

    def _reply(self, status: int, body: bytes, content_type: str = "application/json") -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _error(self, status: int, message: str) -> None:
        self._reply(status, json.dumps({"error": message, "status": status}).encode())

    def do_GET(self) -> None:
        if self.path == "/ping":
            self._reply(200, b"{}")  # the model is loaded before the server listens
        else:
            self._error(404, f"no route GET {self.path}; this server answers GET /ping and POST /invocations")

    def do_POST(self) -> None:
        if self.path != "/invocations":
            self._drain(max(self._content_length() or 0, 0))
            return self._error(404, f"no route POST {self.path}; send requests to POST /invocations")
        raw_length = self.headers.get("Content-Length")
        length = self._content_length()
        if raw_length is not None and (length is None or length < 0):
            self.close_connection = True  # the body's end is unknown: this connection cannot be reused
            return self._error(400, f"Content-Length {raw_length!r} is not a byte count; send a whole number >= 0")
        if length is None:
            self.close_connection = True
            return self._error(411, "a Content-Length header is required (chunked bodies are not supported)")
        limit = self.server.max_body_bytes
        if length > limit:
            self._drain(length)
            return self._error(413, f"the body has {length} bytes; this endpoint accepts at most {limit}")
        body = self.rfile.read(length)
        try:
            answer, content_type = self.server.handler.invoke(
                body, self.headers.get("Content-Type"), self.headers.get("Accept")
            )
        except InvocationFailed as exc:
            return self._error(exc.status, exc.message)
        self._reply(200, answer, content_type)

    def _content_length(self) -> int | None:
        raw = self.headers.get("Content-Length")
        try:
            return int(raw) if raw is not None else None
        except ValueError:
            return None

    def _drain(self, length: int) -> None:
        """Read and drop the body so the client gets our answer instead of a reset connection."""
        if length > DRAIN_LIMIT:
            self.close_connection = True
            return
        while length > 0:
            chunk = self.rfile.read(min(length, 1 << 20))
            if not chunk:
                break
            length -= len(chunk)


class InferenceServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, handler: ModelHandler | TensorFlowServingHandler, host: str = "127.0.0.1", port: int = 0,
                 max_body_bytes: int = MAX_BODY_BYTES):
        self.handler, self.max_body_bytes = handler, max_body_bytes
        super().__init__((host, port), _RequestHandler)

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host}:{port}"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model-dir", required=True, help="unpacked model (with code/inference.py or not)")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8080, help="0 picks a free port")
    parser.add_argument("--max-body-bytes", type=int, default=MAX_BODY_BYTES)
    parser.add_argument("--program", help="the handler script in code/ (SAGEMAKER_PROGRAM); default inference.py")
    parser.add_argument("--framework", choices=sorted(HANDLERS), default="pytorch",
                        help="whose serving container to imitate: PyTorch's toolkit or TensorFlow Serving's")
    parser.add_argument("--ready-file", help="written with {'url': ...} once the model is loaded and serving")
    args = parser.parse_args(argv)
    handler = HANDLERS[args.framework](args.model_dir, args.program)
    server = InferenceServer(handler, args.host, args.port, args.max_body_bytes)
    # SIGTERM (LocalEndpoint.stop) → leave serve_forever cleanly
    signal.signal(signal.SIGTERM, lambda *_: threading.Thread(target=server.shutdown, daemon=True).start())
    if args.ready_file:
        partial = Path(args.ready_file + ".partial")
        partial.write_text(json.dumps({"url": server.url}))
        partial.replace(args.ready_file)
    print(f"serving {args.model_dir} at {server.url}", file=sys.stderr, flush=True)
    try:
        server.serve_forever(poll_interval=0.2)
    finally:
        server.server_close()


if __name__ == "__main__":
    main()
