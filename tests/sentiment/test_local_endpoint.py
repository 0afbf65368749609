"""Model(...).deploy(instance_type="local"): the SageMaker serving contract on 127.0.0.1, over real HTTP."""

from __future__ import annotations

import json
import socket
import urllib.error
import urllib.request
from urllib.parse import urlparse

import pytest

from sagelaunch.estimators.model import Model
from sagelaunch.launcher.common.predictors import LocalPredictor, PredictionError

MAX_BODY = 256 * 1024  # above csv's 128 KiB field limit, so an oversized CSV field reaches the handler


@pytest.fixture(scope="module")
def predictor(sentiment_archive):
    predictor = Model(model_data=str(sentiment_archive)).deploy(instance_type="local", max_body_bytes=MAX_BODY)
    yield predictor
    predictor.delete()


def http(url: str, body: bytes | None = None, content_type: str = "application/json", method: str | None = None):
    request = urllib.request.Request(url, data=body, method=method or ("POST" if body is not None else "GET"),
                                     headers={"Content-Type": content_type})
    try:
        with urllib.request.urlopen(request, timeout=60) as answer:
            return answer.status, answer.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def test_ping_and_invocations_classify_text(predictor):
    assert isinstance(predictor, LocalPredictor) and predictor.url.startswith("http://127.0.0.1:")
    assert http(f"{predictor.url}/ping")[0] == 200
    status, body = http(f"{predictor.url}/invocations", json.dumps({"inputs": "Covid cases are increasing fast!"}).encode())
    assert status == 200
    [answer] = json.loads(body)
    assert answer["label"] == "negative" and 0.5 < answer["score"] <= 1.0
    batch = predictor.predict({"inputs": ["I love this new album, amazing!", "the meeting is scheduled for 3pm"]})
    assert [r["label"] for r in batch] == ["positive", "neutral"]
    long_text = predictor.predict({"inputs": "great day " * 500})  # longer than the model: truncated, not an error
    assert long_text[0]["label"] in ("negative", "neutral", "positive")


@pytest.mark.parametrize(
    ("body", "content_type", "status", "message"),
    [
        (b'{"inputs": "hi"}', "text/plain", 415, "content type 'text/plain' is not supported"),
        (b'{"inputs": "   "}', "application/json", 400, "text 0 is empty"),
        (b'{"inputs": []}', "application/json", 400, "empty list"),
        (b'{"text": "hi"}', "application/json", 400, 'no "inputs" key'),
        (b"{not json", "application/json", 400, "not valid JSON"),
        (b'{"inputs": "' + b"x" * MAX_BODY + b'"}', "application/json", 413, f"at most {MAX_BODY}"),
        (b'{"inputs": ' + b"[" * 100_000 + b"]" * 100_000 + b"}", "application/json", 400, "RecursionError"),
        (b'"' + b"x" * 140_000 + b'"', "text/csv", 400, "field larger than field limit"),
    ],
    ids=["content-type", "blank-text", "no-texts", "no-inputs-key", "bad-json", "oversized", "deep-json",
         "huge-csv-field"],
)
def test_bad_requests_get_4xx_with_a_message_and_serving_goes_on(predictor, body, content_type, status, message):
    got_status, got_body = http(f"{predictor.url}/invocations", body, content_type)
    assert got_status == status
    error = json.loads(got_body)
    assert message in error["error"] and error["status"] == status
    # the server is still there and still right
    assert http(f"{predictor.url}/ping")[0] == 200
    assert predictor.predict({"inputs": "this is the worst service ever, I hate it"})[0]["label"] == "negative"


@pytest.mark.parametrize("length", ["-5", "abc"])
def test_a_bad_content_length_gets_400_and_serving_goes_on(predictor, length):
    import http.client

    where = urlparse(predictor.url)
    conn = http.client.HTTPConnection(where.hostname, where.port, timeout=60)
    try:  # raw request: urllib would compute a correct Content-Length itself
        conn.putrequest("POST", "/invocations")
        conn.putheader("Content-Type", "application/json")
        conn.putheader("Content-Length", length)
        conn.endheaders()
        answer = conn.getresponse()
        error = json.loads(answer.read())
    finally:
        conn.close()
    assert answer.status == 400 and error["status"] == 400
    assert f"Content-Length {length!r} is not a byte count" in error["error"]
    assert predictor.predict({"inputs": "this is the worst service ever, I hate it"})[0]["label"] == "negative"


def test_unknown_routes_are_404(predictor):
    assert http(f"{predictor.url}/predict", b"{}")[0] == 404
    assert http(f"{predictor.url}/")[0] == 404


def test_predictor_raises_the_status_and_message(predictor):
    with pytest.raises(PredictionError) as caught:
        predictor.predict({"inputs": ""})
    assert caught.value.status == 400 and "empty" in caught.value.message


def test_model_folder_without_code_is_served_and_delete_frees_the_port(sentiment_model):
    predictor = Model(model_data=str(sentiment_model.model_dir)).deploy(instance_type="local")
    port = urlparse(predictor.url).port
    try:
        assert predictor.predict({"inputs": "Covid cases are increasing fast!"})[0]["label"] == "negative"
    finally:
        predictor.delete()
    with pytest.raises(OSError), socket.create_connection(("127.0.0.1", port), timeout=2):
        pass
    with pytest.raises(RuntimeError, match="not running"):
        predictor.predict({"inputs": "hello"})


def test_deploy_arguments_are_checked_before_anything_starts(sentiment_archive):
    with pytest.raises(ValueError, match="initial_instance_count=0"):
        Model(model_data=str(sentiment_archive)).deploy(instance_type="local", initial_instance_count=0)
    with pytest.raises(ValueError, match="endpoint_name='bad_name!'"):
        Model(model_data=str(sentiment_archive)).deploy(instance_type="local", endpoint_name="bad_name!")
    with pytest.raises(ValueError, match="model_data='ftp://x'"):
        Model(model_data="ftp://x")
