"""AWS's own example notebooks (aws/amazon-sagemaker-examples, vendored unchanged in tests/data/v2_notebooks/aws/),
run cell by cell twice against one moto server — by the real SDK v2 and by sagelaunch after the one swap rule, with
nothing else changed — each notebook in a kernel of its own: every cell has the same outcome on both sides and every
SageMaker request matches, generated names and timestamps aside. What the harness adds, the same for both runs, is in
tests/fixtures/aws_examples.py (a parameters cell, the public bucket's synthetic data, the cells that cannot run
here and why). moto does not train: a job completes at once (tests/fixtures/sagemaker_fakes.py); InvokeEndpoint runs
the deployed model (tests/fixtures/endpoint_fakes.py)."""

from __future__ import annotations

import hashlib
import json
from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.fixtures.aws_examples import (
    HARNESS,
    NOTEBOOKS,
    SKIPPED_CELLS,
    STAND_INS,
    case_id,
    copy_examples,
    notebook_cells,
    seeded_notebook_data,
)
from tests.fixtures.sdk_v2 import SideBySide, paired_requests, requests, without_documented_differences

# every SageMaker request but DescribeTrainingJob, whose count is how often a side polls (v2 and we poll differently)
SAGEMAKER_REQUESTS = ("CreateTrainingJob", "CreateModel", "CreateEndpointConfig", "CreateEndpoint", "InvokeEndpoint",
                      "DescribeEndpoint", "DeleteModel", "DeleteEndpointConfig", "DeleteEndpoint")


@pytest.fixture(scope="module")
def side(sdk_v2, sagemaker_endpoints, tmp_path_factory):
    workdir = copy_examples(tmp_path_factory.mktemp("aws_notebooks") / "aws")
    cases = [{"id": case_id(folder, notebook), "cells": [HARNESS, *notebook_cells(folder, notebook)],
              "names": {"WORKDIR": str(workdir / folder), "STAND_INS": str(STAND_INS)}}
             for folder, notebook in NOTEBOOKS]
    # the deploy notebooks run as a batch of their own at the same time: each SDK sleeps through its endpoint waits
    # (30 s) and log polls (10 s), so two batches overlap those sleeps
    batches = [[c for c in cases if "deploy" not in c["id"]], [c for c in cases if "deploy" in c["id"]]]
    # the two runs share the notebooks' /tmp/data
    with seeded_notebook_data(workdir.parent, data_already_downloaded=True):
        with ThreadPoolExecutor(len(batches)) as pool:
            halves = list(pool.map(sdk_v2, batches))
        yield SideBySide(v2={k: v for half in halves for k, v in half.v2.items()},
                         ours={k: v for half in halves for k, v in half.ours.items()})


def test_every_cell_runs_on_both_sides(side):
    for folder, notebook in NOTEBOOKS:
        name = case_id(folder, notebook)
        v2, ours = side.v2[name]["cells"], side.ours[name]["cells"]
        assert len(v2) == 1 + len(notebook_cells(folder, notebook))
        assert v2 == ["ok"] * len(v2), (name, v2)
        assert ours == v2, (name, ours)


def test_every_sagemaker_request_is_v2s(side):
    for folder, notebook in NOTEBOOKS:
        name = case_id(folder, notebook)
        v2, ours = side.v2[name], side.ours[name]
        for operation in SAGEMAKER_REQUESTS:
            for our_call, v2_call in paired_requests(v2, ours, operation):
                our_call, v2_call = without_documented_differences(our_call, v2_call)
                assert our_call == v2_call, (name, operation)


def test_the_notebooks_train_deploy_and_predict_against_moto(side):
    """Not vacuous: each training notebook starts a job, each deploy notebook's endpoint answers both of its
    predictions (dummy inputs, then 16 MNIST test images) and is deleted, the profiling job carries its rules."""
    for folder, notebook in NOTEBOOKS:
        name = case_id(folder, notebook)
        if "deploy" in notebook:
            assert len(requests(side.ours[name], "InvokeEndpoint")) == 2, name
            assert len(requests(side.ours[name], "DeleteEndpoint")) == 1, name
        else:
            assert len(requests(side.ours[name], "CreateTrainingJob")) == 1, name
    profiling = requests(side.ours[case_id("pytorch_profiling", "pt-resnet-profiling-single-gpu-single-node.ipynb")],
                         "CreateTrainingJob")[0]
    assert {r["RuleConfigurationName"] for r in profiling["ProfilerRuleConfigurations"]} >= {"LowGPUUtilization",
                                                                                             "ProfilerReport"}


def test_only_cells_that_cannot_run_here_are_left_out():
    for (folder, notebook, start), reason in SKIPPED_CELLS.items():
        cells = notebook_cells(folder, notebook)
        assert f"# not run here: {reason}" in cells  # the cell exists and its reason replaces it
        assert not any(cell.startswith(start) for cell in cells)


def test_the_vendored_files_are_upstreams_bytes():
    from tests.fixtures.aws_examples import AWS_EXAMPLES

    checked = 0
    for upstream in AWS_EXAMPLES.glob("*/upstream.json"):
        for entry in json.loads(upstream.read_text())["files"]:
            assert hashlib.sha256((upstream.parent / entry["file"]).read_bytes()).hexdigest() == entry["sha256"], entry
            checked += 1
    assert checked == 21
