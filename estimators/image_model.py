"""The model of a generic Estimator's job, as v2's `Model(image_uri, model_data, role)` holds it: the training image
serves its own model, on SageMaker (an endpoint, or a batch transform); it cannot be served here (no Docker)."""

from __future__ import annotations

from typing import Any

from sagelaunch.estimators import field_checks as check
from sagelaunch.estimators.deploy_checks import check_endpoint_name, deploy_target, refuse_unsupported
from sagelaunch.estimators.framework_model import base_from_name, base_name_from_image
from sagelaunch.jobspec.instance_types import is_local
from sagelaunch.jobspec.errors import SagelaunchError
from sagelaunch.jobspec.names import job_name
from sagelaunch.launcher import SageMakerPredictor, create_model, resolve_region, role_arn
from sagelaunch.launcher import sagemaker_endpoint as sme


class ImageModel:
    """A trained model served by its own image (v2's sagemaker.model.Model of a generic estimator)."""

    def __init__(self, image_uri: str, model_data: str, role: str | None, *, name: str | None = None,
                 env: dict[str, str] | None = None, vpc_config: dict[str, Any] | None = None,
                 sagemaker_session: Any = None, enable_network_isolation: bool = False, region: str | None = None) -> None:
        self.image_uri, self.model_data, self.role, self.name = image_uri, model_data, role, name
        self.env = dict(env or {})
        self.vpc_config, self.sagemaker_session = vpc_config, sagemaker_session
        self.endpoint_name: str | None = None
        self.network_isolation, self.region = enable_network_isolation, region

    def _create_sagemaker_model(self, instance_type: str, accelerator_type: Any = None, tags: Any = None,
                                **kwargs: Any) -> str:
        """CreateModel: PrimaryContainer {Image, Environment, ModelDataUrl}, as v2 sends it."""
        region = resolve_region(self.region)
        self.name = self.name or job_name(base_name_from_image(self.image_uri))
        container = {"Image": self.image_uri, "Environment": dict(self.env), "ModelDataUrl": self.model_data}
        return create_model(self.name, role_arn(self.role, instance_type, region), container, region,
                            tags=check.tags(tags), vpc_config=self.vpc_config,
                            enable_network_isolation=self.network_isolation)

    def deploy(self, initial_instance_count: int | None = None, instance_type: str | None = None,
               serializer: Any = None, deserializer: Any = None, accelerator_type: Any = None,
               endpoint_name: str | None = None, tags: Any = None, kms_key: str | None = None, wait: bool = True,
               data_capture_config: Any = None, async_inference_config: Any = None,
               serverless_inference_config: Any = None, volume_size: int | None = None,
               model_data_download_timeout: int | None = None,
               container_startup_health_check_timeout: int | None = None, inference_recommendation_id: Any = None,
               explainer_config: Any = None, *, max_body_bytes: int | None = None) -> Any:
        """v2's Model.deploy of the image's own server: CreateModel, CreateEndpointConfig, CreateEndpoint (on
        SageMaker; the image cannot be served here without Docker)."""
        if is_local(instance_type):
            fix = ("serve the model with the framework model (PyTorchModel / TensorFlowModel with an entry point), "
                   "or deploy to an ml.* instance type")
            raise SagelaunchError(f"deploy(instance_type={instance_type!r}) of the image {self.image_uri}: the image "
                                  f"runs its own server, and local endpoints run without Docker; {fix}",
                                  field="instance_type", value=instance_type, allowed="an ml.* instance type", fix=fix)
        refuse_unsupported(dict(accelerator_type=accelerator_type, data_capture_config=data_capture_config,
                                async_inference_config=async_inference_config,
                                serverless_inference_config=serverless_inference_config,
                                inference_recommendation_id=inference_recommendation_id,
                                explainer_config=explainer_config))
        if max_body_bytes is not None:
            raise SagelaunchError("max_body_bytes limits a local endpoint's requests; drop it for an ml.* endpoint",
                                  field="max_body_bytes", value=max_body_bytes, allowed="None", fix="drop it")
        variant_options = {k: v for k, v in (
            ("VolumeSizeInGB", volume_size), ("ModelDataDownloadTimeoutInSeconds", model_data_download_timeout),
            ("ContainerStartupHealthCheckTimeoutInSeconds", container_startup_health_check_timeout)) if v is not None}
        count, instance_type = deploy_target(initial_instance_count, instance_type)
        assert instance_type is not None  # deploy_target refuses a missing one
        sme.check_instance_type(instance_type)
        if endpoint_name is not None:
            check_endpoint_name(endpoint_name)
        region = resolve_region(self.region)
        self.name = self.name or job_name(base_name_from_image(self.image_uri))
        endpoint = endpoint_name or job_name(base_from_name(self.name))
        container = {"Image": self.image_uri, "Environment": dict(self.env), "ModelDataUrl": self.model_data}
        resources = sme.create_endpoint(
            model_name=self.name, endpoint_name=endpoint, role_arn=role_arn(self.role, instance_type, region),
            container=container, instance_type=instance_type, initial_instance_count=count, region=region,
            tags=check.tags(tags), vpc_config=self.vpc_config, enable_network_isolation=self.network_isolation,
            kms_key=kms_key, variant_options=variant_options, wait=wait)
        self.endpoint_name = endpoint
        return SageMakerPredictor(resources, serializer, deserializer)
