"""Model(...).deploy and estimator.deploy on SageMaker, end to end against the session's moto server.

moto's endpoint gaps are closed in tests/fixtures/endpoint_fakes.py: Graviton instance types are
accepted (botocore's enum), endpoints start Creating, and InvokeEndpoint runs the archive's own
code/inference.py on the uploaded model (no canned answers).
"""

from __future__ import annotations

import tarfile
import uuid

import boto3
import pytest

from sagelaunch.estimators.model import Model
from sagelaunch.launcher.common.predictors import PredictionError, SageMakerPredictor
from tests.fixtures.sentiment import SCRIPTS, SHIPPED_DATA

ROLE = "arn:aws:iam::123456789012:role/SageMakerRole"
REGION = "us-west-2"
GRAVITON_IMAGE = "763104351884.dkr.ecr.us-west-2.amazonaws.com/pytorch-inference-graviton:2.0.0-cpu-py310-ubuntu20.04-sagemaker"
# jobspec/support_matrix.json (source-checked): the x86 CPU inference tag of PyTorch 2.0.0 has no OS suffix
CPU_IMAGE = "763104351884.dkr.ecr.us-west-2.amazonaws.com/pytorch-inference:2.0.0-cpu-py310"


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def test_graviton_endpoint_lifecycle(sagemaker_endpoints, sentiment_archive):
    sm = boto3.client("sagemaker", region_name=REGION)
    name = unique("sentiment-c7g")
    model = Model(model_data=str(sentiment_archive), role=ROLE, framework_version="2.0.0", py_version="py310",
                  region=REGION)
    predictor = model.deploy(1, "ml.c7g.4xlarge", endpoint_name=name)  # v2's positions
    try:
        assert isinstance(predictor, SageMakerPredictor)
        assert sm.describe_endpoint(EndpointName=name)["EndpointStatus"] == "InService"
        assert name in sagemaker_endpoints.described  # deploy polled DescribeEndpoint past "Creating"
        container = sm.describe_model(ModelName=name)["PrimaryContainer"]
        assert container["Image"] == GRAVITON_IMAGE
        assert container["Environment"]["SAGEMAKER_PROGRAM"] == "inference.py"
        [variant] = sm.describe_endpoint_config(EndpointConfigName=name)["ProductionVariants"]
        assert (variant["InstanceType"], variant["InitialInstanceCount"]) == ("ml.c7g.4xlarge", 1)
        # the uploaded archive is the packaged model, in the default SageMaker bucket
        bucket, _, key = container["ModelDataUrl"].removeprefix("s3://").partition("/")
        assert bucket == f"sagemaker-{REGION}-123456789012" and key == f"{name}/model.tar.gz"

        [answer] = predictor.predict({"inputs": "Covid cases are increasing fast!"})
        assert answer["label"] == "negative" and answer["score"] > 0.5
        assert [r["label"] for r in predictor.predict({"inputs": ["I love it, amazing!", "heading to the museum this weekend"]})] \
            == ["positive", "neutral"]
        with pytest.raises(PredictionError) as refused:  # the container's 415 comes back through ModelError
            predictor.predict(b'{"inputs": "hi"}', content_type="text/plain")
        assert refused.value.status == 415 and "text/plain" in refused.value.message
        with pytest.raises(PredictionError) as empty:
            predictor.predict({"inputs": "  "})
        assert empty.value.status == 400 and "empty" in empty.value.message
    finally:
        predictor.delete()
    assert predictor.deleted == [f"endpoint {name}", f"endpoint config {name}", f"model {name}"]
    assert name not in [e["EndpointName"] for e in sm.list_endpoints()["Endpoints"]]
    assert name not in [c["EndpointConfigName"] for c in sm.list_endpoint_configs()["EndpointConfigs"]]
    assert name not in [m["ModelName"] for m in sm.list_models()["Models"]]


def test_training_output_without_handler_is_repacked_on_deploy(sagemaker_endpoints, sentiment_model, tmp_path):
    """A job's model.tar.gz in S3 (no code/) gets code/inference.py before CreateModel, like the SDK's repack."""
    s3 = boto3.client("s3", region_name=REGION)
    bucket = unique("training-output")
    s3.create_bucket(Bucket=bucket, CreateBucketConfiguration={"LocationConstraint": REGION})
    raw = tmp_path / "model.tar.gz"
    with tarfile.open(raw, "w:gz") as tar:
        for path in sentiment_model.model_dir.iterdir():
            tar.add(path, arcname=path.name)
    s3.upload_file(str(raw), bucket, "job/output/model.tar.gz")
    name = unique("sentiment-m5")
    predictor = Model(model_data=f"s3://{bucket}/job/output/model.tar.gz", role=ROLE, region=REGION).deploy(
        1, "ml.m5.xlarge", endpoint_name=name)
    try:
        container = boto3.client("sagemaker", region_name=REGION).describe_model(ModelName=name)["PrimaryContainer"]
        assert container["Image"] == CPU_IMAGE
        assert container["ModelDataUrl"] != f"s3://{bucket}/job/output/model.tar.gz"
        assert predictor.predict({"inputs": "what a fantastic concert, so happy"})[0]["label"] == "positive"
    finally:
        predictor.delete()


def test_bad_deploy_arguments_fail_before_any_call(sagemaker_endpoints, sentiment_archive):
    sm = boto3.client("sagemaker", region_name=REGION)
    before = len(sm.list_models()["Models"])
    model = Model(model_data=str(sentiment_archive), role=ROLE, region=REGION)
    with pytest.raises(ValueError, match=r"instance_type='ml\.c7g\.4xlarg'.*did you mean 'ml\.c7g\.4xlarge'"):
        model.deploy(1, "ml.c7g.4xlarg")
    with pytest.raises(ValueError, match="role is required"):
        Model(model_data=str(sentiment_archive), region=REGION).deploy(1, "ml.m5.xlarge")
    with pytest.raises(ValueError, match="initial_instance_count=None must be a whole number"):
        model.deploy(instance_type="ml.m5.xlarge")  # v2 needs the count for a SageMaker endpoint
    with pytest.raises(ValueError, match="Elastic Inference is retired"):
        model.deploy(1, "ml.m5.xlarge", accelerator_type="ml.eia2.medium")
    with pytest.raises(ValueError, match=r"does not implement serverless_inference_config \(serverless endpoints\)"):
        model.deploy(1, "ml.m5.xlarge", serverless_inference_config=object())
    assert len(sm.list_models()["Models"]) == before


def test_fake_still_rejects_what_the_service_rejects(sagemaker_endpoints):
    """The fixture widened moto to the real enum, not to anything: an unknown type is a ValidationError."""
    sm = boto3.client("sagemaker", region_name=REGION)
    name = unique("fake-check")
    sm.create_model(ModelName=name, ExecutionRoleArn=ROLE, PrimaryContainer={"Image": GRAVITON_IMAGE})
    try:
        with pytest.raises(sm.exceptions.ClientError, match="ml.c7g.4xlarge"):  # message lists allowed values
            sm.create_endpoint_config(EndpointConfigName=name, ProductionVariants=[{
                "VariantName": "AllTraffic", "ModelName": name, "InitialInstanceCount": 1,
                "InstanceType": "ml.z9.huge"}])
    finally:
        sm.delete_model(ModelName=name)


def test_estimator_deploys_its_training_jobs_model(sagemaker_env, sagemaker_endpoints, sentiment_model, tmp_path):
    """PyTorch(...).fit on an ml.* instance (moto), then estimator.deploy of latest_training_job's model,
    written as in v2: the job's uploaded code repacked under code/, inference.py as the handler."""
    from sagelaunch.estimators import PyTorch
    from sagelaunch.estimators.serializers import JSONDeserializer, JSONSerializer

    s3 = boto3.client("s3", region_name=REGION)
    bucket = unique("estimator-deploy")
    s3.create_bucket(Bucket=bucket, CreateBucketConfiguration={"LocationConstraint": REGION})
    for split in ("train", "validation", "test"):
        s3.upload_file(str(SHIPPED_DATA / f"{split}.jsonl"), bucket, f"data/{split}/{split}.jsonl")
    estimator = PyTorch(
        entry_point="train_sentiment.py", source_dir=str(SCRIPTS), role=ROLE, framework_version="2.0.0",
        py_version="py310", instance_type="ml.m5.xlarge", region=REGION, base_job_name="sentiment-est",
        output_path=f"s3://{bucket}/output", hyperparameters={"model_name_or_path": "tiny-roberta", "epochs": 8},
    )
    job = estimator.fit({s: f"s3://{bucket}/data/{s}" for s in ("train", "validation", "test")}, logs=False)
    assert job is estimator.latest_training_job and job.status == "Completed"
    assert job.model_data == f"s3://{bucket}/output/{job.name}/output/model.tar.gz"
    # what the training container uploads at the end of a job: SM_MODEL_DIR as model.tar.gz, no code/
    raw = tmp_path / "model.tar.gz"
    with tarfile.open(raw, "w:gz") as tar:
        for path in sentiment_model.model_dir.iterdir():
            tar.add(path, arcname=path.name)
    s3.upload_file(str(raw), bucket, job.model_data.removeprefix(f"s3://{bucket}/"))

    name = unique("sentiment-est")
    predictor = estimator.deploy(1, "ml.m5.xlarge", JSONSerializer(), JSONDeserializer(), endpoint_name=name,
                                 model_name=name, entry_point="inference.py")
    sm = boto3.client("sagemaker", region_name=REGION)
    try:
        assert isinstance(predictor, SageMakerPredictor)
        assert sm.describe_endpoint(EndpointName=name)["EndpointStatus"] == "InService"
        container = sm.describe_model(ModelName=name)["PrimaryContainer"]
        assert container["Image"] == CPU_IMAGE  # the estimator's framework and Python versions, CPU instance
        assert container["Environment"]["SAGEMAKER_PROGRAM"] == "inference.py"
        # repacked into the default bucket under the model's name: the model's files + the job's code under code/
        assert container["ModelDataUrl"] == f"s3://sagemaker-{REGION}-123456789012/{name}/model.tar.gz"
        [answer] = predictor.predict({"inputs": "Covid cases are increasing fast!"})
        assert answer["label"] == "negative" and 0.5 < answer["score"] <= 1.0
        assert name in [i["endpoint"] for i in sagemaker_endpoints.invocations]  # served by the fake, for real
    finally:
        predictor.delete()
    assert predictor.deleted == [f"endpoint {name}", f"endpoint config {name}", f"model {name}"]
    assert name not in [e["EndpointName"] for e in sm.list_endpoints()["Endpoints"]]
    assert name not in [m["ModelName"] for m in sm.list_models()["Models"]]
