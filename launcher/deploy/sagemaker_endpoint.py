"""A SageMaker real-time endpoint for a packaged model: upload, CreateModel, CreateEndpointConfig,
CreateEndpoint, wait for InService; InvokeEndpoint; delete all three.

boto3 reaches AWS (or a moto server) through launcher.aws.clients, so AWS_ENDPOINT_URL is honoured.
"""

from __future__ import annotations

import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jobspec.s3uri import parse_s3_uri
from launcher.aws.clients import client
from launcher.aws.errors import translate
from launcher.deploy.package import HANDLER_PATH, archive_members, is_archive, package_model

ENDPOINT_TIMEOUT_S = 30 * 60  # SageMaker endpoints usually take 5–10 minutes
VARIANT_NAME = "AllTraffic"


def production_variant_instance_types() -> tuple[str, ...]:
    """What CreateEndpointConfig accepts, from botocore's model of the service."""
    import botocore.session

    model = botocore.session.get_session().get_service_model("sagemaker")
    return tuple(model.shape_for("ProductionVariantInstanceType").enum)


def check_instance_type(instance_type: str) -> str:
    from jobspec.suggest import choice_error

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
    from launcher.aws import s3

    with tempfile.TemporaryDirectory(prefix="sagelaunch-deploy-") as tmp:
        local = model_data.removeprefix("file://")
        if model_data.startswith("s3://"):
            src_bucket, key = parse_s3_uri(model_data)
            local = str(Path(tmp) / "source.tar.gz")
            with translate(f"download {model_data}"):
                client("s3", region).download_file(src_bucket, key, local)
        elif not Path(local).exists():
            raise ValueError(f"model_data={model_data!r} does not exist; pass a model folder, a model.tar.gz or s3:// URI")
        ready = is_archive(local) and HANDLER_PATH in archive_members(local) and not (entry_point or requirements)
        if ready and model_data.startswith("s3://"):
            return model_data
        archive = local if ready else str(package_model(local, Path(tmp) / "model.tar.gz",
                                                        entry_point=entry_point, requirements=requirements))
        target = f"s3://{bucket or s3.default_bucket(region)}/{name}/model.tar.gz"
        return s3.upload_file(archive, target, region)


def create_endpoint(*, model_data_uri: str, image_uri: str, role_arn: str, instance_type: str,
                    initial_instance_count: int, name: str, region: str, environment: dict[str, str] | None = None,
                    wait: bool = True, timeout: float = ENDPOINT_TIMEOUT_S, poll: float = 2.0) -> EndpointResources:
    """CreateModel → CreateEndpointConfig → CreateEndpoint (→ wait for InService)."""
    sm = client("sagemaker", region)
    env = {
        "SAGEMAKER_PROGRAM": "inference.py",
        "SAGEMAKER_SUBMIT_DIRECTORY": "/opt/ml/model/code",
        "SAGEMAKER_CONTAINER_LOG_LEVEL": "20",
        "SAGEMAKER_REGION": region,
        **(environment or {}),
    }
    res = EndpointResources(name, name, name, region, model_data_uri, image_uri, instance_type)
    with translate(f"create model {name}"):
        sm.create_model(ModelName=name, ExecutionRoleArn=role_arn,
                        PrimaryContainer={"Image": image_uri, "ModelDataUrl": model_data_uri, "Environment": env})
    try:
        with translate(f"create endpoint config {name}"):
            sm.create_endpoint_config(EndpointConfigName=name, ProductionVariants=[{
                "VariantName": VARIANT_NAME, "ModelName": name, "InitialInstanceCount": initial_instance_count,
                "InstanceType": instance_type, "InitialVariantWeight": 1.0,
            }])
        with translate(f"create endpoint {name}"):
            sm.create_endpoint(EndpointName=name, EndpointConfigName=name)
        if wait:
            wait_in_service(name, region, timeout=timeout, poll=poll)
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
                raise RuntimeError(f"endpoint {endpoint_name} is {state}: {described.get('FailureReason', 'no reason given')}")
            if time.monotonic() > deadline:
                raise TimeoutError(f"endpoint {endpoint_name} still {state} after {timeout:.0f}s")
            time.sleep(poll)


def invoke(endpoint_name: str, region: str, body: bytes, content_type: str, accept: str) -> tuple[int, bytes, str]:
    """(status, body, content type); a refusal by the model comes back as its original status."""
    runtime = client("sagemaker-runtime", region)
    try:
        answer = runtime.invoke_endpoint(EndpointName=endpoint_name, Body=body, ContentType=content_type, Accept=accept)
    except runtime.exceptions.ModelError as exc:  # the container answered non-200
        error = exc.response.get("Error", {})
        status = int(exc.response.get("OriginalStatusCode") or 500)
        message = exc.response.get("OriginalMessage") or error.get("Message", str(exc))
        return status, message.encode(), "text/plain"
    return 200, answer["Body"].read(), answer.get("ContentType", "")


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
            if "Could not find" not in str(exc) and "does not exist" not in str(exc):
                with translate(f"delete {kind} {value}"):
                    raise
    return deleted

