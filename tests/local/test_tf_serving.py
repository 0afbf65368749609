"""TensorFlowModel(...).deploy(1, "local"): a SavedModel answering /invocations as SageMaker's TensorFlow Serving
container does (its request rewriting, TF Serving's row and columnar formats, the highest version served). The
oracle is the model's arithmetic in NumPy: the SavedModel computes x @ W + b with known weights."""

from __future__ import annotations

import json
import tarfile

import numpy as np
import pytest

from sagelaunch.estimators import TensorFlowModel
from sagelaunch.estimators.serializers import CSVSerializer, JSONDeserializer, JSONSerializer
from sagelaunch.launcher.common.predictors import PredictionError
from sagelaunch.launcher.local.serving.tf_serving import UnsupportedMediaType, container_handlers, find_saved_model, tfs_request

W = np.array([[1.0, -2.0], [0.5, 3.0], [-1.5, 0.25]], dtype=np.float32)
B = np.array([0.1, -0.2], dtype=np.float32)
ROWS = [[1.0, 2.0, 3.0], [-4.0, 0.5, 6.0]]


def _save(folder, scale: float) -> None:
    """A SavedModel with serving_default (x → scores) and "pair" (a, b → sum, product)."""
    import tensorflow as tf

    class Affine(tf.Module):
        def __init__(self):
            super().__init__()
            self.w, self.b = tf.Variable(W * scale), tf.Variable(B * scale)

        @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32, name="x")])
        def serve(self, x):
            return {"scores": tf.matmul(x, self.w) + self.b}

        @tf.function(input_signature=[tf.TensorSpec([None], tf.float32, name="a"),
                                      tf.TensorSpec([None], tf.float32, name="b")])
        def pair(self, a, b):
            return {"sum": a + b, "product": a * b}

    module = Affine()
    tf.saved_model.save(module, str(folder), signatures={"serving_default": module.serve, "pair": module.pair})


@pytest.fixture(scope="module")
def tf_archive(tmp_path_factory):
    root = tmp_path_factory.mktemp("tf-model")
    _save(root / "model" / "1", scale=100.0)  # an older version: TF Serving serves the highest
    _save(root / "model" / "2", scale=1.0)
    archive = root / "model.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(root / "model", arcname=".")
    return archive


@pytest.fixture(scope="module")
def tf_predictor(tf_archive):
    predictor = TensorFlowModel(str(tf_archive), framework_version="2.13.0").deploy(1, "local")
    yield predictor
    predictor.delete_endpoint()


def _expected(rows) -> list:
    return (np.array(rows, dtype=np.float32) @ W + B).tolist()


@pytest.mark.slow
def test_tfs_row_format_and_the_containers_json_rewrites(tf_predictor):
    assert isinstance(tf_predictor.serializer, JSONSerializer)  # v2's TensorFlowPredictor: JSON both ways
    for body in ({"instances": ROWS}, ROWS):  # a bare list of rows becomes {"instances": rows}
        np.testing.assert_allclose(tf_predictor.predict(body)["predictions"], _expected(ROWS), rtol=1e-6)
    single = tf_predictor.predict(ROWS[0])  # one row is wrapped into a batch of one
    np.testing.assert_allclose(single["predictions"], _expected(ROWS[:1]), rtol=1e-6)
    named = tf_predictor.predict({"instances": [{"a": 2.0, "b": 3.0}, {"a": -1.0, "b": 4.0}],
                                  "signature_name": "pair"})
    assert named == {"predictions": [{"product": 6.0, "sum": 5.0}, {"product": -4.0, "sum": 3.0}]}


@pytest.mark.slow
def test_tfs_columnar_format_csv_and_refusals(tf_predictor):
    columnar = tf_predictor.predict({"inputs": ROWS})
    np.testing.assert_allclose(columnar["outputs"], _expected(ROWS), rtol=1e-6)
    both = tf_predictor.predict({"inputs": {"a": [1.0, 2.0], "b": [3.0, 4.0]}, "signature_name": "pair"})
    assert both == {"outputs": {"product": [3.0, 8.0], "sum": [4.0, 6.0]}}

    saved = tf_predictor.serializer
    tf_predictor.serializer = CSVSerializer()
    try:
        np.testing.assert_allclose(tf_predictor.predict(ROWS)["predictions"], _expected(ROWS), rtol=1e-6)
    finally:
        tf_predictor.serializer = saved
    with pytest.raises(PredictionError, match="400.*input 'x'.*float32"):
        tf_predictor.predict({"instances": [["a", "b", "c"]]})
    with pytest.raises(PredictionError, match="400.*signature_name='nope' is not in the model"):
        tf_predictor.predict({"instances": ROWS, "signature_name": "nope"})
    with pytest.raises(PredictionError, match="400.*classify/regress"):
        tf_predictor.predict({"examples": [{"x": 1}]})


def test_the_containers_request_rewriting():
    assert tfs_request(b'{"instances": [1]}', "application/json") == {"instances": [1]}
    assert tfs_request(b"[[1, 2], [3, 4]]", "application/json") == {"instances": [[1, 2], [3, 4]]}
    assert tfs_request(b"[1, 2]", "application/json") == {"instances": [[1, 2]]}
    assert tfs_request(b'{"x": 1}\n{"x": 2}', "application/jsonlines") == {"instances": [{"x": 1}, {"x": 2}]}
    assert tfs_request(b"1.5,2,3e1\n4,5,6\n", "text/csv") == {"instances": [[1.5, 2, 30.0], [4, 5, 6]]}
    assert tfs_request(b"7\n8", "text/csv") == {"instances": [7, 8]}
    with pytest.raises(UnsupportedMediaType, match="'application/x-npy' is not supported"):
        tfs_request(b"\x93NUMPY", "application/x-npy")


def test_the_served_version_and_what_cannot_be_served_here(tmp_path):
    for name in ("1", "10", "9"):
        (tmp_path / "m" / "export" / "Servo" / name).mkdir(parents=True)
        (tmp_path / "m" / "export" / "Servo" / name / "saved_model.pb").write_bytes(b"")
    assert find_saved_model(tmp_path / "m").name == "10"
    (tmp_path / "m" / "other" / "1").mkdir(parents=True)
    (tmp_path / "m" / "other" / "1" / "saved_model.pb").write_bytes(b"")
    with pytest.raises(ValueError, match="several SavedModels.*multi-model"):
        find_saved_model(tmp_path / "m")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match="no saved_model.pb.*tf.saved_model.save"):
        find_saved_model(tmp_path / "empty")
    (tmp_path / "m" / "code" / "1").mkdir(parents=True)  # code/ never holds the model
    (tmp_path / "m" / "code" / "1" / "saved_model.pb").write_bytes(b"")
    (tmp_path / "m" / "other" / "1" / "saved_model.pb").unlink()
    assert find_saved_model(tmp_path / "m").name == "10"


# input_handler / output_handler as the TF Serving container's README shows them (CSV rows → instances)
HANDLERS = '''
import json

def input_handler(data, context):
    if context.request_content_type == "text/csv":
        rows = data.read().decode("utf-8").strip().splitlines()
        return json.dumps({"instances": [[float(v) for v in row.split(",")] for row in rows]})
    if context.request_content_type == "application/json":
        return data.read().decode("utf-8")
    raise ValueError("unsupported content type " + context.request_content_type)

def output_handler(data, context):
    if data.status_code != 200:
        raise ValueError(data.content.decode("utf-8"))
    return json.dumps({"scores": data.json()["predictions"], "accept": context.accept_header}), "application/json"
'''


@pytest.mark.slow
def test_an_inference_py_runs_around_the_model_as_in_the_container(tf_archive, tmp_path):
    (tmp_path / "inference.py").write_text(HANDLERS)
    predictor = TensorFlowModel(str(tf_archive), entry_point=str(tmp_path / "inference.py"),
                                framework_version="2.13.0").deploy(1, "local", CSVSerializer(), JSONDeserializer())
    try:
        answer = predictor.predict(ROWS)
        np.testing.assert_allclose(answer["scores"], _expected(ROWS), rtol=1e-6)
        assert answer["accept"] == "application/json"
        predictor.serializer = JSONSerializer()  # TF Serving's 400 reaches output_handler, which raises: a 500
        with pytest.raises(PredictionError, match="500.*inference.py failed.*signature_name='nope'"):
            predictor.predict({"instances": ROWS, "signature_name": "nope"})
    finally:
        predictor.delete_endpoint()


def test_tensorflow_entry_points_the_container_would_not_run_are_refused_by_name(tmp_path):
    with tarfile.open(tmp_path / "model.tar.gz", "w:gz"):
        pass
    (tmp_path / "serve.py").write_text(HANDLERS)
    with pytest.raises(ValueError, match="entry_point=.*serve.py.*only runs code/inference.py.*name it inference.py"):
        TensorFlowModel(str(tmp_path / "model.tar.gz"), entry_point=str(tmp_path / "serve.py"),
                        framework_version="2.13.0").deploy(1, "local")
    (tmp_path / "code").mkdir()
    (tmp_path / "code" / "inference.py").write_text("def handler(data, context):\n    return b'', 'x'\n")
    with pytest.raises(ValueError, match="defines handler.*TF Serving's REST port.*input_handler and output_handler"):
        container_handlers(tmp_path)
    (tmp_path / "code" / "inference.py").write_text("def input_handler(data, context):\n    return ''\n")
    with pytest.raises(ValueError, match="neither handler nor input_handler \\+ output_handler"):
        container_handlers(tmp_path)
