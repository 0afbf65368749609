"""AWS's notebooks with a hyperparameter tuner, a generic `Estimator` on a bring-your-own image and a batch
transform, and an smdistributed-dataparallel PyTorch MNIST job (aws/amazon-sagemaker-examples, vendored unchanged in tests/data/v2_notebooks/aws/), run cell by cell twice against
one moto server — by the real SDK v2 and by sagelaunch after the one swap rule, nothing else changed: every cell has
the same outcome on both sides and every SageMaker request matches, generated names and timestamps aside.

Every cell completes on both sides except the cells of tests/fixtures/aws_day_examples.py `BOTH_FAIL`, which fail on
both sides for a named reason, asserted here and never counted as passing: moto runs no tuning trials and no
transform (the cells that read a best trial or a transform's output), and the bring-your-own notebook imports SDK
v1's `csv_serializer`, which v2 itself removed (its deploy cell and the two cells using its predictor). What the harness adds is in
tests/fixtures/aws_examples.py and aws_day_examples.py."""

from __future__ import annotations

import re

import pytest

from tests.fixtures.aws_day_examples import (
    DAY_NOTEBOOKS,
    DAY_SKIPPED_CELLS,
    MOTO_BEST_JOB,
    day_cells,
    failing_cells,
    seed_example_files_bucket,
    write_synthetic_iris,
)
from tests.fixtures.aws_examples import (
    HARNESS, STAND_INS, case_id, copy_examples, seeded_notebook_data,
)
from tests.fixtures.sdk_v2 import paired_requests, requests, without_documented_differences

pytestmark = pytest.mark.slow  # two interpreters run whole notebooks

# the requests the notebooks make that v2 and we must send alike (the Describe* polls are left out: how often each
# SDK polls is its own affair)
SAGEMAKER_REQUESTS = ("CreateTrainingJob", "CreateHyperParameterTuningJob", "CreateModel", "CreateTransformJob",
                      "CreateEndpointConfig", "CreateEndpoint", "InvokeEndpoint", "DeleteEndpoint",
                      "DeleteEndpointConfig", "DeleteModel")


# generated tuning-job names carry the minute only (v2's and ours): v2 makes its names an hour ahead, so the two sides'
# names never meet on the shared moto server; the requests are compared with the minute stamp left out
V2_CLOCK_AHEAD_S = 3600
SHORT_TIMESTAMP = re.compile(r"-\d{6}-\d{4}$")


@pytest.fixture(scope="module")
def side(sdk_v2, sagemaker_endpoints, tmp_path_factory):
    workdir = copy_examples(tmp_path_factory.mktemp("aws_day_notebooks") / "aws")
    seed_example_files_bucket()
    write_synthetic_iris(workdir)
    cases = [{"id": case_id(folder, notebook), "cells": [HARNESS, *day_cells(folder, notebook)],
              "names": {"WORKDIR": str(workdir / folder), "STAND_INS": str(STAND_INS)},
              "v2_clock_ahead_s": V2_CLOCK_AHEAD_S}
             for folder, notebook in DAY_NOTEBOOKS]
    with seeded_notebook_data(workdir.parent, data_already_downloaded=True):  # both runs find /tmp/data filled
        yield sdk_v2(cases)


def test_every_cell_completes_on_both_sides_but_the_named_failures(side):
    """Every cell completes on both sides, except the cells of BOTH_FAIL: those fail on both sides, each side's error
    saying why (what moto lacks, or the v1 name v2 removed)."""
    for folder, notebook in DAY_NOTEBOOKS:
        name = case_id(folder, notebook)
        v2, ours = side.v2[name]["cells"], side.ours[name]["cells"]
        assert len(v2) == len(ours) == 1 + len(day_cells(folder, notebook))
        failures = failing_cells(folder, notebook)
        for index, (v2_outcome, our_outcome) in enumerate(zip(v2, ours)):
            limit = failures.get(index)
            if limit is None:
                assert v2_outcome == our_outcome == "ok", (name, index, v2_outcome, our_outcome)
            else:
                assert limit.v2_error in v2_outcome and limit.our_error in our_outcome, (name, index, limit.reason,
                                                                                        v2_outcome, our_outcome)


def test_the_tuning_notebook_meets_moto_s_made_up_best_job_on_both_sides(side):
    """The deploy cell's failure is moto's: both SDKs asked for the best job moto names, which no request created."""
    name = case_id("tensorflow2_hpo", "hpo_tensorflow2_mnist.ipynb")
    for result in (side.v2[name], side.ours[name]):
        assert [c["TrainingJobName"] for c in requests(result, "DescribeTrainingJob")][-1] == MOTO_BEST_JOB
        assert MOTO_BEST_JOB not in [c["TrainingJobName"] for c in requests(result, "CreateTrainingJob")]
        assert len(requests(result, "CreateHyperParameterTuningJob")) == 1
        assert not requests(result, "CreateEndpoint")


def test_every_sagemaker_request_is_v2s(side):
    for folder, notebook in DAY_NOTEBOOKS:
        name = case_id(folder, notebook)
        v2, ours = side.v2[name], side.ours[name]
        for operation in SAGEMAKER_REQUESTS:
            for our_call, v2_call in paired_requests(v2, ours, operation):
                if operation == "CreateHyperParameterTuningJob":
                    for call in (our_call, v2_call):
                        call["HyperParameterTuningJobName"] = SHORT_TIMESTAMP.sub(
                            "-<minute>", call["HyperParameterTuningJobName"])
                    our_call["TrainingJobDefinition"], v2_call["TrainingJobDefinition"] = without_documented_differences(
                        our_call["TrainingJobDefinition"], v2_call["TrainingJobDefinition"])
                else:
                    our_call, v2_call = without_documented_differences(our_call, v2_call)
                assert our_call == v2_call, (name, operation)


def test_only_cells_that_cannot_run_here_are_left_out():
    for (folder, notebook, start), reason in DAY_SKIPPED_CELLS.items():
        cells = day_cells(folder, notebook)
        assert f"# not run here: {reason}" in cells
        assert not any(cell.startswith(start) for cell in cells)


def test_the_notebooks_send_what_they_are_about(side):
    """Not vacuous: the tuning notebook creates its tuning job over the estimator's learning rate; the bring-your-own
    notebook trains its image and runs a batch transform of the model with the notebook's split and filter."""
    tuning = side.ours[case_id("tensorflow2_hpo", "hpo_tensorflow2_mnist.ipynb")]
    [create] = requests(tuning, "CreateHyperParameterTuningJob")
    config = create["HyperParameterTuningJobConfig"]
    assert config["ParameterRanges"]["ContinuousParameterRanges"][0]["Name"] == "learning-rate"
    assert config["HyperParameterTuningJobObjective"] == {"Type": "Minimize", "MetricName": "average test loss"}
    byo = side.ours[case_id("scikit_byo", "scikit_bring_your_own.ipynb")]
    [training] = requests(byo, "CreateTrainingJob")
    assert training["AlgorithmSpecification"]["TrainingImage"].endswith("/sagemaker-decision-trees:latest")
    [model] = requests(byo, "CreateModel")
    [transform] = requests(byo, "CreateTransformJob")
    assert transform["ModelName"] == model["ModelName"]
    assert transform["TransformInput"]["SplitType"] == "Line"
    assert transform["DataProcessing"]["InputFilter"] == "$[1:]"
    smddp = side.ours[case_id("pytorch_smddp_mnist", "pytorch_smdataparallel_mnist_demo.ipynb")]
    [training] = requests(smddp, "CreateTrainingJob")
    assert training["HyperParameters"]["sagemaker_distributed_dataparallel_enabled"] == "true"
    assert training["ResourceConfig"]["InstanceType"] == "ml.p3dn.24xlarge"
