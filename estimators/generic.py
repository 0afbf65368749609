"""SDK v2's generic `Estimator(image_uri, role, instance_count, instance_type, …)`: any training image.

It sends what v2's `sagemaker.estimator.Estimator` sends: the image's own program runs (no code archive, no
sagemaker_* hyperparameters, the hyperparameters as str(value)) unless an entry_point is given, which makes it a
script-mode job as a framework estimator's (JSON-encoded hyperparameters when a source_dir is given, as v2).
Locally only the framework images sagelaunch runs (PyTorch / TensorFlow training images) run, with an entry point;
any other image needs Docker and is refused by name (`estimators/resolve.py`, `generic_image`).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, ClassVar

from sagelaunch.estimators.base import FrameworkEstimator
from sagelaunch.estimators.image_model import ImageModel
from sagelaunch.estimators.trained_model import trained_job_of, vpc_config_of
from sagelaunch.jobspec.catalog import image_framework
from sagelaunch.jobspec.errors import SagelaunchError
from sagelaunch.jobspec.spec import CodeSpec, TrainingJobSpec, replace
from sagelaunch.jobspec.suggest import unexpected_arguments

if TYPE_CHECKING:
    from sagelaunch.estimators.image_model import ImageModel


def refuse_script_mode_refit(estimator: "Estimator") -> None:
    """An Estimator attached to a script-mode job (a framework estimator's) holds no entry point, as v2's: v2 would
    send the job's sagemaker_program and code folder again as plain hyperparameters, names sagelaunch sets itself."""
    job = estimator.latest_training_job
    if job is None or estimator.entry_point is not None:
        return
    program = job.hyperparameters.get("sagemaker_program")
    if program is not None:
        framework = image_framework(estimator.image_uri) or "the job's framework"
        fix = (f"attach it with the estimator of {framework} (e.g. HuggingFace.attach / PyTorch.attach({job.name!r})), "
               f"or give this Estimator entry_point={program} and its source_dir")
        raise SagelaunchError(f"this Estimator was attached to the script-mode job {job.name} (sagemaker_program="
                              f"{program}); fitting it again would drop the script: {fix}", field="entry_point",
                              value=None, allowed="an entry point, or the job's framework estimator", fix=fix)


class Estimator(FrameworkEstimator):
    """SDK v2's sagemaker.estimator.Estimator: a training job of any image, v2's arguments in v2's order."""

    framework: ClassVar[str] = "generic"

    image_uri: str  # required here: the image is what a generic estimator runs
    """The training image (an ECR image URI)."""
    entry_point: str | None = None  # type: ignore[assignment]  # optional: without it the image runs its own program
    """Script run by the image's SageMaker training toolkit (script mode); None: the image's own program runs."""

    POSITIONAL: ClassVar[tuple[str, ...]] = (
        "image_uri", "role", "instance_count", "instance_type", "keep_alive_period_in_seconds", "volume_size",
        "volume_kms_key", "max_run", "input_mode", "output_path", "output_kms_key", "base_job_name",
        "sagemaker_session", "hyperparameters", "tags", "subnets", "security_group_ids", "model_uri",
        "model_channel_name", "metric_definitions", "encrypt_inter_container_traffic", "use_spot_instances",
        "max_wait", "checkpoint_s3_uri", "checkpoint_local_path", "enable_network_isolation", "rules",
        "debugger_hook_config", "tensorboard_output_config", "enable_sagemaker_metrics", "profiler_config",
        "disable_profiler", "environment", "max_retry_attempts", "source_dir", "git_config", "container_log_level",
        "code_location", "entry_point", "dependencies", "instance_groups",
    )

    @property
    def script_framework(self) -> str:
        """The framework whose toolkit runs the entry point: the image's (pytorch/tensorflow), else generic."""
        return image_framework(self.image_uri) or "generic"

    def to_spec(self, job_name: str | None = None, inputs: Any = None) -> TrainingJobSpec:
        refuse_script_mode_refit(self)
        spec = super().to_spec(job_name, inputs)
        script = self.entry_point is not None
        return replace(spec, framework=self.script_framework if script else "generic", ships_code=script,
                       hyperparameters_as_text=self.source_dir is None)

    def _code(self) -> tuple[str, str | None, list[str]]:
        if self.entry_point is None and self._cloned is None:
            return "", None, []  # no code: the image's own program runs
        return super()._code()

    def _code_part(self, settings: dict[str, Any], local: bool) -> Any:
        if self.entry_point is None:
            return CodeSpec(entry_point="", hyperparameters=dict(self.user_hyperparameters or {}),
                            environment=dict(self.environment or {}), container_log_level=self.container_log_level,
                            input_mode=settings["input_mode"], metric_definitions=settings["metric_definitions"],
                            enable_sagemaker_metrics=settings["enable_sagemaker_metrics"],
                            container_entry_point=settings["container_entry_point"],
                            container_arguments=settings["container_arguments"], ships_code=False)
        return super()._code_part(settings, local)

    def check_files(self) -> None:
        if self.entry_point is not None:
            super().check_files()

    def hyperparameters(self) -> dict[str, Any]:
        """v2's Estimator.hyperparameters(): the values as given (JSON-encoded when a source_dir is given),
        with the script-mode sagemaker_* entries once a job was sent."""
        values = dict(self.user_hyperparameters or {})
        if self.source_dir is not None:
            values = {k: json.dumps(v) for k, v in values.items()}
        job = self.latest_training_job
        sent = {k: v for k, v in (job.hyperparameters if job is not None else {}).items()
                if k.startswith("sagemaker_") or k == "mp_parameters"}
        return {**sent, **values}

    def training_image_uri(self, region: str | None = None) -> str:
        """v2's: the image given."""
        return self.image_uri

    def create_model(self, role: str | None = None, image_uri: str | None = None, predictor_cls: Any = None,
                     vpc_config_override: Any = "VPC_CONFIG_DEFAULT", **kwargs: Any) -> "ImageModel":
        """v2's Estimator.create_model: the trained model served by the training image (or image_uri)."""
        job = trained_job_of(self.latest_training_job)
        if predictor_cls is not None:
            raise SagelaunchError("create_model(predictor_cls=…): sagelaunch's predictors are its own; drop "
                                  "predictor_cls", field="predictor_cls", value=predictor_cls, allowed="None",
                                  fix="drop predictor_cls")
        unknown = set(kwargs) - {"name", "env", "enable_network_isolation", "model_kms_key"}
        if unknown:
            raise unexpected_arguments("Estimator.create_model", {k: kwargs[k] for k in unknown},
                                       ("role", "image_uri", "vpc_config_override", "name", "env",
                                        "enable_network_isolation", "model_kms_key"))
        isolation = kwargs.get("enable_network_isolation")
        model_data = job.model_data
        if not isinstance(model_data, str):
            raise SagelaunchError(f"training job {job.name} has no model.tar.gz (ModelArtifacts: {model_data!r}); "
                                  "create_model() needs its model", field="model_data", value=model_data,
                                  allowed="the job's model.tar.gz", fix="train with compressed output")
        return ImageModel(image_uri or self.image_uri, model_data, role or self.role, name=kwargs.get("name"),
                          env=kwargs.get("env"), vpc_config=vpc_config_of(self, vpc_config_override),
                          sagemaker_session=self.sagemaker_session, region=self.resolved.region,
                          enable_network_isolation=self.enable_network_isolation if isolation is None else isolation)
