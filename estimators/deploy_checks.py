"""Checks of deploy()'s arguments shared by every model: v2's options sagelaunch refuses by name, the instance
count and type, the endpoint name."""

from __future__ import annotations

from typing import Any

from sagelaunch.jobspec.instance_types import is_local
from sagelaunch.jobspec.errors import SagelaunchError
from sagelaunch.jobspec.names import check_name

# v2's Model.deploy arguments sagelaunch does not implement (None/False = not asked for)
UNSUPPORTED_DEPLOY = {
    "data_capture_config": "Model Monitor data capture", "async_inference_config": "asynchronous endpoints",
    "serverless_inference_config": "serverless endpoints", "inference_recommendation_id": "Inference Recommender",
    "explainer_config": "Clarify online explainability", "accept_eula": "JumpStart model licences",
    "endpoint_logging": "live endpoint logs", "resources": "inference components",
    "endpoint_type": "inference components", "managed_instance_scaling": "inference components",
    "inference_component_name": "inference components", "routing_config": "routing strategies",
    "model_reference_arn": "JumpStart hub models", "update_endpoint": "updating an existing endpoint",
}
RETIRED_ACCELERATOR = ("accelerator_type={!r}: Amazon Elastic Inference is retired (no new accelerators since "
                       "April 2024); deploy to a GPU instance type such as ml.g5.xlarge, or to Graviton (ml.c7g.*)")


def refuse_unsupported(options: dict[str, Any]) -> None:
    """One error naming every v2 deploy option asked for that sagelaunch does not implement."""
    asked = [k for k, v in options.items() if k in UNSUPPORTED_DEPLOY and v not in (None, False)]
    if options.get("accelerator_type"):
        raise SagelaunchError(RETIRED_ACCELERATOR.format(options["accelerator_type"]), field="accelerator_type",
                              value=options["accelerator_type"], allowed="None",
                              fix="deploy to a GPU instance type such as ml.g5.xlarge, or to Graviton (ml.c7g.*)")
    if asked:
        what = "; ".join(f"{k} ({UNSUPPORTED_DEPLOY[k]})" for k in asked)
        fix = f"drop {'it' if len(asked) == 1 else 'them'} for a real-time endpoint, or use the SageMaker SDK for that feature"
        raise SagelaunchError(f"sagelaunch's deploy does not implement {what}; {fix}", field=asked[0],
                              value=options[asked[0]], allowed="None", fix=fix)


def deploy_target(count: Any, instance_type: str | None) -> tuple[int, str]:
    """(count, instance_type) of a deploy: v2 needs both for a real-time endpoint; a local endpoint is one process
    whatever the count."""
    if instance_type is None:
        raise SagelaunchError("deploy needs instance_type: 'local' (here, no Docker) or a SageMaker hosting type such "
                              "as 'ml.m5.xlarge'; v2's order is deploy(initial_instance_count, instance_type, …)",
                              field="instance_type", value=None, allowed="'local' or a SageMaker hosting type",
                              fix="e.g. instance_type='ml.m5.xlarge'")
    if count is None and is_local(instance_type):
        return 1, instance_type
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise SagelaunchError(f"initial_instance_count={count!r} must be a whole number >= 1 for instance_type="
                              f"{instance_type!r}; v2's order is deploy(initial_instance_count, instance_type, …)",
                              field="initial_instance_count", value=count, allowed="a whole number >= 1",
                              fix="v2's order is deploy(initial_instance_count, instance_type, …)")
    return count, instance_type


def check_endpoint_name(name: str) -> str:
    return check_name(name, "endpoint_name")
