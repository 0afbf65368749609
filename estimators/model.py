"""Model: a trained model.tar.gz and how to serve it; `deploy` returns a Predictor.

    Model(model_data="s3://…/model.tar.gz", role=ROLE, framework_version="2.0.0")
        .deploy(1, "ml.c7g.4xlarge")                                         # SageMaker endpoint
    Model(model_data="/path/to/model").deploy(instance_type="local")        # 127.0.0.1, no Docker

sagelaunch's own convenience model (the v2 classes are PyTorchModel / TensorFlowModel in
estimators.framework_model): one name for model, endpoint config and endpoint, JSON in and out.

The archive is (re)packed when it has no code/inference.py, with the sentiment handler
(scripts/inference.py) unless `entry_point` names another. The serving image comes from the
support matrix: Graviton instances (c6g, c7g, m6g, r6g…) get pytorch-inference-graviton.
Nothing here imports boto3 or torch at module level.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from sagelaunch.estimators import field_checks as check
from sagelaunch.estimators.deploy_checks import (
    UNSUPPORTED_DEPLOY,
    check_endpoint_name,
    deploy_target,
    refuse_unsupported,
)
from sagelaunch.jobspec.catalog import inference_image_uri
from sagelaunch.jobspec.instance_types import is_local
from sagelaunch.jobspec.errors import SagelaunchError
from sagelaunch.jobspec.names import check_name, job_name
from sagelaunch.jobspec.suggest import unexpected_arguments
from sagelaunch.launcher import LocalPredictor, SageMakerPredictor, package_model, resolve_region, role_arn
from sagelaunch.launcher import sagemaker_endpoint as sme

if TYPE_CHECKING:
    from sagelaunch.launcher import LocalPredictor, Predictor


class Model(BaseModel):
    """sagelaunch's own model to deploy (PyTorch serving); each argument documented under its field."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True, protected_namespaces=(), defer_build=True)

    model_data: str
    """The model: s3:// URI of a model.tar.gz, a local model.tar.gz or a model folder."""
    role: str | None = None
    """IAM role ARN SageMaker assumes to pull the image and the model (SageMaker endpoints only)."""
    framework: Literal["pytorch"] = "pytorch"
    """The serving framework (PyTorch only for this model)."""
    framework_version: str = "2.0.0"
    """PyTorch version of the inference image."""
    py_version: str | None = None
    """Python version of the inference image (e.g. 'py310')."""
    entry_point: str | None = None  # inference handler; default: the sentiment handler
    """Inference handler script (model_fn / input_fn / predict_fn / output_fn); default: the sentiment handler."""
    source_dir: str | None = None  # folder of entry_point (and of a requirements.txt)
    """Folder of entry_point (and of a requirements.txt installed before serving)."""
    image_uri: str | None = None
    """Inference image to run instead of the one chosen from framework_version and py_version."""
    region: str | None = None
    """AWS region of the model and its endpoint; default the configured region."""
    name: str | None = None  # model / endpoint config / endpoint name; default: timestamped
    """Name of the model, endpoint config and endpoint; default: a timestamped name."""
    env: dict[str, str] = Field(default_factory=dict)
    """Environment variables set in the inference container."""

    _role = field_validator("role")(classmethod(lambda cls, v: check.role(v)))
    _version = field_validator("framework_version")(classmethod(lambda cls, v: check.version_text(v)))
    _py = field_validator("py_version")(classmethod(lambda cls, v: check.py_version(v)))
    _image = field_validator("image_uri")(classmethod(lambda cls, v: check.image_uri(v)))
    _region = field_validator("region")(classmethod(lambda cls, v: check.region(v)))
    _env = field_validator("env")(classmethod(lambda cls, v: check.environment(v, "env") or {}))

    @field_validator("model_data")
    @classmethod
    def _model_data(cls, v: str) -> str:
        if not v:
            raise SagelaunchError("model_data='' is empty; pass s3://…/model.tar.gz, a local model.tar.gz or a model "
                                  "folder", field="model_data", value=v, allowed="s3://…/model.tar.gz, a local model.tar.gz or a model folder",
                                  fix="pass s3://…/model.tar.gz, a local model.tar.gz or a model folder")
        if v.startswith("s3://"):
            _check_bucket_name(v)
            return check.s3_uri("model_data", v)
        if "://" in v and not v.startswith("file://"):
            raise SagelaunchError(f"model_data={v!r}: allowed are s3://…, file://… or a local path", field="model_data",
                                  value=v, allowed="s3://…, file://… or a local path", fix="use one of those forms")
        return v

    @field_validator("name")
    @classmethod
    def _name(cls, v: str | None) -> str | None:
        if v is None:
            return v

        return check_name(v, "name")

    # ------------------------------------------------------------------ helpers
    def handler_files(self) -> tuple[str | None, str | None]:
        """(entry_point path, requirements.txt path) resolved against source_dir."""
        if self.entry_point is None:
            return None, None
        base = self.source_dir or ""
        entry = os.path.join(base, self.entry_point)
        if not os.path.isfile(entry):
            raise SagelaunchError(f"entry_point={self.entry_point!r}: no such file" + (f" in source_dir={base!r}" if base
                                  else ""), field="entry_point", value=self.entry_point, allowed="an existing file",
                                  fix="check the path")
        requirements = os.path.join(base, "requirements.txt") if base else None
        return entry, requirements if requirements and os.path.isfile(requirements) else None

    def serving_image_uri(self, instance_type: str, region: str) -> str:
        return self.image_uri or inference_image_uri(
            self.framework, self.framework_version, region=region, instance_type=instance_type, py_version=self.py_version
        )

    def _make_name(self) -> str:
        return self.name or job_name("sagelaunch-model")

    # ------------------------------------------------------------------ deploy
    def deploy(self, initial_instance_count: int | None = None, instance_type: str | None = None,
               serializer: Any = None, deserializer: Any = None, accelerator_type: str | None = None,
               endpoint_name: str | None = None, tags: Any = None, kms_key: str | None = None, wait: bool = True,
               *, max_body_bytes: int | None = None, **v2_options: Any) -> Predictor:
        """Serve the model; returns a Predictor (predict / delete). The order is v2's:
        deploy(initial_instance_count, instance_type, serializer, deserializer, accelerator_type, endpoint_name, …).

        instance_type="local" serves it on 127.0.0.1 in a child process; any SageMaker hosting type
        creates a real endpoint (model, endpoint config and endpoint, one name) and, with wait, blocks until
        InService. Without a serializer the predictor sends and reads JSON. max_body_bytes applies to local
        endpoints (SageMaker's own limit is 6 MB).
        """
        unknown = {k: v for k, v in v2_options.items() if k not in UNSUPPORTED_DEPLOY}
        if unknown:
            raise unexpected_arguments("Model.deploy", unknown, (*UNSUPPORTED_DEPLOY, "endpoint_name", "wait"))
        refuse_unsupported({"accelerator_type": accelerator_type, **v2_options})
        count, instance_type = deploy_target(initial_instance_count, instance_type)
        entry, requirements = self.handler_files()
        name = check_endpoint_name(endpoint_name) if endpoint_name else self._make_name()
        if is_local(instance_type):
            return self._deploy_local(name, entry, requirements, max_body_bytes, serializer, deserializer)

        sme.check_instance_type(instance_type)
        region = resolve_region(self.region)
        image = self.serving_image_uri(instance_type, region)
        role = role_arn(self.role, instance_type, region)
        uri = sme.upload_model_data(self.model_data, region, name, entry_point=entry, requirements=requirements)
        container = {"Image": image, "Environment": {
            **sme.script_environment("inference.py", sme.MODEL_CODE_DIR, 20, region), **self.env}, "ModelDataUrl": uri}
        resources = sme.create_endpoint(
            model_name=name, endpoint_name=name, role_arn=role, container=container, instance_type=instance_type,
            initial_instance_count=count, region=region, tags=check.tags(tags), kms_key=kms_key, wait=wait)
        return SageMakerPredictor(resources, serializer, deserializer)

    def _deploy_local(self, name: str, entry: str | None, requirements: str | None, max_body_bytes: int | None,
                      serializer: Any = None, deserializer: Any = None) -> LocalPredictor:
        from sagelaunch.launcher import LocalEndpoint  # lazy: local serving loads asyncio and the local registry

        model_data, scratch = self.model_data, None
        if entry:  # a custom handler: pack it in as SageMaker would
            scratch = tempfile.mkdtemp(prefix="sagelaunch-model-")
            model_data = str(package_model(model_data.removeprefix("file://"), os.path.join(scratch, "model.tar.gz"),
                                           entry_point=entry, requirements=requirements))
        try:
            endpoint = LocalEndpoint(model_data, name, region=self.region, max_body_bytes=max_body_bytes).start()
        finally:  # the endpoint unpacked its own copy
            if scratch:
                shutil.rmtree(scratch, ignore_errors=True)
        return LocalPredictor(endpoint, serializer, deserializer)


def _check_bucket_name(uri: str) -> None:
    """Name what is wrong with the bucket of s3://<bucket>/… (the generic 'not an S3 URI' hides it)."""
    bucket = uri[len("s3://"):].split("/", 1)[0]
    if not bucket:
        raise SagelaunchError(f"model_data={uri!r} has no bucket name; use s3://<bucket>/<key>/model.tar.gz",
                              field="model_data", value=uri, allowed="s3://<bucket>/<key>",
                              fix="use s3://<bucket>/<key>/model.tar.gz")
    if not 3 <= len(bucket) <= 63:
        raise SagelaunchError(f"model_data={uri!r}: bucket name {bucket!r} has {len(bucket)} characters; S3 bucket "
                              "names have 3 to 63 — check the bucket name", field="model_data", value=uri,
                              allowed="bucket names of 3 to 63 characters", fix="check the bucket name")
    if not re.fullmatch(r"[a-z0-9][a-z0-9.-]*[a-z0-9]", bucket):
        raise SagelaunchError(f"model_data={uri!r}: bucket name {bucket!r} may hold only lowercase letters, digits, "
                              "'.' and '-', starting and ending with a letter or digit", field="model_data", value=uri,
                              allowed="lowercase letters, digits, '.' and '-'", fix="check the bucket name")
