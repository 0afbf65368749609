"""Hyperparameter tuning on the real SDK v2 and on ours (one moto server): CreateHyperParameterTuningJob for each
parameter type (continuous with each scaling, integer, categorical: plain for an image, JSON for a framework's),
each strategy (Bayesian, Random, Grid, Hyperband with its config), early stopping, warm start, seeds and limits;
the definition made from the estimator (static hyperparameters, v2's class metadata, the resource config)."""

from __future__ import annotations

import pytest

from tests.fixtures.sdk_v2 import (INPUT_BUCKET_CELL, both_ok, named_result, requests,
                                   without_documented_differences)

SETUP = """
import os, tempfile
src = tempfile.mkdtemp()
open(os.path.join(src, "train.py"), "w").write("print('hi')\\n")
from sagemaker.estimator import Estimator
from sagemaker.pytorch import PyTorch
from sagemaker.tuner import (HyperparameterTuner, IntegerParameter, ContinuousParameter, CategoricalParameter,
                             WarmStartConfig, WarmStartTypes, HyperbandStrategyConfig, StrategyConfig)
IMAGE = "123456789012.dkr.ecr.us-west-2.amazonaws.com/my-algo:latest"
METRICS = [{"Name": "acc", "Regex": "acc=([0-9.]+)"}, {"Name": "loss", "Regex": "loss=([0-9.]+)"}]
generic = Estimator(IMAGE, ROLE, 1, "ml.m5.xlarge", hyperparameters={"epochs": 2, "mode": "fast"})
torch_est = PyTorch(entry_point="train.py", source_dir=src, framework_version="2.0.0", py_version="py310", role=ROLE,
                    instance_type="ml.m5.xlarge", instance_count=1, hyperparameters={"epochs": 2, "name": "x"},
                    environment={"K": "V"})
"""

CASES = {
    "tune-bayesian": """
tuner = HyperparameterTuner(generic, "loss", {"lr": ContinuousParameter(0.01, 0.2), "epochs": IntegerParameter(1, 5),
                                              "opt": CategoricalParameter(["sgd", "adam"]), "bs": CategoricalParameter([16, 32])},
                            metric_definitions=METRICS, objective_type="Minimize", max_jobs=4, max_parallel_jobs=2,
                            early_stopping_type="Auto", tags=[{"Key": "team", "Value": "ml"}])
tuner.fit({"train": "s3://bucket-x/train"}, job_name=JOB, wait=False)
""",
    "tune-random": """
tuner = HyperparameterTuner(torch_est, "acc", {"lr": ContinuousParameter(0.001, 0.2, "Logarithmic"),
                                               "m": ContinuousParameter(0.5, 0.99, "ReverseLogarithmic"),
                                               "n": IntegerParameter(1, 64, "Logarithmic"),
                                               "opt": CategoricalParameter(["sgd", "adam"]), "bs": CategoricalParameter([16, 32])},
                            metric_definitions=METRICS, strategy="Random", max_jobs=6, max_parallel_jobs=3,
                            random_seed=7, max_runtime_in_seconds=3600,
                            warm_start_config=WarmStartConfig(WarmStartTypes.TRANSFER_LEARNING, parents={"parent-a"}))
tuner.fit(job_name=JOB, wait=False, include_cls_metadata=False)
""",
    "tune-grid": """
tuner = HyperparameterTuner(torch_est, "acc", {"opt": CategoricalParameter(["sgd", "adam"]),
                                               "bs": CategoricalParameter([16, 32, 64])},
                            metric_definitions=METRICS[:1], strategy="Grid", max_jobs=6)
tuner.fit(job_name=JOB, wait=False)
tuner.wait()
import sagemaker
waited = sagemaker.Session().wait_for_tuning_job(JOB)
RESULT = {"status": waited["HyperParameterTuningJobStatus"], "described": tuner.describe()["HyperParameterTuningJobName"]}
""",
    "tune-hyperband": """
tuner = HyperparameterTuner(generic, "acc", {"lr": ContinuousParameter(0.01, 0.2), "n": IntegerParameter(1, 8, "Linear")},
                            metric_definitions=METRICS, strategy="Hyperband", max_jobs=3,
                            strategy_config=StrategyConfig(HyperbandStrategyConfig(max_resource=10, min_resource=1)))
tuner.fit(job_name=JOB, wait=False, include_cls_metadata=True)
""",
}


@pytest.fixture(scope="module")
def side(sdk_v2):
    return sdk_v2([{"id": case_id, "code": INPUT_BUCKET_CELL + SETUP + code} for case_id, code in CASES.items()])


@pytest.mark.parametrize("case_id", list(CASES))
def test_create_tuning_job_as_v2(side, case_id):
    v2, ours = both_ok(side, case_id)
    [v2_request] = requests(v2, "CreateHyperParameterTuningJob")
    [our_request] = requests(ours, "CreateHyperParameterTuningJob")
    # the training image: our full DLC tag for v2's moving tag (README's documented difference)
    our_request["TrainingJobDefinition"], v2_request["TrainingJobDefinition"] = without_documented_differences(
        our_request["TrainingJobDefinition"], v2_request["TrainingJobDefinition"])
    assert our_request == v2_request
    assert our_request["HyperParameterTuningJobName"] == "<job>"



def test_framework_categoricals_are_json_and_the_class_is_named(side):
    [request] = requests(side.ours["tune-grid"], "CreateHyperParameterTuningJob")
    ranges = request["HyperParameterTuningJobConfig"]["ParameterRanges"]
    assert ranges["CategoricalParameterRanges"][1] == {"Name": "bs", "Values": ['"16"', '"32"', '"64"']}
    static = request["TrainingJobDefinition"]["StaticHyperParameters"]
    assert static["sagemaker_estimator_class_name"] == '"PyTorch"' and static["sagemaker_job_name"] == '"<job>"'



def test_the_wait_loop_as_v2(side):
    v2, ours = named_result(side.v2["tune-grid"]), named_result(side.ours["tune-grid"])
    assert ours == v2 == {"status": "Completed", "described": "<job>"}
