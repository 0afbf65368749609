"""The local model server answers no web page the user visits (issue 32): a POST carrying another site's Origin or
Sec-Fetch-Site cross-site/same-site is refused with 403 before the model runs, as the profile browser refuses it (one
rule: jobspec.browser_origin); API clients, which send neither header, and the server's own origin are unaffected.
The real server, real HTTP requests."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest

from sagelaunch.launcher.local.serving.endpoint import LocalEndpoint
from tests.sentiment.test_local_server_hostile import ECHO_MODEL

BODY = b'{"served": "echo"}'


@pytest.fixture(scope="module")
def endpoint(tmp_path_factory):
    import os

    saved = os.environ.get("SAGELAUNCH_HOME")
    os.environ["SAGELAUNCH_HOME"] = str(tmp_path_factory.mktemp("home"))
    endpoint = LocalEndpoint(ECHO_MODEL, "cross-site").start()
    yield endpoint
    endpoint.stop()
    if saved is None:
        os.environ.pop("SAGELAUNCH_HOME", None)
    else:
        os.environ["SAGELAUNCH_HOME"] = saved


def post(endpoint: LocalEndpoint, headers: dict[str, str], path: str = "/invocations") -> tuple[int, bytes]:
    request = urllib.request.Request(endpoint.url + path, data=BODY, method="POST",
                                     headers={"Content-Type": "application/json", **headers})
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status, answer.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


@pytest.mark.slow
@pytest.mark.parametrize("headers", [
    {"Origin": "https://evil.example"},
    {"Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"},
    {"Sec-Fetch-Site": "cross-site"},
    {"Sec-Fetch-Site": "same-site"},
    {"Origin": "null"},  # a sandboxed frame or a file:// page
    {"Origin": "http://127.0.0.1:1"},  # another local server's page
])
def test_a_cross_site_browser_request_is_refused_before_the_model_runs(endpoint, headers):
    status, body = post(endpoint, headers)
    assert status == 403, body
    error = json.loads(body)["error"]
    assert error.startswith(f"cross-origin request refused (Origin: {headers.get('Origin')}, Sec-Fetch-Site: "
                            f"{headers.get('Sec-Fetch-Site')})") and BODY not in body


@pytest.mark.slow
@pytest.mark.parametrize("headers", [
    {},  # curl, boto3, requests, the predictors
    {"Sec-Fetch-Site": "none"},  # typed into the address bar
    {"Sec-Fetch-Site": "same-origin"},
])
def test_api_clients_and_the_servers_own_origin_are_answered(endpoint, headers):
    assert post(endpoint, headers) == (200, BODY)
    assert post(endpoint, {"Origin": endpoint.url, **headers}) == (200, BODY)
    assert endpoint.invoke(BODY)[:2] == (200, BODY)
