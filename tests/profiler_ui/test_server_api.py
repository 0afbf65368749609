"""The profile browser's HTTP API: listing and search, one profile at a time, and what it refuses."""

from __future__ import annotations

import http.client
import json
import time

import pytest

from tests.profiler_ui.conftest import SECRET, serve_profile_browser, trace


def request(server, method: str, path: str, body: bytes | None = None, host: str | None = None):
    port = server.server_address[1]
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    headers = {"Host": host or f"127.0.0.1:{port}"}
    if body is not None:
        headers["Content-Type"] = "application/json"
    conn.request(method, path, body=body, headers=headers)
    resp = conn.getresponse()
    data = resp.read()
    conn.close()
    return resp.status, data


def get_json(server, path: str):
    status, data = request(server, "GET", path)
    return status, json.loads(data)


def post_json(server, path: str, obj) -> tuple[int, dict]:
    status, data = request(server, "POST", path, json.dumps(obj).encode())
    return status, json.loads(data)


def wait_loaded(server, deadline_s: float = 60) -> dict:
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        _, s = get_json(server, "/api/status")
        if s["state"] in ("loaded", "error"):
            return s
        server.session.wait(0.05)
    raise AssertionError(f"profile did not load within {deadline_s}s: {s}")


def test_binds_loopback_only(ui_server):
    assert ui_server.server_address[0] == "127.0.0.1"


def test_lists_and_searches_local_jobs(ui_server):
    status, data = get_json(ui_server, "/api/jobs")
    assert status == 200
    names = {j["name"]: j for j in data["jobs"]}
    assert {"profui-resnet-v100", "profui-cpu-only", "profui-two-hosts", "profui-no-profile", "profui-escape"} <= set(names)
    assert names["profui-resnet-v100"]["has_profile"] and names["profui-two-hosts"]["has_profile"]
    assert not names["profui-no-profile"]["has_profile"]
    assert not names["profui-escape"]["has_profile"], "a symlink out of the job folder is not a profile"
    assert data["sources"]["sagemaker"].startswith("disabled")
    # newest first
    created = [j["created"] for j in data["jobs"]]
    assert created == sorted(created, reverse=True)

    _, data = get_json(ui_server, "/api/jobs?q=V100")
    assert [j["name"] for j in data["jobs"]] == ["profui-resnet-v100"]
    _, data = get_json(ui_server, "/api/jobs?status=Failed")
    assert [j["name"] for j in data["jobs"]] == ["profui-cpu-only"]
    _, data = get_json(ui_server, "/api/jobs?created_after=2026-03-03&created_before=2026-03-04")
    assert [j["name"] for j in data["jobs"]] == ["profui-no-profile", "profui-two-hosts"]
    status, data = get_json(ui_server, "/api/jobs?status=Done")
    assert status == 400 and "InProgress" in data["error"]
    status, data = get_json(ui_server, "/api/jobs?created_after=yesterday")
    assert status == 400 and "YYYY-MM-DD" in data["error"]


@pytest.mark.parametrize("name", ["../../etc/passwd", "a/b", "..", "x" * 64, "", "-lead", "job name", None, 7])
def test_rejects_names_that_are_not_job_names(ui_server, name):
    status, data = post_json(ui_server, "/api/load", {"name": name, "source": "local"})
    assert status == 400 and data["error"].startswith(f"job_name={name!r} ")
    assert ui_server.session.state == "empty"


def test_refuses_unknown_jobs_sources_and_files(ui_server):
    status, data = post_json(ui_server, "/api/load", {"name": "profui-nope", "source": "local"})
    assert status == 404
    status, data = post_json(ui_server, "/api/load", {"name": "profui-cpu-only", "source": "file:///etc"})
    assert status == 400 and "local, sagemaker" in data["error"]
    status, data = post_json(ui_server, "/api/load", {"name": "profui-escape", "source": "local"})
    assert status == 404 and "no profiler output" in data["error"]
    status, data = post_json(ui_server, "/api/load", {"name": "profui-no-profile", "source": "local"})
    assert status == 404
    for path in ("/static/../server.py", "/static/..%2Fserver.py", "/static/%2e%2e/%2e%2e/etc/passwd",
                 "/../../etc/passwd", "/static/sources.py", "/etc/passwd", "/api/file?path=/etc/passwd"):
        status, body = request(ui_server, "GET", path)
        assert status == 404, path
        assert b"root:" not in body and b"import" not in body
    status, _ = request(ui_server, "GET", "/api/jobs", host="evil.example:80")
    assert status == 403, "DNS-rebinding: a foreign Host header is refused"
    status, _ = request(ui_server, "POST", "/api/load", b"[1, 2]")
    assert status == 400
    status, _ = request(ui_server, "POST", "/api/load", b"x" * 5000)
    assert status == 413
    status, data = get_json(ui_server, "/api/dashboard")
    assert status == 409 and "no profile loaded" in data["error"]


def test_one_profile_at_a_time_with_progress(ui_server):
    session = ui_server.session
    status, data = post_json(ui_server, "/api/load", {"name": "profui-two-hosts", "source": "local"})
    assert status == 202 and data["state"] == "loading"
    status, data = post_json(ui_server, "/api/load", {"name": "profui-cpu-only", "source": "local"})
    assert status == 409 and "unload it" in data["error"]
    done = wait_loaded(ui_server)
    assert done["state"] == "loaded", done
    progress = [p for p, _ in session.history]
    assert progress == sorted(progress) and progress[-1] == 1.0 and len(set(progress)) >= 4
    assert any("reading sampled_rank1" in m for _, m in session.history)
    assert done["summary"]["ranks"] == [0, 1]

    status, tl = get_json(ui_server, "/api/timeline")
    assert status == 200 and tl["events"]["n"] == done["summary"]["events"]
    roots = [n["label"] for n in tl["tree"]]
    assert roots == ["algo-1", "algo-2"], "each rank under the host folder it came from"
    status, dash = get_json(ui_server, "/api/dashboard")
    assert status == 200 and dash["ranks"] == [0, 1]

    status, data = post_json(ui_server, "/api/load", {"name": "profui-cpu-only", "source": "local"})
    assert status == 409
    status, data = post_json(ui_server, "/api/unload", {})
    assert status == 200 and data["state"] == "empty"
    status, _ = get_json(ui_server, "/api/timeline")
    assert status == 409


def test_symlinked_trace_is_never_read(ui_server, profile_home):
    """Even inside a job that is otherwise loadable, a file linking outside the job is skipped."""
    job = profile_home["jobs"]["profui-cpu-only"] / "algo-1" / "output" / "profiler"
    link = job / "sneaky.pt.trace.json"
    link.symlink_to(profile_home["secret"])
    try:
        status, _ = post_json(ui_server, "/api/load", {"name": "profui-cpu-only", "source": "local"})
        assert status == 202
        assert wait_loaded(ui_server)["state"] == "loaded"
        _, body = request(ui_server, "GET", "/api/timeline")
        _, dash = request(ui_server, "GET", "/api/dashboard")
        assert SECRET.encode() not in body and SECRET.encode() not in dash
    finally:
        link.unlink()
        post_json(ui_server, "/api/unload", {})


def test_a_given_profile_is_listed_and_opened_again_by_name_never_by_path(profile_home):
    given = trace("cpu_only.pt.trace.json.gz")
    with serve_profile_browser(include_sagemaker=False) as server:
        server.open_path(given)
        assert wait_loaded(server)["state"] == "loaded"
        _, data = get_json(server, "/api/jobs")
        first = data["jobs"][0]  # the given profile comes first, then the jobs
        assert (first["name"], first["source"], first["has_profile"]) == (given.name, "path", True)
        assert "profui-resnet-v100" in [j["name"] for j in data["jobs"]]
        _, data = get_json(server, "/api/jobs?q=cpu_only")
        assert [j["name"] for j in data["jobs"]] == [given.name]
        post_json(server, "/api/unload", {})
        # the page names a listed entry; a path, or any other name, is refused without being read
        for name in ("../../etc/passwd", str(profile_home["secret"]), str(given), "profui-cpu-only", None, 7):
            status, data = post_json(server, "/api/load", {"name": name, "source": "path"})
            assert status == 404 and "given on the command line" in data["error"], name
        assert server.session.state == "empty"
        status, data = post_json(server, "/api/load", {"name": given.name, "source": "path"})
        assert status == 202
        done = wait_loaded(server)
        assert done["state"] == "loaded" and done["job"]["location"] == str(given.resolve())
