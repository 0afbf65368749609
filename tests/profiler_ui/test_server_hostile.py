"""The profile browser under hostile or broken clients, spoken to over raw sockets on 127.0.0.1.

Each test reproduces a probe result of issue 15 (a traceback or a hang before the fix) or keeps what held
(loopback only, Host checked, traversal refused, no CORS).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.profiler_ui.conftest import serve_profile_browser

ROOT = Path(__file__).resolve().parents[2]
DEADLINE_S = 30.0  # generous for a loaded 2-core machine; the server answers these in milliseconds when idle


def connect(server, timeout: float = DEADLINE_S) -> socket.socket:
    return socket.create_connection(("127.0.0.1", server.server_address[1]), timeout=timeout)


def read_response(sock: socket.socket) -> tuple[int, dict[str, str], bytes]:
    """Read one response until the server closes (it speaks HTTP/1.0); status, headers (lower-case), body."""
    data = b""
    while chunk := sock.recv(65536):
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = dict(line.split(": ", 1) for line in lines[1:] if ": " in line)
    return int(lines[0].split()[1]), {k.lower(): v for k, v in headers.items()}, body


def raw(server, request: bytes) -> tuple[int, dict[str, str], bytes]:
    with connect(server) as sock:
        sock.sendall(request)
        return read_response(sock)


def all_slots_free(server, count: int) -> bool:
    """Wait (up to the deadline) until no handler holds a connection slot: take them all, then give them back."""
    end, taken = time.monotonic() + DEADLINE_S, 0
    while taken < count and server.slots.acquire(timeout=max(0.0, end - time.monotonic())):
        taken += 1
    for _ in range(taken):
        server.slots.release()
    return taken == count


def post(server, path: str, body: bytes, **headers: str) -> bytes:
    port = server.server_address[1]
    lines = [f"POST {path} HTTP/1.1", f"Host: 127.0.0.1:{port}", "Content-Type: application/json",
             f"Content-Length: {len(body)}", *(f"{k.replace('_', '-')}: {v}" for k, v in headers.items())]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


def test_negative_content_length_is_refused_without_reading_the_body(ui_server):
    """Content-Length: -1 used to mean "read until the client closes": the server held the socket and the memory."""
    port = ui_server.server_address[1]
    with connect(ui_server) as sock:
        sock.sendall(f"POST /api/load HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Length: -1\r\n\r\n".encode()
                     + b"x" * 65536)  # the client keeps the connection open: only a refusal can end the wait
        status, _, body = read_response(sock)
    assert status == 400
    assert "Content-Length '-1' is not a byte count; allowed: 0..4096" in json.loads(body)["error"]


def test_oversized_body_is_refused_before_it_is_sent(ui_server):
    """A 300 MB Content-Length gets 413 while the client has sent 64 KiB of it: the body is never read."""
    port = ui_server.server_address[1]
    with connect(ui_server) as sock:
        sock.sendall(f"POST /api/load HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Length: 300000000\r\n\r\n"
                     .encode() + b"x" * 65536)
        status, _, body = read_response(sock)
    assert status == 413
    assert "300000000 bytes is too large; allowed: at most 4096" in json.loads(body)["error"]


@pytest.mark.parametrize("length", ["abc", "1e3", "0x10", " ", "4096000000000000000000", "٣"])
def test_content_length_that_is_not_a_number_gets_400(ui_server, length):
    port = ui_server.server_address[1]
    status, _, body = raw(ui_server, f"POST /api/unload HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                                     f"Content-Length: {length}\r\n\r\n{{}}".encode())
    assert status in (400, 413), body
    assert "Content-Length" in json.loads(body)["error"] or "too large" in json.loads(body)["error"]


def test_body_shorter_than_its_length_gets_400(ui_server):
    port = ui_server.server_address[1]
    with connect(ui_server) as sock:
        sock.sendall(f"POST /api/unload HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Length: 100\r\n\r\n{{}}".encode())
        sock.shutdown(socket.SHUT_WR)  # the client gives up after 2 of 100 bytes
        status, _, body = read_response(sock)
    assert status == 400 and "2 of 100 bytes" in json.loads(body)["error"]


@pytest.mark.parametrize("headers", [
    {"Origin": "http://evil.example"},
    {"Origin": "null"},
    {"Origin": "http://127.0.0.1:1"},  # another local port is another origin
    {"Origin": "https://localhost"},
    {"Sec-Fetch-Site": "cross-site"},
    {"Sec-Fetch-Site": "same-site"},
    {"Origin": "http://evil.example", "Sec-Fetch-Site": "same-origin"},
])
def test_state_changing_requests_from_another_origin_get_403(ui_server, headers):
    status, _, body = raw(ui_server, post(ui_server, "/api/load",
                                          json.dumps({"name": "profui-cpu-only", "source": "local"}).encode(),
                                          **headers))
    assert status == 403 and "cross-origin request refused" in json.loads(body)["error"], body
    assert ui_server.session.state == "empty", "nothing was loaded"


def test_the_apps_own_origin_may_post(ui_server):
    port = ui_server.server_address[1]
    for origin in (f"http://127.0.0.1:{port}", f"http://localhost:{port}"):
        status, _, body = raw(ui_server, post(ui_server, "/api/unload", b"{}", Origin=origin,
                                              Sec_Fetch_Site="same-origin"))
        assert status == 200 and json.loads(body)["state"] == "empty"


def test_no_cors_headers_for_any_origin(ui_server):
    port = ui_server.server_address[1]
    for request in (f"GET /api/jobs HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nOrigin: http://evil.example\r\n\r\n",
                    f"OPTIONS /api/load HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nOrigin: http://evil.example\r\n"
                    "Access-Control-Request-Method: POST\r\n\r\n"):
        status, headers, _ = raw(ui_server, request.encode())
        assert not any(h.startswith("access-control-") for h in headers), headers
        if request.startswith("OPTIONS"):
            assert status >= 400, "no preflight is ever granted"


TRAVERSALS = [
    "/static/..\\server.py", "/static/..%5cserver.py", "/static/%2e%2e%2fserver.py", "/static/%252e%252e/server.py",
    "/static/app.js/../../server.py", "/static/./../server.py", "/static//etc/passwd", "/static/app.js%00.py",
    "/static/%c0%ae%c0%ae/server.py", "/static/..;/server.py", "/static/....//server.py", "//etc/passwd",
    "/%2e%2e/%2e%2e/etc/passwd", "/static/APP.JS/..%2f..%2fserver.py", "/static/server.py", "/static/session.py",
    "/static/", "/static/index.html/../../../../etc/passwd", "/api/../server.py", "/./static/../server.py",
    "/static/..", "/static/app.js%2f..%2f..%2fserver.py",
]


@pytest.mark.parametrize("path", TRAVERSALS)
def test_traversal_variants_are_refused(ui_server, path):
    port = ui_server.server_address[1]
    status, _, body = raw(ui_server, f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
    assert status in (400, 404), (path, status)
    assert b"root:" not in body and b"import " not in body


def test_absolute_url_request_line_with_a_foreign_host_is_refused(ui_server):
    status, _, _ = raw(ui_server, b"GET http://evil.example/api/jobs HTTP/1.1\r\nHost: evil.example\r\n\r\n")
    assert status == 403


def test_idle_connections_are_closed_after_the_idle_timeout(profile_home):
    """A client that connects and sends nothing (or half a request) no longer holds a thread forever."""
    with serve_profile_browser(include_sagemaker=False, idle_timeout=0.5) as server:
        socks = [connect(server) for _ in range(3)]
        socks[1].sendall(b"GET /api/jobs HTTP/1.1\r\nHost: 127.0.0.1")  # half a request line, then silence
        socks[2].sendall(post(server, "/api/unload", b"{}")[:-2])  # all headers, half of the body
        try:
            for sock in socks:  # the server closes each one: recv returns b"" (or a 400), never times out
                data = b""
                while chunk := sock.recv(4096):
                    data += chunk
                assert data == b"" or data.startswith(b"HTTP/1.0 408") or data.startswith(b"HTTP/1.0 400"), data
        finally:
            for sock in socks:
                sock.close()
        assert all_slots_free(server, 32), "every handler thread let go of its connection"


def test_clients_trickling_their_requests_are_dropped_after_the_request_deadline(profile_home):
    """32 clients each sending one header byte per 0.2 s (never idle for the idle timeout) held every slot before;
    the request deadline covers the whole request, so their slots free and the next client is served."""
    with serve_profile_browser(include_sagemaker=False, request_timeout=1.0) as server:
        port = server.server_address[1]
        tricklers = [connect(server) for _ in range(32)]
        try:
            for sock in tricklers:
                sock.settimeout(0.2)  # the trickle's pace: a byte, then up to 0.2 s waiting for the server to close
                sock.sendall(b"GET /api/status HTTP/1.1\r\nHost: 127.0.0.1")
            end, open_ = time.monotonic() + DEADLINE_S, set(tricklers)
            while open_ and time.monotonic() < end:  # keep trickling until the server closes each one
                for sock in list(open_):
                    try:
                        sock.sendall(b"1")
                        if sock.recv(4096) == b"":
                            open_.discard(sock)
                    except TimeoutError:
                        continue
                    except (ConnectionResetError, BrokenPipeError):
                        open_.discard(sock)
            assert not open_, f"{len(open_)} trickling clients still hold a slot"
        finally:
            for sock in tricklers:
                sock.close()
        assert all_slots_free(server, 32)
        status, _, _ = raw(server, f"GET /api/status HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
        assert status == 200


def test_connections_beyond_the_limit_get_503_at_once(profile_home):
    with serve_profile_browser(include_sagemaker=False, max_connections=2) as server:
        port = server.server_address[1]
        held = [connect(server) for _ in range(2)]  # accepted first (the backlog is FIFO), each holds a slot
        try:
            for _ in range(2):
                status, _, body = raw(server, f"GET /api/status HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
                assert status == 503 and "too many open connections" in json.loads(body)["error"]
        finally:
            for sock in held:
                sock.close()
        assert all_slots_free(server, 2), "closing them frees their slots"
        status, _, _ = raw(server, f"GET /api/status HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
        assert status == 200


def test_a_second_server_on_a_busy_port_says_so_in_one_line(profile_home):
    """Before: AttributeError traceback from server_close() on a half-built server."""
    with serve_profile_browser(include_sagemaker=False) as server:
        port = server.server_address[1]
        code = "import sys; from sagelaunch.cli import main; sys.argv = ['sagelaunch', *sys.argv[1:]]; main()"
        env = {**os.environ, "SAGELAUNCH_HOME": str(profile_home["home"]), "PYTHONPATH": str(ROOT)}
        done = subprocess.run([sys.executable, "-c", code, "profile", "ui", "--port", str(port), "--no-sagemaker"],
                              cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done
    assert "Traceback" not in done.stderr and done.stdout == ""
    assert done.stderr.strip().splitlines() == [
        f"error: port {port} on 127.0.0.1 is in use (another profile browser or program listens there); "
        "fix: --port <another port>, or --port 0 to pick a free one"]


def test_a_client_that_resets_mid_response_is_dropped_without_a_traceback(profile_home, capfd):
    """plotly.min.js is megabytes: a client that resets the connection breaks the server's send half-way."""
    import struct

    with serve_profile_browser(include_sagemaker=False) as server:
        port = server.server_address[1]
        for _ in range(3):
            sock = socket.socket()
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # small window: the send cannot finish
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # close() sends RST
            sock.connect(("127.0.0.1", port))
            sock.sendall(f"GET /static/plotly.min.js HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
            assert sock.recv(1)  # the response has begun
            sock.close()
        assert all_slots_free(server, 32), "each broken send ended its thread"
    err = capfd.readouterr().err
    assert "Traceback" not in err and "ConnectionResetError" not in err and "BrokenPipeError" not in err, err
