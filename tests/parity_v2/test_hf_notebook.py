"""Hugging Face's getting-started SageMaker notebook (huggingface/notebooks, vendored in
tests/data/v2_notebooks/huggingface/) run cell by cell twice against one moto server — by the real SDK v2 and by
sagelaunch after the one swap rule, with only the changes tests/fixtures/hf_examples.py records: every cell has the
same outcome on both sides and every SageMaker request matches, generated names and timestamps aside.

The notebook fine-tunes DistilBERT on IMDB with the `HuggingFace` estimator, deploys and predicts, reads the job's
logs, and attaches the finished job by name with the generic `Estimator.attach`: the estimator attach rebuilds from
DescribeTrainingJob is compared attribute by attribute. Its data preparation runs once, before both runs, on
stand-ins of IMDB and DistilBERT's tokenizer in an offline Hub cache (hf_examples.py says why and how)."""

from __future__ import annotations

import json
import shutil

import pytest

from tests.fixtures.aws_examples import HARNESS, STAND_INS
from tests.fixtures.hf_examples import (
    BOTH_FAIL,
    DATA_PREP,
    FOLDER,
    HF_EXAMPLES,
    MECHANICAL,
    NOTEBOOK,
    STAND_IN_MAX_LENGTH,
    TEST_REVIEWS,
    TRAIN_REVIEWS,
    failing_cells,
    hf_cells,
    prep_cells,
    upstream_record,
    write_hub_stand_ins,
)
from tests.fixtures.sdk_v2 import TIMESTAMP, named_result, paired_requests, requests, without_documented_differences

pytestmark = pytest.mark.slow  # three interpreters run the notebook

CASE = "hf_getting_started"
# the requests the notebook makes that v2 and we must send alike (the Describe* polls are left out: how often each
# SDK polls is its own affair)
SAGEMAKER_REQUESTS = ("CreateTrainingJob", "CreateModel", "CreateEndpointConfig", "CreateEndpoint", "InvokeEndpoint",
                      "DeleteModel", "DeleteEndpointConfig", "DeleteEndpoint")
# after the notebook's last cell: what `Estimator.attach` rebuilt from DescribeTrainingJob, compared with v2's
ATTACHED = """
att = huggingface_estimator_loaded
RESULT = {"type": type(att).__name__, "image_uri": att.image_uri, "model_data": att.model_data, "role": att.role,
          "instance_type": att.instance_type, "instance_count": att.instance_count,
          "hyperparameters": att.hyperparameters(), "output_path": att.output_path,
          "base_job_name": att.base_job_name, "name": att.latest_training_job.name,
          "volume_size": att.volume_size, "max_run": att.max_run, "input_mode": att.input_mode,
          "trained": huggingface_estimator.model_data}
"""


@pytest.fixture(scope="module")
def prepared(sdk_v2_oracles, sagemaker_endpoints, tmp_path_factory):
    """The notebook's folder, and its data-preparation cells' run (project interpreter) on the Hub stand-ins."""
    hf_home = tmp_path_factory.mktemp("hf_home")
    write_hub_stand_ins(hf_home)
    workdir = tmp_path_factory.mktemp("hf_notebook") / FOLDER
    shutil.copytree(HF_EXAMPLES / FOLDER, workdir)
    case = {"id": "hf_data_prep", "cells": [HARNESS, *prep_cells()],
            "names": {"WORKDIR": str(workdir), "STAND_INS": str(STAND_INS), "HF_HOME": str(hf_home)}}
    [prep] = sdk_v2_oracles.run([case], ours=True).values()
    return workdir, prep


@pytest.fixture(scope="module")
def side(sdk_v2, prepared):
    workdir, prep = prepared
    assert prep["error"] is None, prep["error"]
    paths = {key: prep["result"][key] for key in ("training_input_path", "test_input_path")}
    case = {"id": CASE, "cells": [HARNESS, *hf_cells(), ATTACHED],
            "names": {"WORKDIR": str(workdir), "STAND_INS": str(STAND_INS), **paths}}
    return sdk_v2([case])


def test_the_data_preparation_writes_the_tokenized_splits(prepared, tmp_path):
    """The notebook's own data-preparation cells ran on the stand-ins and left datasets train.py can load."""
    import boto3
    from datasets import load_from_disk

    _, prep = prepared
    assert prep["cells"] == ["ok"] * len(prep["cells"]), prep["cells"]
    result = prep["result"]
    assert result["rows"] == [TRAIN_REVIEWS, TEST_REVIEWS]
    assert {"input_ids", "attention_mask", "labels"} <= set(result["columns"])
    s3 = boto3.client("s3")
    bucket, _, prefix = result["training_input_path"].removeprefix("s3://").partition("/")
    keys = [o["Key"] for o in s3.list_objects_v2(Bucket=bucket, Prefix=prefix + "/")["Contents"]]
    for key in keys:
        s3.download_file(bucket, key, str(tmp_path / key.rsplit("/", 1)[1]))
    train = load_from_disk(str(tmp_path)).with_format(None)  # saved in the torch format the notebook set
    assert len(train) == TRAIN_REVIEWS and len(train[0]["input_ids"]) == STAND_IN_MAX_LENGTH
    assert set(train["labels"]) == {0, 1}


def test_every_cell_completes_on_both_sides_but_the_named_failure(side):
    v2, ours = side.v2[CASE]["cells"], side.ours[CASE]["cells"]
    assert len(v2) == len(ours) == 2 + len(hf_cells())
    failures = failing_cells()
    for index, (v2_outcome, our_outcome) in enumerate(zip(v2, ours)):
        limit = failures.get(index)
        if limit is None:
            assert v2_outcome == our_outcome == "ok", (index, v2_outcome, our_outcome)
        else:
            assert limit.v2_error in v2_outcome and limit.our_error in our_outcome, (index, limit.reason, v2_outcome,
                                                                                    our_outcome)


def test_every_sagemaker_request_is_v2s(side):
    v2, ours = side.v2[CASE], side.ours[CASE]
    for operation in SAGEMAKER_REQUESTS:
        for our_call, v2_call in paired_requests(v2, ours, operation):
            our_call, v2_call = without_documented_differences(our_call, v2_call)
            assert our_call == v2_call, operation


def test_attach_rebuilds_the_estimator_as_v2(side):
    """The notebook's `Estimator.attach(old_training_job_name)` of its HuggingFace job: v2's generic estimator and
    ours hold the same settings, read back from the same DescribeTrainingJob."""
    v2, ours = (json.loads(TIMESTAMP.sub("<ts>", json.dumps(named_result(r)))) for r in (side.v2[CASE], side.ours[CASE]))
    assert ours == v2
    assert ours["type"] == "Estimator" and ours["model_data"] == ours["trained"]
    assert "huggingface-pytorch-training" in ours["image_uri"] and ours["hyperparameters"]["epochs"] == "1"


def test_the_notebook_sends_what_it_is_about(side, prepared):
    """Not vacuous: a HuggingFace training job on the prepared splits, its model deployed on the inference image,
    the notebook's sentiment request sent, and the attached job is the one it trained."""
    _, prep = prepared
    ours = side.ours[CASE]
    [training] = requests(ours, "CreateTrainingJob")
    assert ":1.13-transformers4.26-gpu-py39" in training["AlgorithmSpecification"]["TrainingImage"]
    channels = {c["ChannelName"]: c["DataSource"]["S3DataSource"]["S3Uri"] for c in training["InputDataConfig"]}
    assert channels == {"train": prep["result"]["training_input_path"], "test": prep["result"]["test_input_path"]}
    assert training["HyperParameters"]["model_name"] == '"distilbert-base-uncased"'
    [model] = requests(ours, "CreateModel")
    assert "huggingface-pytorch-inference" in model["PrimaryContainer"]["Image"]
    [invoke] = requests(ours, "InvokeEndpoint")
    assert json.loads(invoke["Body"]) == {"inputs": "I love using the new Inference DLC."}
    described = [c["TrainingJobName"] for c in requests(ours, "DescribeTrainingJob")]
    assert described[-1] == training["TrainingJobName"]


def test_only_the_recorded_changes_are_made():
    """The vendored files are the ones upstream.json records; the compared runs leave out only the data
    preparation and change only MECHANICAL's lines, each recorded there."""
    import hashlib

    record = upstream_record()
    for entry in record["files"]:  # upstream's bytes, or (the notebook) upstream's less what the entry's note says
        vendored = hashlib.sha256((HF_EXAMPLES / FOLDER / entry["file"]).read_bytes()).hexdigest()
        assert vendored == entry.get("vendored_sha256", entry["sha256"]), entry
    assert [entry["file"] for entry in record["files"]] == [NOTEBOOK, "scripts/train.py"]
    cells = hf_cells()
    assert sum(cell.startswith("# not run here:") for cell in cells) == len(DATA_PREP)
    harness_notes = " ".join(record["harness"])
    for change in MECHANICAL:
        assert change.old in harness_notes and any(change.new in cell for cell in [*cells, *prep_cells()])
    for limit in BOTH_FAIL:
        assert any(cell.startswith(limit.starts) for cell in cells)
