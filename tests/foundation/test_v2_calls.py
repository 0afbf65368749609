"""The SDK v2 calls that need no job: hyperparameters() and set_hyperparameters(), training_image_uri(),
TensorFlow's positional order, and the constructor arguments attach() rebuilds from a job description.
(Each is compared with the real SDK v2 in tests/parity_v2/test_calls.py.)"""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from sagelaunch.estimators import PyTorch, TensorFlow
from sagelaunch.estimators.v2_calls import init_params

ROLE = "arn:aws:iam::123456789012:role/SageMakerRole"
SM = dict(role=ROLE, region="us-west-2", instance_type="ml.p4d.24xlarge")


def pt(**kwargs) -> PyTorch:
    return PyTorch(**{"entry_point": "train.py", "framework_version": "2.0.0", "py_version": "py310", **SM, **kwargs})


def test_hyperparameters_is_v2s_method_and_the_argument_keeps_its_name():
    est = pt(hyperparameters={"epochs": 2, "tags": ["a"], "name": "x"},
             distribution={"smdistributed": {"modelparallel": {"enabled": True, "parameters": {"partitions": 2, "ddp": True}}},
                           "mpi": {"enabled": True, "processes_per_host": 8}})
    hps = est.hyperparameters()
    assert {k: hps[k] for k in ("epochs", "tags", "name")} == {"epochs": "2", "tags": '["a"]', "name": '"x"'}
    assert hps["sagemaker_mpi_enabled"] == "true" and '"partitions": 2' in hps["mp_parameters"]
    assert est.user_hyperparameters == {"epochs": 2, "tags": ["a"], "name": "x"}
    assert pt().hyperparameters() == {}
    # by position too (the fifth, as v2)
    assert PyTorch("train.py", "2.0.0", "py310", None, {"lr": 0.1}, **SM).hyperparameters() == {"lr": "0.1"}


def test_set_hyperparameters_adds_values_checked_like_the_argument():
    est = pt(hyperparameters={"epochs": 2})
    est.set_hyperparameters(lr=0.5, epochs=3)
    assert est.user_hyperparameters == {"epochs": 3, "lr": 0.5}
    with pytest.raises(ValidationError, match=r"hyperparameters\['sagemaker_program'\] is set by sagelaunch"):
        est.set_hyperparameters(sagemaker_program="other.py")
    assert est.user_hyperparameters == {"epochs": 3, "lr": 0.5}  # a refused change leaves the values as they were
    with pytest.raises(TypeError, match=r"hyperparameters is a method.*est.set_hyperparameters\(name=value"):
        est.hyperparameters = {"epochs": 1}


def test_a_misspelt_hyperparameters_argument_suggests_its_name():
    with pytest.raises(ValidationError, match="no argument 'hyperparamters' \\(did you mean 'hyperparameters'\\?\\)"):
        pt(hyperparamters={"epochs": 1})
    with pytest.raises(ValidationError, match="no argument 'user_hyperparameters'"):
        pt(user_hyperparameters={"epochs": 1})  # the stored name is not an argument


def test_training_image_uri_is_a_method_with_v2s_region_argument():
    est = pt()
    assert est.training_image_uri().startswith("763104351884.dkr.ecr.us-west-2.amazonaws.com/pytorch-training:2.0.0")
    assert ".eu-west-1." in est.training_image_uri(region="eu-west-1")
    with pytest.raises(ValueError, match="region='mars-1'"):
        est.training_image_uri("mars-1")


def test_tensorflow_positional_order_is_v2s():
    est = TensorFlow("py310", "2.12.0", "s3://bucket/model", None, {"mpi": {"enabled": True}},
                     entry_point="train.py", **SM)
    assert (est.py_version, est.framework_version, est.model_dir, est.image_uri) == (
        "py310", "2.12.0", "s3://bucket/model", None)
    assert est.distribution == {"mpi": {"enabled": True}}
    with pytest.raises(TypeError, match="at most 5 positional arguments"):
        TensorFlow("py310", "2.12.0", None, None, None, "train.py", **SM)
    with pytest.raises(TypeError, match="'py_version' both by position and by name"):
        TensorFlow("py310", py_version="py310", entry_point="train.py", framework_version="2.12.0", **SM)


def test_model_data_and_logs_need_a_job():
    for call in (lambda est: est.model_data, lambda est: est.logs(), lambda est: est.update_profiler(rules=[])):
        with pytest.raises(ValueError, match=r"needs a training job: call fit\(\) first, or PyTorch.attach"):
            call(pt())


DESCRIPTION = {
    "TrainingJobName": "bert-2026-01-02-03-04-05-678",
    "TrainingJobArn": "arn:aws:sagemaker:eu-west-1:123456789012:training-job/bert-2026-01-02-03-04-05-678",
    "RoleArn": ROLE,
    "AlgorithmSpecification": {"TrainingImage": "763104351884.dkr.ecr.eu-west-1.amazonaws.com/pytorch-training:"
                                                "2.0.0-gpu-py310-cu118-ubuntu20.04-sagemaker",
                               "TrainingInputMode": "File"},
    "HyperParameters": {"epochs": "3", "name": '"x"', "sagemaker_program": '"train.py"',
                        "sagemaker_submit_directory": '"s3://my-bucket/bert/source/sourcedir.tar.gz"',
                        "sagemaker_container_log_level": "20", "sagemaker_job_name": '"bert"',
                        "sagemaker_region": '"eu-west-1"', "sagemaker_torch_distributed_enabled": "true"},
    "ResourceConfig": {"InstanceType": "ml.p4d.24xlarge", "InstanceCount": 2, "VolumeSizeInGB": 50},
    "StoppingCondition": {"MaxRuntimeInSeconds": 3600, "MaxWaitTimeInSeconds": 7200},
    "OutputDataConfig": {"S3OutputPath": "s3://my-bucket/out", "KmsKeyId": ""},
    "EnableManagedSpotTraining": True,
    "VpcConfig": {"Subnets": ["subnet-0123abcd"], "SecurityGroupIds": ["sg-0123abcd"]},
}


def test_attach_rebuilds_the_constructor_arguments_as_v2():
    params = init_params(PyTorch, DESCRIPTION)
    assert params == {
        "role": ROLE, "instance_count": 2, "instance_type": "ml.p4d.24xlarge", "volume_size": 50, "max_run": 3600,
        "base_job_name": "bert", "output_path": "s3://my-bucket/out", "subnets": ["subnet-0123abcd"],
        "security_group_ids": ["sg-0123abcd"], "region": "eu-west-1", "entry_point": "train.py",
        "source_dir": "s3://my-bucket/bert/source/sourcedir.tar.gz", "container_log_level": 20, "use_spot_instances": True,
        "max_wait": 7200, "hyperparameters": {"epochs": 3, "name": "x"}, "framework_version": "2.0.0",
        "py_version": "py310", "image_uri": DESCRIPTION["AlgorithmSpecification"]["TrainingImage"],
        "input_mode": "File",  # v2's attach passes TrainingInputMode on too
    }
    est = PyTorch(**params)  # what attach() builds
    assert est.training_image_uri() == DESCRIPTION["AlgorithmSpecification"]["TrainingImage"]
    with pytest.raises(ValueError, match=r"ran the pytorch image .* not a tensorflow one; attach it with "
                                         r"PyTorch.attach\('bert-2026-01-02-03-04-05-678'\)"):
        init_params(TensorFlow, DESCRIPTION)
