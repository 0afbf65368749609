"""PyTorchModel / TensorFlowModel / estimator.deploy take v2's arguments by position and name, and refuse what
sagelaunch cannot do by name, before any AWS call (no network here: every case fails or is built offline)."""

from __future__ import annotations

import inspect
import logging

import pytest

from sagelaunch.estimators import Model, PyTorch, PyTorchModel, TensorFlow, TensorFlowModel

ROLE = "arn:aws:iam::123456789012:role/SageMakerRole"
DATA = "s3://my-bucket/model.tar.gz"


def test_positional_orders_are_v2s():
    pt = PyTorchModel(DATA, ROLE, "inference.py", "2.1.0", "py310", None, None, 4)
    assert (pt.model_data, pt.role, pt.entry_point, pt.framework_version, pt.py_version, pt.model_server_workers) == (
        DATA, ROLE, "inference.py", "2.1.0", "py310", 4)
    tf = TensorFlowModel(DATA, ROLE, "inference.py", None, "2.13.0", logging.WARNING)
    assert (tf.entry_point, tf.image_uri, tf.framework_version, tf.container_log_level) == (
        "inference.py", None, "2.13.0", logging.WARNING)
    for deploy in (PyTorchModel.deploy, TensorFlowModel.deploy, Model.deploy):
        assert list(inspect.signature(deploy).parameters)[1:7] == [
            "initial_instance_count", "instance_type", "serializer", "deserializer", "accelerator_type",
            "endpoint_name"]
    assert list(inspect.signature(PyTorch.deploy).parameters)[1:9] == [
        "initial_instance_count", "instance_type", "serializer", "deserializer", "accelerator_type",
        "endpoint_name", "use_compiled_model", "wait"]
    assert list(inspect.signature(PyTorch.create_model).parameters)[1:7] == [
        "model_server_workers", "role", "vpc_config_override", "entry_point", "source_dir", "dependencies"]
    assert list(inspect.signature(TensorFlow.create_model).parameters)[1:6] == [
        "role", "vpc_config_override", "entry_point", "source_dir", "dependencies"]


def test_region_comes_from_a_session_duck_typed():
    import boto3

    class SageMakerSessionLike:  # sagemaker.Session's attribute
        boto_region_name = "eu-central-1"

    assert PyTorchModel(DATA, framework_version="2.0.0", sagemaker_session=boto3.Session(region_name="eu-west-1")
                        ).region == "eu-west-1"
    assert TensorFlowModel(DATA, framework_version="2.13.0", sagemaker_session=SageMakerSessionLike()).region == (
        "eu-central-1")


@pytest.mark.parametrize(("build", "message"), [
    (lambda: PyTorchModel(DATA, framework_version="2.0.0", entrypoint="x.py"),
     r"unexpected argument 'entrypoint' \(did you mean 'entry_point'\?\)"),
    (lambda: PyTorchModel(DATA, framework_version="2.0.0", predictor_cls=object),
     "predictor_cls is not implemented.*serializer"),
    (lambda: PyTorchModel(DATA, framework_version="2.0.0", git_config={"repo": "x"}), "git_config for a model"),
    (lambda: PyTorchModel(DATA, framework_version="2.0.0", model_server_workers=0), "model_server_workers=0"),
    (lambda: PyTorchModel("", framework_version="2.0.0"), "model_data=''"),
    (lambda: TensorFlowModel(DATA), "needs framework_version"),
], ids=["misspelt", "predictor_cls", "git_config", "workers", "no-data", "tf-no-version"])
def test_bad_model_arguments_name_the_field(build, message):
    with pytest.raises((TypeError, ValueError), match=message):
        build()


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"instance_type": "ml.m5.xlarge"}, r"initial_instance_count=None must be a whole number"),
    ({"initial_instance_count": 1}, "deploy needs instance_type"),
    ({"initial_instance_count": 1, "instance_type": "ml.m5.xlarge", "accelerator_type": "ml.eia2.medium"},
     "Elastic Inference is retired"),
    ({"initial_instance_count": 1, "instance_type": "ml.m5.xlarge", "serverless_inference_config": object(),
      "data_capture_config": object()},
     r"does not implement data_capture_config \(Model Monitor data capture\); serverless_inference_config"),
    ({"initial_instance_count": 1, "instance_type": "ml.m5.xlarge", "endpoint_name": "bad_name!"},
     "endpoint_name='bad_name!'"),
], ids=["no-count", "no-type", "elastic-inference", "unsupported", "bad-endpoint-name"])
def test_bad_deploy_arguments_fail_before_any_call(kwargs, message):
    with pytest.raises(ValueError, match=message):
        PyTorchModel(DATA, ROLE, framework_version="2.0.0", py_version="py310").deploy(**kwargs)


def test_estimator_create_model_and_deploy_need_a_trained_job():
    est = PyTorch(entry_point="train.py", framework_version="2.0.0", py_version="py310",
                  instance_type="ml.m5.xlarge", role=ROLE, region="us-west-2")
    for call in (est.create_model, lambda: est.deploy(1, "ml.m5.xlarge")):
        with pytest.raises(ValueError, match=r"call fit\(\) first"):
            call()
