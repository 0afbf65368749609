"""The model of a generic Estimator's job, as v2's `Model(image_uri, model_data, role)` holds it: the training image
serves its own model. It is created on SageMaker for batch transform; it cannot be served here (no Docker)."""

from __future__ import annotations

from typing import Any

from sagelaunch.jobspec.errors import SagelaunchError


class ImageModel:
    """A trained model served by its own image (v2's sagemaker.model.Model of a generic estimator)."""

    def __init__(self, image_uri: str, model_data: str, role: str | None, *, name: str | None = None,
                 env: dict[str, str] | None = None, vpc_config: dict[str, Any] | None = None,
                 sagemaker_session: Any = None, enable_network_isolation: bool = False, region: str | None = None) -> None:
        self.image_uri, self.model_data, self.role, self.name = image_uri, model_data, role, name
        self.env = dict(env or {})
        self.vpc_config, self.sagemaker_session = vpc_config, sagemaker_session
        self.network_isolation, self.region = enable_network_isolation, region

    def _create_sagemaker_model(self, instance_type: str, accelerator_type: Any = None, tags: Any = None,
                                **kwargs: Any) -> str:
        """CreateModel: PrimaryContainer {Image, Environment, ModelDataUrl}, as v2 sends it."""
        from sagelaunch.estimators import field_checks as check
        from sagelaunch.estimators.framework_model import base_name_from_image
        from sagelaunch.jobspec.names import job_name
        from sagelaunch.launcher.aws.clients import resolve_region
        from sagelaunch.launcher.aws.training import role_arn
        from sagelaunch.launcher.transform.jobs import create_model

        region = resolve_region(self.region)
        self.name = self.name or job_name(base_name_from_image(self.image_uri))
        container = {"Image": self.image_uri, "Environment": dict(self.env), "ModelDataUrl": self.model_data}
        return create_model(self.name, role_arn(self.role, instance_type, region), container, region,
                            tags=check.tags(tags), vpc_config=self.vpc_config,
                            enable_network_isolation=self.network_isolation)

    def deploy(self, *args: Any, **kwargs: Any) -> Any:
        fix = ("serve it with the framework model (PyTorchModel / TensorFlowModel with an entry point), or run a "
               "batch transform on SageMaker with estimator.transformer(…)")
        raise SagelaunchError(f"deploy() of the image {self.image_uri}: sagelaunch does not create endpoints for a "
                              f"bring-your-own image; {fix}", field="image_uri", value=self.image_uri,
                              allowed="a framework model", fix=fix)
