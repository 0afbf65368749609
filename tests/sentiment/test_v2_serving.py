"""PyTorchModel / TensorFlowModel served the v2 way on 127.0.0.1: the repack under code/, the handler named by
entry_point, serializers and their headers over real HTTP (a torch-free echo handler), and the session's
sentiment model answering JSON, CSV and NumPy requests."""

from __future__ import annotations

import io
import json
import tarfile

import numpy as np
import pytest

from sagelaunch.estimators import PyTorchModel, TensorFlowModel
from sagelaunch.estimators.serializers import (CSVDeserializer, CSVSerializer, IdentitySerializer, JSONDeserializer,
                                    JSONSerializer, NumpyDeserializer, NumpySerializer, StringDeserializer)
from sagelaunch.launcher.common.package import archive_members, repack_model
from sagelaunch.launcher.common.predictors import LocalPredictor, PredictionError

ECHO = '''
import json
from helpers import describe       # a module of source_dir: code/ is on the import path
from util.util import VERSION      # a dependency: code/lib/<name>/ is importable too
def model_fn(model_dir, context=None):
    return VERSION
def input_fn(body, content_type, context=None):
    return body, content_type
def predict_fn(data, model, context=None):
    return data
def output_fn(prediction, accept, context=None):
    body, content_type = prediction
    if accept == "application/json" and content_type != "application/json":
        return json.dumps(describe(content_type, body)), accept
    return body, accept
'''


@pytest.fixture(scope="module")
def echo_files(tmp_path_factory):
    root = tmp_path_factory.mktemp("echo")
    with tarfile.open(root / "model.tar.gz", "w:gz") as tar:
        data = b"weights"
        info = tarfile.TarInfo("weights.bin")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    (root / "src").mkdir()
    (root / "src" / "serve.py").write_text(ECHO)
    (root / "src" / "helpers.py").write_text(
        "def describe(content_type, body):\n    return {'content_type': content_type, 'bytes': len(body)}\n")
    (root / "util").mkdir()
    (root / "util" / "util.py").write_text("VERSION = 'echo-1'\n")
    return root


@pytest.fixture(scope="module")
def echo(echo_files):
    model = PyTorchModel(str(echo_files / "model.tar.gz"), None, "serve.py", "2.0.0", "py310",
                         source_dir=str(echo_files / "src"), dependencies=[str(echo_files / "util")])
    predictor = model.deploy(1, "local")
    yield predictor
    predictor.delete()


def test_repack_lays_out_code_as_v2(echo_files, tmp_path):
    archive = repack_model(echo_files / "model.tar.gz", tmp_path / "model.tar.gz", entry_point="serve.py",
                           source_dir=echo_files / "src", dependencies=[str(echo_files / "util")])
    assert archive_members(archive) == ["code/helpers.py", "code/lib/util/util.py", "code/serve.py", "weights.bin"]
    alone = repack_model(echo_files / "model.tar.gz", tmp_path / "alone.tar.gz",
                         entry_point=str(echo_files / "src" / "serve.py"))
    assert archive_members(alone) == ["code/serve.py", "weights.bin"]
    with pytest.raises(ValueError, match="entry_point='nope.py' is not in source_dir"):
        repack_model(echo_files / "model.tar.gz", tmp_path / "x.tar.gz", entry_point="nope.py",
                     source_dir=echo_files / "src")


def test_pytorch_default_is_numpy_in_and_out_as_v2s_pytorch_predictor(echo):
    assert isinstance(echo, LocalPredictor)
    assert (echo.content_type, echo.accept) == ("application/x-npy", ("application/x-npy",))
    array = np.arange(6, dtype="float32").reshape(2, 3)
    assert echo.predict(array).tolist() == array.tolist()


def test_each_serializer_sends_its_content_type_and_accept(echo):
    echo.serializer, echo.deserializer = JSONSerializer(), JSONDeserializer()
    assert echo.predict({"inputs": ["a", "b"]}) == {"inputs": ["a", "b"]}
    echo.serializer = CSVSerializer()  # the handler reports what reached it
    assert echo.predict([[1, 2], [3, 4]]) == {"content_type": "text/csv", "bytes": 7}
    echo.deserializer = CSVDeserializer()
    assert echo.predict([[1, 2], [3, 4]]) == [["1", "2"], ["3", "4"]]
    echo.serializer, echo.deserializer = NumpySerializer(), JSONDeserializer()
    assert echo.predict([1.0])["content_type"] == "application/x-npy"
    # initial_args win over the serializer's headers, as in v2
    echo.serializer = IdentitySerializer()
    answer = echo.predict(b"x", initial_args={"ContentType": "application/x-custom"})
    assert answer == {"content_type": "application/x-custom", "bytes": 1}


def test_a_foreign_serializer_is_used_through_its_attributes(echo):
    class Upper:  # what sagemaker.serializers objects offer: CONTENT_TYPE and serialize
        CONTENT_TYPE = "text/plain"

        def serialize(self, data):
            return data.upper()

    echo.serializer, echo.deserializer = Upper(), StringDeserializer(accept="text/plain")
    assert echo.predict("shout") == "SHOUT"
    with pytest.raises(ValueError, match="TargetModel: not available on a local endpoint"):
        echo.predict("x", target_model="other.tar.gz")


def test_a_program_without_model_fn_gets_the_toolkits_default_which_names_what_it_needs(echo_files):
    # as SageMaker's PyTorch toolkit: no model_fn → the default loads a TorchScript model.pt, which this model lacks
    with pytest.raises(RuntimeError, match="defines no model_fn.*TorchScript model.pt.*define model_fn.*entry_point"):
        PyTorchModel(str(echo_files / "model.tar.gz"), entry_point="helpers.py", framework_version="2.0.0",
                     source_dir=str(echo_files / "src")).deploy(1, "local")


def test_what_cannot_be_served_here_is_refused_by_name(echo_files):
    with pytest.raises(RuntimeError, match="no saved_model.pb"):  # TF models are served locally: SavedModels only
        TensorFlowModel(str(echo_files / "model.tar.gz"), framework_version="2.13.0").deploy(1, "local")
    with pytest.raises(ValueError, match="needs framework_version"):
        TensorFlowModel(str(echo_files / "model.tar.gz"))
    with pytest.raises(ValueError, match="deploy needs instance_type"):
        PyTorchModel(str(echo_files / "model.tar.gz"), framework_version="2.0.0").deploy(1)


# ------------------------------------------------------------------ the sentiment model, three encodings
@pytest.fixture(scope="module")
def sentiment(sentiment_archive):
    predictor = PyTorchModel(str(sentiment_archive), framework_version="2.0.0", py_version="py310").deploy(
        1, "local", JSONSerializer(), JSONDeserializer())
    yield predictor
    predictor.delete()


TEXTS = ["Covid cases are increasing fast!", "I love it, amazing!"]


def test_sentiment_answers_json_csv_and_numpy(sentiment):
    labels = [r["label"] for r in sentiment.predict({"inputs": TEXTS})]
    assert labels == ["negative", "positive"]
    sentiment.serializer, sentiment.deserializer = CSVSerializer(), CSVDeserializer()
    rows = sentiment.predict(TEXTS)
    assert [r[0] for r in rows] == labels and all(0.0 < float(r[1]) <= 1.0 for r in rows)
    sentiment.serializer, sentiment.deserializer = NumpySerializer(), NumpyDeserializer()
    answer = sentiment.predict(np.array(TEXTS))
    assert answer["label"].tolist() == labels and answer.dtype.names == ("label", "score")
    with pytest.raises(PredictionError) as pickled:  # a dict through NumPy is a pickle: refused, not loaded
        sentiment.predict({"inputs": TEXTS})
    assert pickled.value.status == 400 and "not a .npy array of texts" in pickled.value.message
    sentiment.serializer, sentiment.deserializer = JSONSerializer(), JSONDeserializer()
