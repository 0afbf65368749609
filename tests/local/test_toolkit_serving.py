"""Local PyTorch serving with the SageMaker PyTorch serving toolkit's defaults: a handler that defines only model_fn
(the AWS MNIST example, unchanged), a model with no handler at all (TorchScript model.pt), transform_fn, and the
content types NumPy, JSON and CSV in and out. The oracle is the model itself, called in eval mode under no_grad."""

from __future__ import annotations

import importlib.util
import io
import json
import sys
import tarfile
from pathlib import Path

import numpy as np
import pytest
import torch

from sagelaunch.estimators import PyTorchModel
from sagelaunch.estimators.serializers import (CSVDeserializer, CSVSerializer, JSONDeserializer, JSONSerializer,
                                    NumpyDeserializer)
from sagelaunch.launcher.local.serving.handler import InvocationFailed, ModelHandler
from sagelaunch.launcher.common.predictors import PredictionError

MNIST_DIR = Path(__file__).parents[1] / "data" / "sagemaker_examples" / "pytorch_mnist"


def _tar(folder: Path, archive: Path) -> Path:
    with tarfile.open(archive, "w:gz") as tar:
        for path in sorted(folder.rglob("*")):
            tar.add(path, arcname=str(path.relative_to(folder)))
    return archive


@pytest.fixture(scope="module")
def torchvision_stand_in(tmp_path_factory) -> list[str]:
    """mnist.py imports torchvision's datasets/transforms for training only; where torchvision is absent the
    endpoint gets a folder with those two names (as a `dependencies=` entry, so it lands in code/lib)."""
    if importlib.util.find_spec("torchvision") is not None:
        return []
    folder = tmp_path_factory.mktemp("deps") / "torchvision"
    folder.mkdir()
    (folder / "__init__.py").write_text("datasets = transforms = None  # mnist.py uses them to train only\n")
    return [str(folder)]


@pytest.fixture(scope="module")
def mnist(tmp_path_factory, torchvision_stand_in):
    """(the example's Net with saved weights, model.tar.gz holding model.pth as the example's save_model writes)."""
    for folder in torchvision_stand_in:
        sys.path.insert(0, str(Path(folder).parent))
    try:
        spec = importlib.util.spec_from_file_location("aws_mnist_example", MNIST_DIR / "mnist.py")
        example = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(example)
    finally:
        for folder in torchvision_stand_in:
            sys.path.remove(str(Path(folder).parent))
            sys.modules.pop("torchvision", None)
    torch.manual_seed(0)
    model = torch.nn.DataParallel(example.Net())
    root = tmp_path_factory.mktemp("mnist")
    (root / "model").mkdir()
    example.save_model(model, str(root / "model"))
    return model.eval(), _tar(root / "model", root / "model.tar.gz")


@pytest.fixture(scope="module")
def mnist_predictor(mnist, torchvision_stand_in):
    _, archive = mnist
    predictor = PyTorchModel(str(archive), None, "mnist.py", "2.0.0", "py310", source_dir=str(MNIST_DIR),
                             dependencies=torchvision_stand_in).deploy(1, "local")
    yield predictor
    predictor.delete_endpoint()


def _expected(model, images: np.ndarray) -> np.ndarray:
    with torch.no_grad():
        return model(torch.from_numpy(images)).numpy()


@pytest.mark.slow
def test_a_handler_with_only_model_fn_answers_numpy_and_json(mnist, mnist_predictor):
    model, _ = mnist
    images = np.random.default_rng(0).random((3, 1, 28, 28), dtype=np.float32)
    answer = mnist_predictor.predict(images)  # v2's PyTorchPredictor: NumPy in and out
    assert answer.shape == (3, 10)
    np.testing.assert_allclose(answer, _expected(model, images), rtol=1e-5, atol=1e-6)

    numpy_pair = mnist_predictor.serializer, mnist_predictor.deserializer
    mnist_predictor.serializer, mnist_predictor.deserializer = JSONSerializer(), JSONDeserializer()
    try:
        answer = mnist_predictor.predict(images.tolist())
    finally:
        mnist_predictor.serializer, mnist_predictor.deserializer = numpy_pair
    np.testing.assert_allclose(np.array(answer), _expected(model, images), rtol=1e-5, atol=1e-5)


@pytest.fixture(scope="module")
def torchscript_archive(tmp_path_factory) -> tuple[torch.nn.Module, Path]:
    torch.manual_seed(1)
    model = torch.jit.script(torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.Tanh()))
    root = tmp_path_factory.mktemp("torchscript")
    (root / "model").mkdir()
    torch.jit.save(model, str(root / "model" / "model.pt"))
    return model, _tar(root / "model", root / "model.tar.gz")


@pytest.mark.slow
def test_a_model_without_a_handler_is_served_by_the_default_model_fn(torchscript_archive):
    model, archive = torchscript_archive
    rows = [[1.0, 2.0, 3.0], [-4.0, 0.5, 6.0]]
    with torch.no_grad():
        expected = model(torch.tensor(rows)).numpy()
    predictor = PyTorchModel(str(archive), framework_version="2.0.0", py_version="py310").deploy(
        1, "local", CSVSerializer(), CSVDeserializer())
    try:
        answer = predictor.predict(rows)
        np.testing.assert_allclose(np.array(answer, dtype=float), expected, rtol=1e-6)
        predictor.deserializer = NumpyDeserializer()  # CSV in, NPY out: Accept picks the encoding
        np.testing.assert_allclose(predictor.predict(rows), expected, rtol=1e-6)
        predictor.serializer = CSVSerializer(content_type="text/plain")
        with pytest.raises(PredictionError, match="415.*'text/plain' is not supported by the default handlers"):
            predictor.predict(rows)
    finally:
        predictor.delete_endpoint()


# ------------------------------------------------------------------ in process: the handler's dispatch
@pytest.fixture
def torchscript_folder(torchscript_archive, tmp_path) -> Path:
    with tarfile.open(torchscript_archive[1]) as tar:
        tar.extractall(tmp_path / "model", filter="data")
    return tmp_path / "model"


def _with_code(folder: Path, source: str) -> Path:
    (folder / "code").mkdir()
    (folder / "code" / "inference.py").write_text(source)
    return folder


def test_defaults_decode_each_type_and_encode_by_accept(torchscript_archive, torchscript_folder):
    model, _ = torchscript_archive
    handler = ModelHandler(torchscript_folder)
    rows = np.array([[0.5, -1.0, 2.0]], dtype=np.float32)
    with torch.no_grad():
        expected = model(torch.from_numpy(rows)).numpy()
    npy = io.BytesIO()
    np.save(npy, rows)
    for body, content_type in ((npy.getvalue(), "application/x-npy"), (json.dumps(rows.tolist()).encode(),
                                "application/json"), (b"0.5,-1.0,2.0\n0.5,-1.0,2.0", "text/csv")):
        answer, answer_type = handler.invoke(body, content_type, "application/json")
        assert answer_type == "application/json"
        np.testing.assert_allclose(np.array(json.loads(answer)).reshape(-1, 2)[0], expected[0], rtol=1e-6)
    answer, answer_type = handler.invoke(npy.getvalue(), "application/x-npy", "image/png, text/csv")
    assert answer_type == "text/csv"  # the first Accept type the defaults can encode
    np.testing.assert_allclose(np.loadtxt(io.StringIO(answer.decode()), delimiter=","), expected[0], rtol=1e-6)
    answer, answer_type = handler.invoke(npy.getvalue(), "application/x-npy", "*/*")
    assert answer_type == "application/json"
    with pytest.raises(InvocationFailed) as refused:
        handler.invoke(npy.getvalue(), "application/x-npy", "image/png")
    assert refused.value.status == 415 and "Accept 'image/png'" in refused.value.message
    with pytest.raises(InvocationFailed) as malformed:
        handler.invoke(b"[1, 2", "application/json", None)
    assert malformed.value.status == 400


def test_partial_handlers_mix_with_the_defaults_and_get_the_context_they_ask_for(torchscript_folder):
    # input_fn of its own (with the context parameter the toolkit fills), the default predict_fn and output_fn
    _with_code(torchscript_folder, "import torch\n"
               "def input_fn(body, content_type, context):\n"
               "    assert context is None and isinstance(body, str)  # JSON arrives as text, as in the toolkit\n"
               "    return torch.tensor([[float(v) for v in body.split('|')]])\n")
    handler = ModelHandler(torchscript_folder)
    answer, _ = handler.invoke(b"1|2|3", "application/json", "application/json")
    assert np.array(json.loads(answer)).shape == (1, 2)


def test_transform_fn_replaces_the_pipeline_and_may_not_be_mixed_with_it(torchscript_folder):
    _with_code(torchscript_folder, "def model_fn(model_dir):\n    return 'm'\n"
               "def transform_fn(model, data, content_type, accept):\n"
               "    return f'{model}:{data}:{content_type}:{accept}', 'text/plain'\n")
    answer = ModelHandler(torchscript_folder).invoke(b"hi", "application/json", "text/plain")
    assert answer == (b"m:hi:application/json:text/plain", "text/plain")
    (torchscript_folder / "code" / "inference.py").write_text(
        "def transform_fn(model, data, content_type, accept):\n    return data\n"
        "def output_fn(prediction, accept):\n    return prediction\n")
    with pytest.raises(ValueError, match="defines transform_fn and output_fn: the SageMaker toolkit refuses both"):
        ModelHandler(torchscript_folder)


def test_a_result_that_is_not_a_body_is_a_500_naming_the_type(torchscript_folder):
    _with_code(torchscript_folder, "def output_fn(prediction, accept):\n    return prediction\n")
    with pytest.raises(InvocationFailed) as failed:
        ModelHandler(torchscript_folder).invoke(b"[[1, 2, 3]]", "application/json", None)
    assert failed.value.status == 500 and "returned Tensor, not a response body" in failed.value.message


def test_the_default_model_fn_names_what_it_looked_for(tmp_path):
    (tmp_path / "weights.bin").write_bytes(b"x")
    with pytest.raises(ValueError, match=r"defines no model_fn.*TorchScript model.pt.*has none; define model_fn"):
        ModelHandler(tmp_path)
