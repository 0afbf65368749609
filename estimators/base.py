"""FrameworkEstimator: what an estimator does with its arguments (`arguments.EstimatorArguments`, the record the
helpers read).

Cross-field rules run in `sagelaunch.estimators.resolve` once the fields are checked. `to_spec` turns an estimator
into the frozen TrainingJobSpec the backends run (`spec_parts`), `training_job_request` compiles it to a
CreateTrainingJob request (pure), and `fit` submits it to the backend its instance type selects.
"""

from __future__ import annotations

import shutil
from contextlib import nullcontext
from typing import TYPE_CHECKING, Any

from pydantic import PrivateAttr, ValidationError, model_validator

from sagelaunch.estimators import v2_calls
from sagelaunch.estimators.arguments import MAX_RUN_SECS, EstimatorArguments
from sagelaunch.estimators.code_files import check_code_files
from sagelaunch.estimators.debugger import split_rules
from sagelaunch.estimators.explain import RETIRED_ARGUMENTS, explain, unknown_argument_error
from sagelaunch.estimators.field_checks import region as checked_region
from sagelaunch.estimators.resolve import Resolved, resolve
from sagelaunch.estimators.session import Session, session_parts
from sagelaunch.estimators.settings import SessionUse, job_settings
from sagelaunch.estimators.spec_parts import code_part, training_job_spec
from sagelaunch.estimators.trained_model import trained_job_of
from sagelaunch.estimators.transformer import transformer_of
from sagelaunch.jobspec import catalog as support
from sagelaunch.jobspec.argument_errors import ArgumentErrors, argument_errors
from sagelaunch.jobspec.instance_types import is_local
from sagelaunch.jobspec.errors import SagelaunchError, SagelaunchTypeError
from sagelaunch.jobspec.names import check_name, job_name
from sagelaunch.jobspec.positional import bind_positional
from sagelaunch.jobspec.spec import CodeSpec, TrainingJobSpec
from sagelaunch.launcher import attach as find_job
from sagelaunch.launcher import clone_git_code, compile_create_training_job_request, print_logs, submit, wants_logs

if TYPE_CHECKING:
    from sagelaunch.launcher import Predictor, TrainingJob

__all__ = ["MAX_RUN_SECS", "FrameworkEstimator"]


class FrameworkEstimator(EstimatorArguments):
    """An SDK v2 estimator: its arguments (checked when set, then across fields) and what it does with them."""

    _resolved: Resolved | None = PrivateAttr(default=None)
    _cloned: Any = PrivateAttr(default=None)  # launcher.common.gitclone.ClonedCode while fit() runs from a git_config
    _latest_training_job: Any = PrivateAttr(default=None)
    _rule_configs: tuple[Any, Any] = PrivateAttr(default=(None, None))  # (debugger, profiler) once a job was sent
    _session_made: bool = PrivateAttr(default=False)  # sagemaker_session is the one fit/attach made (as v2 does)
    _output_path_made: bool = PrivateAttr(default=False)  # output_path is where the last local job wrote (as v2 sets it)

    @model_validator(mode="wrap")
    @classmethod
    def _report_everything(cls, data: Any, handler: Any) -> "FrameworkEstimator":
        # field errors stop pydantic before the cross-field checks: add those, and "did you mean" for typos
        try:
            return handler(data)
        except ValidationError as err:
            raise explain(cls, data, err) from None

    @model_validator(mode="after")
    def _resolve(self) -> "FrameworkEstimator":
        self._resolved = resolve(self)
        return self

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        for name in RETIRED_ARGUMENTS:  # None means "off": nothing is lost; any other value is refused by name
            if name in kwargs and kwargs[name] is None:
                del kwargs[name]
        session = kwargs.get("sagemaker_session")
        if session is not None and kwargs.get("region") is None:
            kwargs["region"] = _session_region(session)
        with argument_errors():  # the same ValidationError, as a member of sagelaunch's family too
            super().__init__(**bind_positional(type(self).__name__, self.POSITIONAL, args, kwargs))

    def __setattr__(self, name: str, value: Any) -> None:
        # pydantic stores the field before the cross-field check runs: put it back when that fails
        if name not in type(self).model_fields:
            if name == "hyperparameters":  # v2's method, not an attribute
                fix = "change them with est.set_hyperparameters(name=value, ...)"
                raise SagelaunchTypeError(f"{type(self).__name__}.hyperparameters is a method, as in the SageMaker SDK "
                                          f"v2 (est.hyperparameters() returns what the job is sent); {fix}",
                                          field="hyperparameters", value=value, allowed="set_hyperparameters(...)",
                                          fix=fix)
            if not name.startswith("_") and not hasattr(type(self), name):  # a misspelt argument
                raise ArgumentErrors.from_exception_data(type(self).__name__, [{
                    "type": unknown_argument_error(name, type(self).argument_names(), type(self).__name__),
                    "loc": (name,), "input": value}])
            return super().__setattr__(name, value)
        old = self.__dict__.get(name)
        if name == "output_path":
            self._output_path_made = False  # the user's own from now on
        try:
            with argument_errors():
                super().__setattr__(name, value)
        except Exception:
            self.__dict__[name] = old
            raise

    # ------------------------------------------------------------ derived values
    @property
    def resolved(self) -> Resolved:
        assert self._resolved is not None
        return self._resolved

    @property
    def debugger_rule_configs(self) -> list[dict] | None:
        """v2's: the DebugRuleConfigurations the last SageMaker job was sent (None before one)."""
        return self._rule_configs[0]

    @property
    def profiler_rule_configs(self) -> list[dict] | None:
        """v2's: the ProfilerRuleConfigurations the last SageMaker job was sent (None before one)."""
        return self._rule_configs[1]

    @property
    def debugger_rules(self) -> list | None:
        return None if self._rule_configs[0] is None else split_rules(self)[0]

    @property
    def profiler_rules(self) -> list | None:
        return None if self._rule_configs[1] is None else split_rules(self)[1]

    def latest_job_profiler_artifacts_path(self) -> str | None:
        return v2_calls.artifacts_path(self.latest_training_job, "profiler")

    def latest_job_debugger_artifacts_path(self) -> str | None:
        return v2_calls.artifacts_path(self.latest_training_job, "debugger")

    def latest_job_tensorboard_artifacts_path(self) -> str | None:
        return v2_calls.artifacts_path(self.latest_training_job, "tensorboard")

    @property
    def latest_training_job(self) -> TrainingJob | None:
        """The job of the last fit() (set before fit waits) or attach(); None before either."""
        return self._latest_training_job

    def training_image_uri(self, region: str | None = None) -> str:
        """The training image (v2's method); `region=` gives the same image in another region."""
        r = self.resolved
        if region is None or region == r.region or self.image_uri is not None:
            return r.image_uri
        checked_region(region)
        region = support.check_region(region)
        return self.catalog_image(r.framework_version, r.py_version, region, r.instance_type)[1]

    def hyperparameters(self) -> dict[str, str]:
        """What the job is sent, JSON-encoded as v2's `hyperparameters()` returns it: the user's and the
        distribution's; once fit() or attach() has a job, also its sagemaker_* entries."""
        values = {**(self.user_hyperparameters or {}), **self.resolved.plan.hyperparameters}
        return v2_calls.encoded_hyperparameters(values, self.latest_training_job)

    def set_hyperparameters(self, **values: Any) -> None:
        """Add or change hyperparameters (v2's method); values are kept as given, like `hyperparameters=`."""
        self.user_hyperparameters = {**(self.user_hyperparameters or {}), **values}

    @property
    def model_data(self) -> str | dict[str, Any] | None:
        """The trained model's URI (v2's property): S3ModelArtifacts of the latest job (a dict for an
        uncompressed output, as v2)."""
        return v2_calls.model_data(self._require_job("model_data"))

    def logs(self) -> None:
        """Print the latest job's logs, following them until it ends (v2's method); a failed job raises
        JobFailedError after its logs, as v2 raises after printing them."""
        print_logs(self._require_job("logs()"))

    def _require_job(self, what: str) -> TrainingJob:
        if self._latest_training_job is None:
            fix = f"call fit() first, or {type(self).__name__}.attach(job_name) for an existing one"
            raise SagelaunchError(f"{what} needs a training job: {fix} (latest_training_job is None)",
                                  field="latest_training_job", value=None, allowed="a training job", fix=fix)
        return self._latest_training_job

    @classmethod
    def attach(cls, training_job_name: str, sagemaker_session: Any = None, model_channel_name: str = "model",
               region: str | None = None) -> "FrameworkEstimator":
        """An estimator rebuilt from an existing job (local registry first, then SageMaker), as v2's attach:
        waits for the job to end without printing its logs (`logs()` prints them)."""
        region = region or v2_calls.session_region(sagemaker_session)
        job = find_job(training_job_name, **({"region": region} if region else {}))
        params = v2_calls.init_params(cls, job.describe(), model_channel_name, sagemaker_session)
        params["tags"] = job.tags() or None  # v2 reads them with ListTags
        estimator = cls(**params)
        estimator._latest_training_job = job
        estimator._keep_default_session()
        job.wait(logs=False)
        return estimator

    # ------------------------------------------------------------ profiler updates (UpdateTrainingJob, as v2)
    def enable_default_profiling(self) -> None:
        """Turn on the default monitoring of the running job (it must have started with profiling disabled)."""
        v2_calls.enable_default_profiling(self.output_path, self._require_job("enable_default_profiling()"))

    def update_profiler(self, rules: Any = None, system_monitor_interval_millis: int | None = None,
                        s3_output_path: str | None = None, framework_profile_params: Any = None,
                        disable_framework_metrics: bool = False) -> None:
        """Change the running job's profiler settings or add profiler rules (v2's arguments and request)."""
        v2_calls.update_profiler(self._require_job("update_profiler()"), rules, system_monitor_interval_millis,
                                 s3_output_path, framework_profile_params, disable_framework_metrics)

    def disable_profiling(self) -> None:
        """Stop the running job's monitoring and profiling (UpdateTrainingJob DisableProfiler, as v2)."""
        v2_calls.disable_profiling(self._require_job("disable_profiling()"))

    def _default_base_job_name(self) -> str:
        return self.base_job_name or self.resolved.repository

    def make_job_name(self) -> str:
        return job_name(self._default_base_job_name())

    # ------------------------------------------------------------ spec and request
    def to_spec(self, job_name: str | None = None, inputs: Any = None) -> TrainingJobSpec:
        """The frozen spec of a job submitted now, one builder per part (each part is one request shape)."""
        name = check_name(job_name) if job_name is not None else self.make_job_name()
        local = is_local(self.resolved.instance_type)
        settings = job_settings(self, inputs, local)  # the other v2 settings, each named as its part's field
        return training_job_spec(self, self.resolved, name, settings, self._code_part(settings, local),
                                 None if self._output_path_made else self.output_path)

    def _code_part(self, settings: dict[str, Any], local: bool) -> CodeSpec:
        """What runs and what it is told (AlgorithmSpecification, HyperParameters, Environment)."""
        return code_part(self, self.resolved, settings, self._code(), self._framework_spec_fields(local))

    def _framework_spec_fields(self, local: bool) -> dict[str, Any]:
        """Code-part fields only one framework's estimator has (TensorFlow's model_dir)."""
        return {}

    def _code(self) -> tuple[str, str | None, list[str]]:
        """(entry_point, source_dir, dependencies): as given, or inside the clone fit() made of git_config."""
        if self._cloned is not None:
            return self._cloned.entry_point, self._cloned.source_dir, list(self._cloned.dependencies)
        return self.entry_point, self.source_dir, list(self.dependencies or ())

    def training_job_request(self, job_name: str, inputs: Any = None) -> dict[str, Any]:
        """The complete CreateTrainingJob request (pure; no network, no files read)."""
        return compile_create_training_job_request(self.to_spec(job_name, inputs))

    # ------------------------------------------------------------ running
    def check_files(self) -> None:
        """The local code must exist before a job is submitted (construction does not read files)."""
        check_code_files(*self._code())

    def fit(self, inputs: Any = None, wait: bool = True, logs: bool = True, job_name: str | None = None, **options: Any
            ) -> TrainingJob:
        """Build the spec, submit it (local or SageMaker by instance type), keep the job handle.

        With git_config the repository is cloned first (as v2 does on every fit) and the code shipped from
        the clone; with sagemaker_session its credentials, region and default bucket are used."""
        logs = wants_logs(logs)
        if self.git_config is not None:
            self._cloned = clone_git_code(self.git_config, self.entry_point, self.source_dir, self.dependencies or [])
        try:
            self.check_files()
            given = None if self._session_made else self.sagemaker_session
            session = _session_options(given, self.resolved.instance_type)
            with session.scope if session else nullcontext():
                spec = self.to_spec(job_name, inputs)
                if session:
                    spec = session.apply(spec, options)
                # kept before waiting: after a failed or interrupted wait the job can still be described
                self._latest_training_job = job = submit(spec, wait=False, logs=logs, **options)
            self._after_submit(job)
        finally:
            if self._cloned is not None:
                shutil.rmtree(self._cloned.folder, ignore_errors=True)
                self._cloned = None
        if wait:  # the job handle keeps the session's credentials for its own calls
            job.wait(logs=logs, **{k: v for k, v in options.items() if k == "stop_on_interrupt"})
        return job

    def _after_submit(self, job: TrainingJob) -> None:
        """What v2's fit leaves on the estimator: the session it made, `output_path` (a SageMaker job: s3://<default
        bucket>/ when none was given, as v2 sets it; a local job: the folder its outputs went to, where v2's local
        mode names its bucket) and the rule configurations the job was sent (none run locally)."""
        self._keep_default_session()
        request = getattr(job, "request", None)
        if request is None:  # a local job: where its outputs go (v2's local mode: its bucket), no rule evaluated
            if self.output_path is None or self._output_path_made:
                self.__dict__["output_path"] = job.describe()["OutputDataConfig"]["S3OutputPath"]
                self._output_path_made = True
            self._rule_configs = ([], [])
            return
        if self.output_path is None:
            self.output_path = request["OutputDataConfig"]["S3OutputPath"]
        self._rule_configs = (request.get("DebugRuleConfigurations", []), request.get("ProfilerRuleConfigurations", []))

    def _keep_default_session(self) -> None:
        """v2 sets `sagemaker_session` to the Session it made when none was given: ours, in the job's region (set
        past validation; fit goes on using its own defaults, as before)."""
        if self.sagemaker_session is not None:
            return
        import boto3

        session = Session(boto_session=boto3.session.Session(region_name=self.resolved.region))
        session.local_mode = is_local(self.resolved.instance_type)
        self.__dict__["sagemaker_session"] = session
        self._session_made = True

    def create_model(self, **kwargs: Any) -> Any:
        """v2's create_model: the trained job's Model (each framework's estimator makes its own)."""
        raise NotImplementedError

    def deploy(self, initial_instance_count: int | None = None, instance_type: str | None = None,
               serializer: Any = None, deserializer: Any = None, accelerator_type: str | None = None,
               endpoint_name: str | None = None, use_compiled_model: bool = False, wait: bool = True,
               model_name: str | None = None, kms_key: str | None = None, data_capture_config: Any = None,
               tags: Any = None, serverless_inference_config: Any = None, async_inference_config: Any = None,
               volume_size: int | None = None, model_data_download_timeout: int | None = None,
               container_startup_health_check_timeout: int | None = None, inference_recommendation_id: Any = None,
               explainer_config: Any = None, *, max_body_bytes: int | None = None, **kwargs: Any) -> Predictor:
        """v2's EstimatorBase.deploy: create_model(**kwargs) named model_name, then Model.deploy.

        Model and endpoint share one default name, <base_job_name>-<timestamp>, as in v2.
        """
        trained_job_of(self.latest_training_job)
        if use_compiled_model:
            raise SagelaunchError("use_compiled_model=True: SageMaker Neo compilation is not implemented by sagelaunch; "
                                  "deploy the trained model (use_compiled_model=False)", field="use_compiled_model",
                                  value=True, allowed="False", fix="deploy the trained model (use_compiled_model=False)")
        default_name = job_name(self._default_base_job_name())
        kwargs.setdefault("model_kms_key", self.output_kms_key)
        model = self.create_model(**kwargs)
        model.name = model_name or default_name
        return model.deploy(
            initial_instance_count, instance_type, serializer, deserializer, accelerator_type,
            endpoint_name or default_name, tags or self.tags, kms_key, wait, data_capture_config,
            async_inference_config, serverless_inference_config, volume_size, model_data_download_timeout,
            container_startup_health_check_timeout, inference_recommendation_id, explainer_config,
            max_body_bytes=max_body_bytes)

    def transformer(self, instance_count: int, instance_type: str, strategy: str | None = None,
                    assemble_with: str | None = None, output_path: str | None = None,
                    output_kms_key: str | None = None, accept: str | None = None, env: dict[str, str] | None = None,
                    max_concurrent_transforms: int | None = None, max_payload: int | None = None,
                    tags: Any = None, role: str | None = None, model_server_workers: int | None = None,
                    volume_kms_key: str | None = None, entry_point: str | None = None,
                    vpc_config_override: Any = "VPC_CONFIG_DEFAULT", enable_network_isolation: bool | None = None,
                    model_name: str | None = None) -> Any:
        """v2's estimator.transformer: create_model of the trained job (CreateModel, named model_name or
        <base job name>-<timestamp>), then a Transformer of it; instance_type="local" transforms here."""
        trained_job_of(self.latest_training_job)
        name = model_name or self.make_job_name()
        model_options: dict[str, Any] = dict(role=role, vpc_config_override=vpc_config_override, name=name,
                                             model_kms_key=self.output_kms_key)
        if entry_point is not None:
            model_options["entry_point"] = entry_point
        if model_server_workers is not None:
            model_options["model_server_workers"] = model_server_workers
        if enable_network_isolation is not None:
            model_options["enable_network_isolation"] = enable_network_isolation
        model = self.create_model(**model_options)
        options = dict(strategy=strategy, assemble_with=assemble_with, output_path=output_path,
                       output_kms_key=output_kms_key, accept=accept, env=env,
                       max_concurrent_transforms=max_concurrent_transforms, max_payload=max_payload,
                       volume_kms_key=volume_kms_key)
        return transformer_of(model, name, instance_count, instance_type, tags or self.tags, options,
                              self._default_base_job_name(), self.resolved.region)


def _session_region(session: Any) -> Any:
    try:
        return session_parts(session).region
    except ValueError:
        return None  # the field check names the problem


def _session_options(session: Any, instance_type: str) -> SessionUse | None:
    return None if session is None else SessionUse.of(session, instance_type)
