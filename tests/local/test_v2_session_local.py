"""The v2 calls a notebook makes on a local endpoint: `sagemaker_session.delete_endpoint(name)` stops it (the
process is gone, the port answers no more), `predictor.delete_model()` leaves it serving, and local serving
accepts exactly the framework versions SageMaker deploy accepts (one catalog)."""

from __future__ import annotations

import urllib.error
import urllib.request

import pytest

from sagelaunch.estimators import PyTorchModel, Session
from sagelaunch.estimators.serializers import JSONDeserializer, JSONSerializer
from sagelaunch.launcher.local.serving.endpoint import running_endpoint
from tests.sentiment.test_v2_serving import echo_files  # noqa: F401  (the torch-free echo model, a fixture)


def _echo_model(files, version: str, py_version: str) -> PyTorchModel:
    return PyTorchModel(str(files / "model.tar.gz"), None, "serve.py", version, py_version,
                        source_dir=str(files / "src"), dependencies=[str(files / "util")])


@pytest.mark.slow
def test_session_delete_endpoint_stops_a_local_endpoint(echo_files, sagemaker_env):  # noqa: F811
    model = _echo_model(echo_files, "1.8.1", "py3")
    predictor = model.deploy(1, "local", JSONSerializer(), JSONDeserializer(), endpoint_name="nb-local-endpoint")
    endpoint = running_endpoint("nb-local-endpoint")
    assert endpoint is not None and endpoint.ping()
    url, process = endpoint.url, endpoint.process
    assert predictor.predict({"x": 1}) == {"x": 1}
    predictor.delete_model()  # nothing to delete locally: it keeps serving
    assert endpoint.ping()
    Session().delete_endpoint("nb-local-endpoint")
    assert running_endpoint("nb-local-endpoint") is None
    assert process.poll() is not None  # the server process ended
    with pytest.raises((urllib.error.URLError, ConnectionError)):
        urllib.request.urlopen(f"{url}/ping", timeout=5)


def test_local_serving_refuses_what_sagemaker_deploy_refuses(echo_files):  # noqa: F811
    model = _echo_model(echo_files, "2.7.1", "py312")
    with pytest.raises(ValueError, match=r"framework_version='2.7.1' has no pytorch inference image.*'2.6.0'"):
        model.deploy(1, "local")


@pytest.mark.slow
def test_a_local_endpoint_left_running_ends_with_the_notebook(echo_files, sagemaker_env, tmp_path):  # noqa: F811
    """The AWS getting-started notebooks clean up local mode with `docker container rm`, which cannot reach our
    server: when the notebook's kernel exits, its local endpoints stop with it instead of lingering."""
    import json
    import os
    import subprocess
    import sys

    from tests.fixtures.sdk_v2 import ROOT

    kernel = (f"from tests.local.test_v2_session_local import _echo_model\n"
              f"from sagelaunch.launcher.local.serving.endpoint import running_endpoint\n"
              f"from pathlib import Path\n"
              f"_echo_model(Path({str(echo_files)!r}), '1.8.1', 'py3').deploy(1, 'local', endpoint_name='left-running')\n"
              f"endpoint = running_endpoint('left-running')\n"
              f"print(__import__('json').dumps({{'pid': endpoint.process.pid, 'url': endpoint.url}}))\n")
    done = subprocess.run([sys.executable, "-c", kernel], capture_output=True, text=True, cwd=ROOT, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr[-3000:]
    server = json.loads(done.stdout.strip().splitlines()[-1])
    with pytest.raises(ProcessLookupError):
        os.kill(server["pid"], 0)  # the server process is gone (stopped and reaped at exit)
    with pytest.raises((urllib.error.URLError, ConnectionError)):
        urllib.request.urlopen(f"{server['url']}/ping", timeout=5)
