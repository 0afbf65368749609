"""The typed request (launcher.common.request_model) is checked against botocore's service model, shape by shape, as
sagemaker-core generates its classes from it; and it reads every compiled request back whole."""

from __future__ import annotations

import types
import typing
from typing import Any

import botocore.session
from pydantic import BaseModel

from sagelaunch.launcher.common import request_model
from sagelaunch.launcher.common.request_model import TrainingJobRequest

SCALARS = {"string": str, "integer": int, "long": int, "boolean": bool}


def _unwrap(annotation: Any) -> Any:
    """X | None → X."""
    if isinstance(annotation, types.UnionType) or typing.get_origin(annotation) is typing.Union:
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        assert len(args) == 1, annotation
        return args[0]
    return annotation


def mismatches(model: type[BaseModel], shape: Any, path: str) -> list[str]:
    """Every way `model` differs from botocore's `shape`: a wire name it lacks, a type that differs, a required
    member left optional (or the reverse)."""
    found = []
    for name, field in model.model_fields.items():
        wire = field.alias or name
        where = f"{path}.{wire}"
        if wire not in shape.members:
            if f"{shape.name}.{wire}" in request_model.NOT_IN_BOTOCORE:
                continue
            found.append(f"{where}: not a member of {shape.name}")
            continue
        found += _type_mismatches(_unwrap(field.annotation), shape.members[wire], where)
        if field.is_required() != (wire in shape.required_members):
            found.append(f"{where}: required is {field.is_required()}, botocore says {wire in shape.required_members}")
    modelled = {f.alias or n for n, f in model.model_fields.items()}
    found += [f"{path}.{m}: required by botocore, missing" for m in shape.required_members if m not in modelled]
    return found


def _type_mismatches(annotation: Any, member: Any, where: str) -> list[str]:
    kind = member.type_name
    origin = typing.get_origin(annotation)
    if kind == "structure":
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            return mismatches(annotation, member, where)
        return [] if origin is dict else [f"{where}: structure, typed {annotation}"]  # passed through as given
    if kind == "list":
        if origin is not tuple:
            return [f"{where}: list, typed {annotation}"]
        return _type_mismatches(typing.get_args(annotation)[0], member.member, where + "[]")
    if kind == "map":
        if origin is not dict:
            return [f"{where}: map, typed {annotation}"]
        key, value = typing.get_args(annotation)
        return [m for m in (_type_mismatches(key, member.key, where + "{key}") +
                            _type_mismatches(value, member.value, where + "{}"))]
    expected = SCALARS.get(kind)
    return [] if annotation is expected else [f"{where}: {kind}, typed {annotation}"]


def test_every_class_matches_botocores_shape():
    service = botocore.session.get_session().get_service_model("sagemaker")
    shape = service.operation_model("CreateTrainingJob").input_shape
    assert mismatches(TrainingJobRequest, shape, "CreateTrainingJobRequest") == []


def test_the_check_sees_a_wrong_name_type_or_requirement():
    service = botocore.session.get_session().get_service_model("sagemaker")

    class Misspelt(request_model.Shape):
        s3_uri: str
        local_pth: str | None = None

    class Wrong(request_model.Shape):
        s3_uri: int

    class Loose(request_model.Shape):
        s3_uri: str | None = None

    checkpoint = service.shape_for("CheckpointConfig")
    assert mismatches(Misspelt, checkpoint, "C") == ["C.LocalPth: not a member of CheckpointConfig"]
    assert mismatches(Wrong, checkpoint, "C") == ["C.S3Uri: string, typed <class 'int'>"]
    assert mismatches(Loose, checkpoint, "C") == ["C.S3Uri: required is False, botocore says True"]


ROLE = "arn:aws:iam::123456789012:role/SageMakerRole"
RICH = dict(  # every part of the request that holds something
    entry_point="train.py", source_dir="s3://code-bucket/src/sourcedir.tar.gz", role=ROLE, region="us-east-1",
    framework_version="2.0.0", instance_type="ml.p4d.24xlarge", instance_count=2, output_path="s3://out/jobs",
    hyperparameters={"epochs": 3}, checkpoint_s3_uri="s3://ckpt/c", checkpoint_local_path="/opt/ml/checkpoints",
    distribution={"smdistributed": {"modelparallel": {"enabled": True, "parameters": {"partitions": 2, "ddp": True}}},
                  "mpi": {"enabled": True, "processes_per_host": 8}},
    use_spot_instances=True, max_run=3600, max_wait=7200, volume_kms_key="alias/vol", output_kms_key="alias/out",
    subnets=["subnet-0abc"], security_group_ids=["sg-0abc"], environment={"NCCL_DEBUG": "INFO"},
    tags=[{"Key": "team", "Value": "ml"}], encrypt_inter_container_traffic=True, max_retry_attempts=2,
    metric_definitions=[{"Name": "loss", "Regex": "loss=(\\S+)"}], keep_alive_period_in_seconds=60)


def _requests() -> dict[str, Any]:
    from sagelaunch.estimators import PyTorch, TensorFlow
    from sagelaunch.estimators.inputs import TrainingInput
    from sagelaunch.profiler_config import Profiler, ProfilerConfig, TensorBoardOutputConfig

    profiled = PyTorch(**RICH, profiler_config=ProfilerConfig(
        s3_output_path="s3://prof/p", system_monitor_interval_millis=100, profile_params=Profiler()))
    channel = TrainingInput("s3://data/train", distribution="ShardedByS3Key", content_type="text/csv",
                            input_mode="Pipe", shuffle_config=None, record_wrapping="RecordIO", compression="Gzip")
    tensorflow = TensorFlow(entry_point="train.py", role=ROLE, region="eu-west-1", framework_version="2.12.0",
                            instance_type="ml.m5.xlarge", tensorboard_output_config=TensorBoardOutputConfig(
                                "s3://tb-bucket/out", "/opt/ml/tb"))
    local = PyTorch(entry_point="t.py", framework_version="2.0.0", instance_type="local", output_path="/tmp/x")
    return {"profiled": profiled.training_job_request("rich-1", inputs={"train": channel}),
            "tensorflow": tensorflow.training_job_request("tf-1", inputs="s3://data/t"),
            "local": local.training_job_request("local-1")}


def test_every_compiled_request_is_read_whole():
    for name, wire in _requests().items():
        typed = TrainingJobRequest.of(wire)
        assert typed.wire() == wire, name
        assert typed.training_job_name == wire["TrainingJobName"]
    rich = TrainingJobRequest.of(_requests()["profiled"])
    assert rich.resource_config is not None and rich.resource_config.keep_alive_period_in_seconds == 60
    assert rich.input_data_config is not None and rich.input_data_config[0].input_mode == "Pipe"
