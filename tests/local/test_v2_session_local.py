"""The v2 calls a notebook makes on a local endpoint: `sagemaker_session.delete_endpoint(name)` stops it (the
process is gone, the port answers no more), `predictor.delete_model()` leaves it serving, and local serving
accepts exactly the framework versions SageMaker deploy accepts (one catalog)."""

from __future__ import annotations

import io
import tarfile
import urllib.error
import urllib.request

import pytest

from estimators import PyTorchModel, Session
from estimators.serializers import JSONDeserializer, JSONSerializer
from launcher.deploy.local_endpoint import running_endpoint

HANDLER = '''
def model_fn(model_dir, context=None):
    return "echo"
def input_fn(body, content_type, context=None):
    return body
def predict_fn(data, model, context=None):
    return data
def output_fn(prediction, accept, context=None):
    return prediction, "application/json"
'''


@pytest.fixture
def archive(tmp_path):
    with tarfile.open(tmp_path / "model.tar.gz", "w:gz") as tar:
        data = b"weights"
        info = tarfile.TarInfo("weights.bin")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "serve.py").write_text(HANDLER)
    return tmp_path


@pytest.mark.slow
def test_session_delete_endpoint_stops_a_local_endpoint(archive, sagemaker_env):
    model = PyTorchModel(str(archive / "model.tar.gz"), None, "serve.py", "1.8.1", "py3",
                         source_dir=str(archive / "src"))
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


def test_local_serving_refuses_what_sagemaker_deploy_refuses(archive):
    model = PyTorchModel(str(archive / "model.tar.gz"), None, "serve.py", "2.7.1", "py312",
                         source_dir=str(archive / "src"))
    with pytest.raises(ValueError, match=r"framework_version='2.7.1' has no pytorch inference image.*'2.6.0'"):
        model.deploy(1, "local")
