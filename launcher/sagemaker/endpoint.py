"""A SageMaker real-time endpoint for a packaged model: upload (or v2's repack with the serving code under
code/), CreateModel, CreateEndpointConfig, CreateEndpoint, wait for InService; InvokeEndpoint; delete all three.
The requests' shapes are v2's (tests/parity_v2/test_deploy.py compares them with the real SDK v2).

boto3 reaches AWS (or a moto server) through launcher.common.aws.clients, so AWS_ENDPOINT_URL is honoured.
"""

from __future__ import annotations

import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sagelaunch.jobspec.errors import SagelaunchError, SagelaunchRuntimeError
from sagelaunch.jobspec.s3uri import default_bucket_name, parse_s3_uri
from sagelaunch.jobspec.suggest import choice_error
from sagelaunch.launcher.common.aws import s3
from sagelaunch.launcher.common.aws.clients import account_id, client
from sagelaunch.launcher.common.aws.errors import is_not_found, translate
from sagelaunch.launcher.common.package import HANDLER_PATH, archive_members, is_archive, package_model, repack_model

ENDPOINT_TIMEOUT_S = 30 * 60  # SageMaker endpoints usually take 5–10 minutes
VARIANT_NAME = "AllTraffic"


def production_variant_instance_types() -> tuple[str, ...]:
    """What CreateEndpointConfig accepts, from botocore's model of the service."""
    import botocore.session

    model = botocore.session.get_session().get_service_model("sagemaker")
    return tuple(model.shape_for("ProductionVariantInstanceType").enum)


def check_instance_type(instance_type: str) -> str:
    allowed = production_variant_instance_types()
    if instance_type not in allowed:
        raise choice_error("instance_type", instance_type, ("local", *allowed))
    return instance_type


@dataclass
class EndpointResources:
    """The three SageMaker resources behind one endpoint (they share one name by default)."""

    endpoint_name: str
    endpoint_config_name: str
    model_name: str
    region: str
    model_data: str
    image_uri: str
    instance_type: str


def upload_model_data(model_data: str, region: str, name: str, *, entry_point: str | None = None,
                      requirements: str | None = None, bucket: str | None = None) -> str:
    """An s3:// model.tar.gz that has code/inference.py: uploaded (and packaged) when needed.

    A folder, or an archive without a handler, is packaged with the handler first; an s3:// archive
    that already has one (and no other entry_point asked for) is used as it is.
    """
    with tempfile.TemporaryDirectory(prefix="sagelaunch-deploy-") as tmp:
        local = model_data.removeprefix("file://")
        if model_data.startswith("s3://"):
            src_bucket, key = parse_s3_uri(model_data)
            local = str(Path(tmp) / "source.tar.gz")
            with translate(f"download {model_data}"):
                client("s3", region).download_file(src_bucket, key, local)
        elif not Path(local).exists():
            raise SagelaunchError(f"model_data={model_data!r} does not exist; pass a model folder, a model.tar.gz or s3:// URI",
                                  field="model_data", value=model_data,
                                  allowed="a model folder, a model.tar.gz or an s3:// URI",
                                  fix="pass a model folder, a model.tar.gz or s3:// URI")
        ready = is_archive(local) and HANDLER_PATH in archive_members(local) and not (entry_point or requirements)
        if ready and model_data.startswith("s3://"):
            return model_data
        archive = local if ready else str(package_model(local, Path(tmp) / "model.tar.gz",
                                                        entry_point=entry_point, requirements=requirements))
        target = f"s3://{bucket or s3.default_bucket(region)}/{name}/model.tar.gz"
        return s3.upload_file(archive, target, region)


# the serving containers' script-mode variables (SageMaker inference toolkit)
PROGRAM_VAR, SUBMIT_DIR_VAR = "SAGEMAKER_PROGRAM", "SAGEMAKER_SUBMIT_DIRECTORY"
LOG_LEVEL_VAR, REGION_VAR = "SAGEMAKER_CONTAINER_LOG_LEVEL", "SAGEMAKER_REGION"
MODEL_CODE_DIR = "/opt/ml/model/code"  # where a repacked archive's code/ lands in the container


def script_environment(program: str, submit_directory: str, log_level: int | str, region: str) -> dict[str, str]:
    """The four variables the PyTorch serving container reads to find and run the handler."""
    return {PROGRAM_VAR: program, SUBMIT_DIR_VAR: submit_directory, LOG_LEVEL_VAR: str(log_level),
            REGION_VAR: region}


def repack_to_s3(model_data: str, target: str, region: str, *, entry_point: str, source_dir: str | None = None,
                 dependencies: tuple[str, ...] = (), kms_key: str | None = None) -> str:
    """model_data (s3:// or local archive) with entry_point / source_dir (local or s3:// sourcedir.tar.gz) /
    dependencies under code/, uploaded to `target` (the SDK's repack); returns target.

    As v2 uploads it: KMS-encrypted (kms_key, else the AWS managed key), and into the default bucket only
    when this account owns it (ExpectedBucketOwner: a squatted bucket name is refused)."""
    with tempfile.TemporaryDirectory(prefix="sagelaunch-repack-") as tmp:
        local_model = _local_copy(model_data, Path(tmp) / "model-source.tar.gz", region, "model_data")
        local_source = source_dir
        if source_dir and source_dir.startswith("s3://"):
            local_source = _local_copy(source_dir, Path(tmp) / "sourcedir.tar.gz", region, "source_dir")
        archive = repack_model(local_model, Path(tmp) / "model.tar.gz", entry_point=entry_point,
                               source_dir=local_source, dependencies=dependencies)
        return s3.upload_file(archive, target, region, extra_args=upload_args(target, region, kms_key))


def upload_args(target: str, region: str, kms_key: str | None) -> dict[str, str]:
    args = {"ServerSideEncryption": "aws:kms", **({"SSEKMSKeyId": kms_key} if kms_key else {})}
    account = account_id(region)
    if parse_s3_uri(target)[0] == default_bucket_name(region, account):
        args["ExpectedBucketOwner"] = account
    return args


def _local_copy(uri: str, dest: Path, region: str, field: str) -> str:
    if not uri.startswith("s3://"):
        local = uri.removeprefix("file://")
        if not Path(local).exists():
            raise SagelaunchError(f"{field}={uri!r} does not exist; pass an s3:// URI or a local path", field=field,
                                  value=uri, allowed="an s3:// URI or a local path that exists",
                                  fix="pass an s3:// URI or a local path")
        return local
    bucket, key = parse_s3_uri(uri)
    with translate(f"download {uri}"):
        client("s3", region).download_file(bucket, key, str(dest))
    return str(dest)


def create_model_request(model_name: str, role_arn: str, container: dict[str, Any],
                         tags: list[dict[str, str]] | None = None, vpc_config: dict[str, Any] | None = None,
                         enable_network_isolation: bool = False) -> dict[str, Any]:
    """CreateModel as v2 sends it (before an endpoint or a transform job): optional keys only when set."""
    request: dict[str, Any] = {"ModelName": model_name, "ExecutionRoleArn": role_arn, "PrimaryContainer": container}
    if tags:
        request["Tags"] = tags
    if vpc_config:
        request["VpcConfig"] = vpc_config
    if enable_network_isolation:
        request["EnableNetworkIsolation"] = True
    return request


def create_endpoint(*, model_name: str, endpoint_name: str, role_arn: str, container: dict[str, Any],
                    instance_type: str, initial_instance_count: int, region: str,
                    tags: list[dict[str, str]] | None = None, vpc_config: dict[str, Any] | None = None,
                    enable_network_isolation: bool = False, kms_key: str | None = None,
                    variant_options: dict[str, Any] | None = None, wait: bool = True,
                    timeout: float = ENDPOINT_TIMEOUT_S, poll: float = 2.0) -> EndpointResources:
    """CreateModel → CreateEndpointConfig → CreateEndpoint (→ wait for InService), shaped as the SDK v2
    sends them: the endpoint config is named after the endpoint; empty optional fields are left out,
    except CreateEndpoint's Tags (always sent)."""
    sm = client("sagemaker", region)
    res = EndpointResources(endpoint_name, endpoint_name, model_name, region, container.get("ModelDataUrl", ""),
                            container["Image"], instance_type)
    model_request = create_model_request(model_name, role_arn, container, tags, vpc_config, enable_network_isolation)
    variant = {"VariantName": VARIANT_NAME, "ModelName": model_name, "InitialVariantWeight": 1,
               "InitialInstanceCount": initial_instance_count, "InstanceType": instance_type,
               **(variant_options or {})}
    config_request: dict[str, Any] = {"EndpointConfigName": endpoint_name, "ProductionVariants": [variant]}
    if tags:
        config_request["Tags"] = tags
    if kms_key:
        config_request["KmsKeyId"] = kms_key
    with translate(f"create model {model_name}"):
        sm.create_model(**model_request)
    try:
        with translate(f"create endpoint config {endpoint_name}"):
            sm.create_endpoint_config(**config_request)
        with translate(f"create endpoint {endpoint_name}"):
            sm.create_endpoint(EndpointName=endpoint_name, EndpointConfigName=endpoint_name, Tags=list(tags or []))
        if wait:
            wait_in_service(endpoint_name, region, timeout=timeout, poll=poll)
    except BaseException:
        delete_endpoint(res)  # nothing half-made is left running (or billing)
        raise
    return res


def wait_in_service(endpoint_name: str, region: str, *, timeout: float = ENDPOINT_TIMEOUT_S,
                    poll: float = 2.0) -> dict[str, Any]:
    """Poll DescribeEndpoint until InService; raise on Failed or after `timeout` seconds."""
    from rich.console import Console

    sm = client("sagemaker", region)
    deadline = time.monotonic() + timeout
    with Console(stderr=True).status(f"endpoint {endpoint_name}: creating") as status:
        while True:
            with translate(f"describe endpoint {endpoint_name}"):
                described = sm.describe_endpoint(EndpointName=endpoint_name)
            state = described["EndpointStatus"]
            status.update(f"endpoint {endpoint_name}: {state}")
            if state == "InService":
                return described
            if state in ("Failed", "OutOfService", "Deleting"):
                raise SagelaunchRuntimeError(
                    f"endpoint {endpoint_name} is {state}: {described.get('FailureReason', 'no reason given')}",
                    field="endpoint_name", value=endpoint_name, allowed="InService",
                    fix="read FailureReason and the endpoint's CloudWatch logs")
            if time.monotonic() > deadline:
                raise TimeoutError(f"endpoint {endpoint_name} still {state} after {timeout:.0f}s")
            time.sleep(poll)


def invoke(endpoint_name: str, region: str, body: bytes | str, content_type: str, accept: str,
           **options: Any) -> tuple[int, bytes, str]:
    """(status, body, content type); a refusal by the model comes back as its original status.
    `options`: further InvokeEndpoint fields (TargetModel, CustomAttributes, …)."""
    runtime = client("sagemaker-runtime", region)
    try:
        answer = runtime.invoke_endpoint(EndpointName=endpoint_name, Body=body, ContentType=content_type,
                                         Accept=accept, **options)
    except runtime.exceptions.ModelError as exc:  # the container answered non-200
        error = exc.response.get("Error", {})
        status = int(exc.response.get("OriginalStatusCode") or 500)
        message = exc.response.get("OriginalMessage") or error.get("Message", str(exc))
        return status, message.encode(), "text/plain"
    return 200, answer["Body"].read(), answer.get("ContentType", "")


def endpoint_config_name(endpoint_name: str, region: str) -> str:
    with translate(f"describe endpoint {endpoint_name}"):
        return client("sagemaker", region).describe_endpoint(EndpointName=endpoint_name)["EndpointConfigName"]


def model_names(config_name: str, region: str) -> list[str]:
    """The models behind an endpoint config's variants (v2's Predictor._get_model_names)."""
    with translate(f"describe endpoint config {config_name}"):
        variants = client("sagemaker", region).describe_endpoint_config(EndpointConfigName=config_name)
    return [v["ModelName"] for v in variants["ProductionVariants"] if "ModelName" in v]


def delete_one(kind: str, name: str, region: str) -> None:
    """DeleteEndpoint / DeleteEndpointConfig / DeleteModel, one call as v2's Session sends it."""
    sm = client("sagemaker", region)
    call, key = {"endpoint": (sm.delete_endpoint, "EndpointName"),
                 "endpoint config": (sm.delete_endpoint_config, "EndpointConfigName"),
                 "model": (sm.delete_model, "ModelName")}[kind]
    with translate(f"delete {kind} {name}"):
        call(**{key: name})


def delete_endpoint(res: EndpointResources) -> list[str]:
    """Delete endpoint, endpoint config and model; return what was deleted (missing ones are skipped)."""
    sm = client("sagemaker", res.region)
    deleted = []
    for kind, call, key, value in (
        ("endpoint", sm.delete_endpoint, "EndpointName", res.endpoint_name),
        ("endpoint config", sm.delete_endpoint_config, "EndpointConfigName", res.endpoint_config_name),
        ("model", sm.delete_model, "ModelName", res.model_name),
    ):
        try:
            call(**{key: value})
            deleted.append(f"{kind} {value}")
        except Exception as exc:  # already gone (ValidationException "Could not find …") is fine
            if not is_not_found(exc):
                with translate(f"delete {kind} {value}"):
                    raise
    return deleted

