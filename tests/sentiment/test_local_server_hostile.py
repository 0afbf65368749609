"""The local model server against hostile and careless clients, on 127.0.0.1 over real sockets.

Each test starts a real server process (launcher.local.serving.server) through LocalEndpoint, serving
tests/data/serving/echo_model (a handler that answers its JSON input: these tests are about HTTP, not the model).
Waits poll with a deadline; nothing sleeps to synchronise.
"""

from __future__ import annotations

import json
import resource
import socket
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import psutil
import pytest

from sagelaunch.launcher.local.serving.endpoint import LocalEndpoint
from sagelaunch.launcher.local.serving.server import ServerLimits

ECHO_MODEL = Path(__file__).resolve().parents[1] / "data" / "serving" / "echo_model"
HEADER_TIMEOUT_S = BODY_TIMEOUT_S = 1.0  # short, so that the tests see slow and idle clients dropped
DEADLINE_S = 30.0  # the most any poll below waits on a loaded 2-core machine


@pytest.fixture
def endpoint(tmp_path, monkeypatch):
    monkeypatch.setenv("SAGELAUNCH_HOME", str(tmp_path / "home"))
    endpoint = LocalEndpoint(ECHO_MODEL, "hostile", limits=ServerLimits(header_timeout=HEADER_TIMEOUT_S,
                                                                            body_timeout=BODY_TIMEOUT_S)).start()
    yield endpoint
    endpoint.stop()


@pytest.fixture
def patient_endpoint(tmp_path, monkeypatch):
    """The server's default limits: a body may take 60 s to arrive."""
    monkeypatch.setenv("SAGELAUNCH_HOME", str(tmp_path / "home"))
    endpoint = LocalEndpoint(ECHO_MODEL, "patient").start()
    yield endpoint
    endpoint.stop()


def address(endpoint: LocalEndpoint) -> tuple[str, int]:
    host, port = endpoint.url.removeprefix("http://").split(":")
    return host, int(port)


def raw_exchange(endpoint: LocalEndpoint, request: bytes) -> bytes:
    """Send bytes as they are; the whole answer, until the server closes or answers in full."""
    with socket.create_connection(address(endpoint), timeout=DEADLINE_S) as sock:
        sock.sendall(request)
        answer = b""
        try:
            while chunk := sock.recv(65536):
                answer += chunk
                head, _, body = answer.partition(b"\r\n\r\n")
                length = [int(line.split(b":")[1]) for line in head.split(b"\r\n")
                          if line.lower().startswith(b"content-length")]
                if length and len(body) >= length[0]:
                    break
        except ConnectionResetError:  # closed with our bytes unread: what arrived before is the answer
            pass
        return answer


def status_of(answer: bytes) -> int:
    return int(answer.split(b" ", 2)[1])


def wait_closed_by_server(sock: socket.socket, deadline: float, trickle: bytes = b"") -> bool:
    """True once the server closed `sock`; sends one `trickle` byte per wait, like a slow-loris client."""
    sock.settimeout(0.2)
    while time.monotonic() < deadline:
        try:
            if trickle:
                sock.sendall(trickle)
            if sock.recv(4096) == b"":
                return True
        except TimeoutError:
            continue
        except (ConnectionResetError, BrokenPipeError):
            return True
    return False


def test_a_burst_of_50_concurrent_predicts_is_all_answered(endpoint):
    def predict(i: int):
        return endpoint.invoke(json.dumps({"i": i}).encode(), timeout=DEADLINE_S)

    with ThreadPoolExecutor(50) as pool:
        answers = list(pool.map(predict, range(50)))
    assert [(status, json.loads(body)) for status, body, _ in answers] == [(200, {"i": i}) for i in range(50)]


def test_a_client_trickling_its_headers_is_dropped_after_the_header_deadline(endpoint):
    """One byte every 0.2 s keeps the connection active; only a deadline on the whole header frees the slot."""
    tricklers = [socket.create_connection(address(endpoint)) for _ in range(8)]
    try:
        for sock in tricklers:
            sock.sendall(b"POST /invocations HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        started = time.monotonic()
        assert all(wait_closed_by_server(sock, started + DEADLINE_S, trickle=b"X") for sock in tricklers)
        assert endpoint.invoke(b'{"still": "serving"}')[:2] == (200, b'{"still": "serving"}')
    finally:
        for sock in tricklers:
            sock.close()


def test_a_client_trickling_its_body_is_dropped_after_the_body_deadline(endpoint):
    port = address(endpoint)[1]
    with socket.create_connection(address(endpoint)) as sock:
        sock.sendall(f"POST /invocations HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
                     f"Content-Length: 100000\r\n\r\n".encode())
        assert wait_closed_by_server(sock, time.monotonic() + DEADLINE_S, trickle=b" ")
    assert endpoint.invoke(b'{"still": "serving"}')[:2] == (200, b'{"still": "serving"}')


def test_1024_idle_connections_do_not_lock_out_a_request_and_are_closed(endpoint):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < 1200:  # this test holds 1,024 sockets of its own
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(2048, hard), hard))
    idle = [socket.create_connection(address(endpoint)) for _ in range(1024)]
    try:
        assert endpoint.invoke(b'{"while": "1024 idle"}')[:2] == (200, b'{"while": "1024 idle"}')
        deadline = time.monotonic() + DEADLINE_S
        assert all(wait_closed_by_server(sock, deadline) for sock in idle)
    finally:
        for sock in idle:
            sock.close()


@pytest.mark.parametrize("host", ["evil.example:80", "127.0.0.1:1", "attacker.test"])
def test_a_foreign_host_header_is_refused(endpoint, host):
    answer = raw_exchange(endpoint, f"GET /ping HTTP/1.1\r\nHost: {host}\r\n\r\n".encode())
    assert status_of(answer) == 403 and b"is not served" in answer


def test_localhost_with_the_port_is_served(endpoint):
    port = address(endpoint)[1]
    for host in (f"localhost:{port}", f"127.0.0.1:{port}"):
        assert status_of(raw_exchange(endpoint, f"GET /ping HTTP/1.1\r\nHost: {host}\r\n\r\n".encode())) == 200


@pytest.mark.parametrize(
    ("request_bytes", "status"),
    [
        (b"POST /invocations HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n\r\n", 411),
        (b"POST /invocations HTTP/1.1\r\nHost: {host}\r\nContent-Length: 12x\r\n\r\n", 400),
        (b"POST /invocations HTTP/1.1\r\nHost: {host}\r\nContent-Length: 999999999999\r\n\r\n", 413),
        (b"POST /invocations HTTP/1.1\r\nHost: {host}\r\nContent-Length: 4\r\n\r\n{not", 400),
        (b"NOT-HTTP\r\n\r\n", 400),
        (b"GET /invocations HTTP/1.1\r\nHost: {host}\r\n\r\n", 405),
        (b"POST /predict HTTP/1.1\r\nHost: {host}\r\nContent-Length: 2\r\n\r\n{}", 404),
    ],
    ids=["no-length", "bad-length", "huge-length", "bad-json", "not-http", "wrong-method", "wrong-path"],
)
def test_malformed_requests_get_4xx_and_serving_goes_on(endpoint, request_bytes, status):
    port = address(endpoint)[1]
    answer = raw_exchange(endpoint, request_bytes.replace(b"{host}", f"127.0.0.1:{port}".encode()))
    assert status_of(answer) == status
    assert endpoint.invoke(b'{"after": 1}')[:2] == (200, b'{"after": 1}')


def test_a_header_block_over_64_kib_is_cut_off_and_serving_goes_on(endpoint):
    """tornado stops reading at the header limit and closes the connection (it has no 431 to send)."""
    port = address(endpoint)[1]
    answer = raw_exchange(endpoint, f"GET /ping HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nX-Big: {'a' * 70_000}\r\n\r\n"
                          .encode())
    assert answer == b""
    assert endpoint.invoke(b'{"after": 1}')[:2] == (200, b'{"after": 1}')


def spooled_bytes(process: psutil.Process, folder: Path) -> int:
    """The size of the files `process` holds open in `folder` (spool files have no name there: /proc tells)."""
    import os

    total = 0
    for fd in os.listdir(f"/proc/{process.pid}/fd"):
        try:
            if os.readlink(f"/proc/{process.pid}/fd/{fd}").startswith(str(folder)):
                total += os.stat(f"/proc/{process.pid}/fd/{fd}").st_size
        except OSError:
            continue
    return total


def test_memory_does_not_grow_with_each_concurrent_body(patient_endpoint):
    """20 clients each 4 MB into a 5 MB body: the server spools them, it does not hold 80 MB."""
    endpoint = patient_endpoint
    server = psutil.Process(endpoint.process.pid)
    before = server.memory_info().rss
    body_size, sent = 5 * 1024 * 1024, 4 * 1024 * 1024
    port = address(endpoint)[1]
    clients = []
    try:
        for _ in range(20):
            sock = socket.create_connection(address(endpoint))
            sock.sendall(f"POST /invocations HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
                         f"Content-Length: {body_size}\r\n\r\n".encode() + b" " * sent)
            clients.append(sock)
        # the bodies have reached the server once its spool files (unnamed files in its folder) hold them
        spooled = lambda: spooled_bytes(server, endpoint.workdir)  # noqa: E731
        deadline = time.monotonic() + DEADLINE_S
        while spooled() < 20 * (sent - 1024 * 1024) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert spooled() >= 20 * (sent - 1024 * 1024)
        grown = server.memory_info().rss - before
        assert grown < 20 * 1024 * 1024, f"the server grew by {grown / 2**20:.0f} MiB for 20 bodies of 5 MiB"
    finally:
        for sock in clients:
            sock.close()
    assert endpoint.invoke(b'{"after": "bodies"}')[0] == 200


def test_connections_beyond_the_limit_get_503_at_once_and_closing_them_frees_their_places(tmp_path, monkeypatch):
    monkeypatch.setenv("SAGELAUNCH_HOME", str(tmp_path / "home"))
    endpoint = LocalEndpoint(ECHO_MODEL, "four", limits=ServerLimits(max_connections=4)).start()
    try:
        port = address(endpoint)[1]
        held = [socket.create_connection(address(endpoint)) for _ in range(4)]  # accepted first: the backlog is FIFO
        try:
            answer = raw_exchange(endpoint, f"GET /ping HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
            assert status_of(answer) == 503 and b"too many open connections" in answer
        finally:
            for sock in held:
                sock.close()
        deadline = time.monotonic() + DEADLINE_S  # the server sees the closes as it reads them: poll
        while status_of(raw_exchange(endpoint, f"GET /ping HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())) \
                != 200 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert endpoint.invoke(b'{"after": "503"}')[:2] == (200, b'{"after": "503"}')
    finally:
        endpoint.stop()
