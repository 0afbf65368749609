"""FrameworkEstimator: the SageMaker SDK's estimator arguments as a validated pydantic model.

Every field is checked when it is set (extra="forbid", validate_assignment); cross-field rules
run in `sagelaunch.estimators.resolve`. `to_spec` turns an estimator into the frozen TrainingJobSpec the
backends run, `training_job_request` compiles it to a CreateTrainingJob request (pure), and
`fit` submits it to the backend its instance type selects.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import (BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, ValidationInfo, field_validator,
                      model_validator)

from sagelaunch.estimators import field_checks as check
from sagelaunch.estimators.debugger import debugger_spec_fields, split_rules
from sagelaunch.estimators.inputs import INPUT_MODES
from sagelaunch.estimators.instance_group import InstanceGroup
from sagelaunch.estimators.resolve import Resolved, resolve
from sagelaunch.estimators.settings import job_settings
from sagelaunch.jobspec import catalog as support
from sagelaunch.jobspec.argument_errors import ArgumentErrors, argument_errors
from sagelaunch.jobspec.contract import is_local_instance_type
from sagelaunch.jobspec.errors import SagelaunchError, SagelaunchTypeError
from sagelaunch.jobspec.names import check_name, job_name
from sagelaunch.jobspec.spec import (CodeSpec, ComputeSpec, NetworkSpec, ObservabilitySpec, OutputSpec, StoppingSpec,
                          TrainingJobSpec)
from sagelaunch.profiler_config import DebuggerHookConfig, ProfilerConfig, ProfilerRule, Rule, TensorBoardOutputConfig
from sagelaunch.jobspec.positional import bind_positional

if TYPE_CHECKING:
    from sagelaunch.launcher import Predictor, TrainingJob

MAX_RUN_SECS = 28 * 24 * 3600


class FrameworkEstimator(BaseModel):
    """The arguments SDK v2's EstimatorBase and Framework take, each documented under its field, checked when set."""

    # validate_by_alias: an argument whose name is also a v2 method (hyperparameters) is stored under another name
    model_config = ConfigDict(extra="forbid", validate_assignment=True, protected_namespaces=(), defer_build=True,
                              validate_by_alias=True, validate_by_name=False)

    framework: ClassVar[str]

    entry_point: str
    """Path (absolute, or relative to source_dir) of the Python script or shell script run as the job's entry point."""
    source_dir: str | None = None
    """Folder (local, s3:// tar.gz, or a path in git_config's repository) shipped as the job's code; entry_point is
    relative to it."""
    role: str | None = None
    """IAM role ARN (or role name) SageMaker assumes for the job; required for SageMaker jobs, not for local ones."""
    framework_version: str | None = None
    """Framework version of the training image (e.g. '2.0.1'); with py_version it chooses the image unless image_uri
    is given."""
    py_version: str | None = None
    """Python version of the training image (e.g. 'py310'); required with framework_version unless image_uri is
    given."""
    image_uri: str | None = None
    """Training image to run instead of the framework image chosen from framework_version and py_version."""
    instance_type: str | None = None  # required unless instance_groups is given
    """EC2 instance type (e.g. 'ml.p4d.24xlarge'), or 'local' / 'local_gpu' to run on this machine."""
    instance_count: int = Field(1, ge=1, le=1000)
    """Number of instances (hosts) of the job."""
    region: str | None = None
    """sagelaunch's addition: the AWS region of the job; default: the configured region (AWS_DEFAULT_REGION, ~/.aws)."""
    # the `hyperparameters=` argument; `hyperparameters()` is v2's method returning what the job is sent
    user_hyperparameters: dict[str, Any] | None = Field(None, alias="hyperparameters")
    """The `hyperparameters=` argument: values passed to the script as --key value arguments (sent JSON-encoded, as
    v2 sends them)."""
    distribution: dict[str, Any] | None = None
    """How the job is distributed: {'torch_distributed': …}, {'smdistributed': {'dataparallel' or 'modelparallel':
    …}}, {'mpi': …}, {'pytorchddp': …}, {'parameter_server': …}, {'multi_worker_mirrored_strategy': …}."""
    profiler_config: ProfilerConfig | None = None
    """SageMaker Debugger's profiler settings (ProfilerConfig): system monitor interval, framework profile, S3
    output."""
    disable_profiler: bool = False
    """Turn the profiler (and its default system monitoring) off."""
    rules: list[Rule | ProfilerRule] | None = None
    """Debugger and Profiler rules (Rule / ProfilerRule) that evaluate the job while it runs."""
    debugger_hook_config: DebuggerHookConfig | bool | None = None
    """The Debugger hook's tensor collections and S3 output (DebuggerHookConfig), or False to turn the hook off."""
    tensorboard_output_config: TensorBoardOutputConfig | None = None
    """Where the job writes TensorBoard data and where SageMaker uploads it (TensorBoardOutputConfig)."""
    output_path: str | None = None
    """S3 URI (or file:// / local folder for local jobs) under which model.tar.gz and output.tar.gz are stored;
    default the session's bucket."""
    checkpoint_s3_uri: str | None = None
    """S3 URI that the job's checkpoint folder is synced with (spot and resumed jobs)."""
    checkpoint_local_path: str | None = None
    """Folder inside the container that is synced with checkpoint_s3_uri (default /opt/ml/checkpoints)."""
    max_run: int = Field(24 * 60 * 60, ge=1, le=MAX_RUN_SECS)
    """Longest run in seconds before SageMaker stops the job (default 24 h)."""
    use_spot_instances: bool = False
    """Run on managed spot instances (requires max_wait)."""
    max_wait: int | None = Field(None, ge=1, le=MAX_RUN_SECS)
    """Longest time in seconds to wait for spot capacity plus run time; must be at least max_run."""
    volume_size: int = Field(30, ge=1, le=16384)
    """Size in GB of each instance's storage volume (input data, checkpoints)."""
    volume_kms_key: str | None = None
    """KMS key that encrypts the instances' storage volume."""
    output_kms_key: str | None = None
    """KMS key that encrypts the job's output in S3."""
    subnets: list[str] | None = None
    """VPC subnet ids the job's instances run in (with security_group_ids)."""
    security_group_ids: list[str] | None = None
    """VPC security group ids of the job's instances (with subnets)."""
    enable_network_isolation: bool = False
    """Run the container without network access (inputs and outputs are still transferred by SageMaker)."""
    encrypt_inter_container_traffic: bool = False
    """Encrypt the traffic between the job's instances."""
    environment: dict[str, str] | None = None
    """Environment variables set in the training container."""
    tags: list[dict[str, str]] | None = None
    """Tags of the training job, as [{'Key': …, 'Value': …}]."""
    base_job_name: str | None = None
    """Prefix of the generated job name (default: the image's repository name)."""
    ignore_patterns: list[str] | None = None
    """sagelaunch's addition: glob patterns of source_dir's files that are not shipped (credentials, VCS data and
    caches never ship)."""
    planned_model: str | None = None
    """sagelaunch's addition: the Hugging Face config.json (a path, read offline) of the model an SMP job trains.
    With it, a model-parallel layout whose model states cannot fit in the GPUs' memory is refused before anything
    is uploaded, naming the smallest change that fits (sagelaunch.planner); above 85 % it warns. Without it,
    nothing is refused for memory."""
    container_log_level: int = Field(20, ge=0, le=50)
    """Python logging level of the SageMaker training toolkit in the container (logging.INFO by default)."""

    # job settings of the SDK v2's EstimatorBase/Framework, sent as v2 sends them
    sagemaker_session: Any = None  # a sagemaker.Session (duck-typed), estimators.Session or boto3.Session
    """The session whose region, bucket and credentials the job uses: a sagemaker.Session, sagelaunch's Session or a
    boto3 Session."""
    input_mode: str = "File"
    """How input channels reach the container: 'File' (downloaded first), 'FastFile' (streamed) or 'Pipe'."""
    metric_definitions: list[dict[str, str]] | None = None
    """Metrics read from the job's logs: [{'Name': …, 'Regex': …}]."""
    enable_sagemaker_metrics: bool | None = None  # unset: True from PyTorch 1.3 / TensorFlow 1.15 (as v2)
    """Publish the metrics as SageMaker time series (default: on for PyTorch ≥ 1.3 / TensorFlow ≥ 1.15, as v2)."""
    keep_alive_period_in_seconds: int | None = Field(None, ge=0, le=3600)
    """Keep the instances warm this long after the job for the next job (warm pools)."""
    dependencies: list[str] | None = None
    """Extra local folders copied next to the code (v2: shipped into the code's tarball)."""
    code_location: str | None = None
    """S3 prefix where the code tarball is uploaded (default: the output path's bucket)."""
    git_config: dict[str, Any] | None = None
    """Git repository the code comes from: {'repo': …, 'branch' / 'commit': …}; source_dir and entry_point are paths
    in it."""
    model_uri: str | None = None
    """S3 URI of a model (model.tar.gz) given to the job as its model channel."""
    model_channel_name: str = "model"
    """Name of the channel that model_uri arrives in (default 'model')."""
    max_retry_attempts: int | None = Field(None, ge=1, le=30)
    """How many times SageMaker retries the job after an internal error (1–30)."""
    instance_groups: list[InstanceGroup] | None = None
    """Heterogeneous cluster: InstanceGroup objects (name, instance type, count) instead of instance_type /
    instance_count."""
    container_entry_point: list[str] | None = None
    """Entry point that replaces the image's (the container's ENTRYPOINT)."""
    container_arguments: list[str] | None = None
    """Arguments given to the container's entry point."""
    disable_output_compression: bool = False
    """Upload the model and output folders as they are, without compressing them to tar.gz."""

    # positional order of the SageMaker SDK's PyTorch/TensorFlow estimators
    POSITIONAL: ClassVar[tuple[str, ...]] = (
        "entry_point", "framework_version", "py_version", "source_dir", "hyperparameters", "image_uri", "distribution",
    )

    _resolved: Resolved | None = PrivateAttr(default=None)
    _cloned: Any = PrivateAttr(default=None)  # launcher.common.gitclone.ClonedCode while fit() runs from a git_config
    _latest_training_job: Any = PrivateAttr(default=None)
    _rule_configs: tuple[Any, Any] = PrivateAttr(default=(None, None))  # (debugger, profiler) once a job was sent
    _session_made: bool = PrivateAttr(default=False)  # sagemaker_session is the one fit/attach made (as v2 does)
    _output_path_made: bool = PrivateAttr(default=False)  # output_path is where the last local job wrote (as v2 sets it)

    # ------------------------------------------------------------ field checks
    _entry = field_validator("entry_point")(classmethod(lambda cls, v: check.entry_point(v)))
    _source = field_validator("source_dir")(classmethod(lambda cls, v: check.source_dir(v)))
    _role = field_validator("role")(classmethod(lambda cls, v: check.role(v)))
    _version = field_validator("framework_version")(classmethod(lambda cls, v: check.version_text(v)))
    _py = field_validator("py_version")(classmethod(lambda cls, v: check.py_version(v)))
    _image = field_validator("image_uri")(classmethod(lambda cls, v: check.image_uri(v)))
    _region = field_validator("region")(classmethod(lambda cls, v: check.region(v)))
    _hp = field_validator("user_hyperparameters")(classmethod(lambda cls, v: check.hyperparameters(v)))
    _ckpt = field_validator("checkpoint_s3_uri")(classmethod(lambda cls, v: check.s3_uri("checkpoint_s3_uri", v)))
    _vkms = field_validator("volume_kms_key")(classmethod(lambda cls, v: check.kms_key("volume_kms_key", v)))
    _okms = field_validator("output_kms_key")(classmethod(lambda cls, v: check.kms_key("output_kms_key", v)))
    _env = field_validator("environment")(classmethod(lambda cls, v: check.environment(v)))
    _base = field_validator("base_job_name")(classmethod(lambda cls, v: check.base_job_name(v)))
    _tags = field_validator("tags", mode="before")(classmethod(lambda cls, v: check.tags(v)))
    _subnets = field_validator("subnets")(
        classmethod(lambda cls, v: check.id_list("subnets", v, check.SUBNET, 16, "subnet-0123abcd"))
    )
    _sgs = field_validator("security_group_ids")(
        classmethod(lambda cls, v: check.id_list("security_group_ids", v, check.SECURITY_GROUP, 5, "sg-0123abcd"))
    )

    @field_validator("rules", mode="before")
    @classmethod
    def _rules(cls, v: Any) -> Any:
        if v is None:
            return v
        if not isinstance(v, (list, tuple)):
            raise SagelaunchError(f"rules={v!r} must be a list of Rule/ProfilerRule, e.g. "
                                  "[Rule.sagemaker(rule_configs.loss_not_decreasing())]", field="rules", value=v,
                                  allowed="a list of Rule/ProfilerRule",
                                  fix="e.g. [Rule.sagemaker(rule_configs.loss_not_decreasing())]")
        for i, rule in enumerate(v):
            if not isinstance(rule, (Rule, ProfilerRule)):
                example = ("Rule.sagemaker(rule_configs.vanishing_gradient()) or "
                           "ProfilerRule.sagemaker(rule_configs.ProfilerReport())")
                raise SagelaunchError(f"rules[{i}]={rule!r} is not a Rule or ProfilerRule; allowed: e.g. {example}",
                                      field=f"rules[{i}]", value=rule, allowed="a Rule or ProfilerRule",
                                      fix=f"e.g. {example}")
        return list(v)

    _metrics = field_validator("metric_definitions")(classmethod(lambda cls, v: check.metric_definitions(v)))
    _mode = field_validator("input_mode")(classmethod(lambda cls, v: check.choice("input_mode", v, INPUT_MODES)))
    _deps = field_validator("dependencies")(classmethod(lambda cls, v: check.dependencies(v)))
    _code_location = field_validator("code_location")(classmethod(lambda cls, v: check.s3_uri("code_location", v)))
    _model_uri = field_validator("model_uri")(classmethod(lambda cls, v: check.model_uri(v)))
    _model_channel = field_validator("model_channel_name")(classmethod(lambda cls, v: check.channel_name(
        "model_channel_name", v)))
    _entrypoint = field_validator("container_entry_point")(classmethod(lambda cls, v: check.string_list(
        "container_entry_point", v)))
    _arguments = field_validator("container_arguments")(classmethod(lambda cls, v: check.string_list(
        "container_arguments", v)))
    _session = field_validator("sagemaker_session")(classmethod(lambda cls, v: _check_session(v)))

    @field_validator("git_config")
    @classmethod
    def _git(cls, v: dict[str, Any] | None) -> dict[str, Any] | None:
        from sagelaunch.launcher import check_git_config

        return v if v is None else check_git_config(v)

    @field_validator("instance_type")
    @classmethod
    def _instance_type(cls, v: str | None) -> str | None:
        return v if v is None else support.check_instance_type(v)

    @field_validator("output_path")
    @classmethod
    def _output_path(cls, v: str | None) -> str | None:
        if v is None or v.lower().startswith("s3:") or v.startswith("s3/"):  # s3:/b, S3://b: meant as S3
            return check.s3_uri("output_path", v)
        if not v:
            raise SagelaunchError(f"output_path={v!r} must be s3://<bucket>[/prefix] or a local folder",
                                  field="output_path", value=v, allowed="s3://<bucket>[/prefix] or a local folder",
                                  fix="e.g. s3://my-bucket/output")
        return check.local_path("output_path", v)

    @field_validator("checkpoint_local_path")
    @classmethod
    def _ckpt_local(cls, v: str | None) -> str | None:
        if v is not None and not v.startswith("/"):
            raise SagelaunchError(f"checkpoint_local_path={v!r} must be an absolute path such as /opt/ml/checkpoints",
                                  field="checkpoint_local_path", value=v, allowed="an absolute path",
                                  fix="e.g. /opt/ml/checkpoints")
        return check.local_path("checkpoint_local_path", v)

    @model_validator(mode="wrap")
    @classmethod
    def _report_everything(cls, data: Any, handler: Any) -> "FrameworkEstimator":
        # field errors stop pydantic before the cross-field checks: add those, and "did you mean" for typos
        try:
            return handler(data)
        except ValidationError as err:
            from sagelaunch.estimators.explain import explain

            raise explain(cls, data, err) from None

    @field_validator("framework_version", "py_version", mode="before")
    @classmethod
    def _version_is_text(cls, v: Any, info: ValidationInfo) -> Any:
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            raise SagelaunchError(check.number_as_version(info.field_name, v, cls.framework), field=info.field_name,
                                  value=v, allowed="text", fix="quote it")
        return v

    @model_validator(mode="after")
    def _resolve(self) -> "FrameworkEstimator":
        self._resolved = resolve(self)
        return self

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        from sagelaunch.estimators.explain import RETIRED_ARGUMENTS

        for name in RETIRED_ARGUMENTS:  # None means "off": nothing is lost; any other value is refused by name
            if name in kwargs and kwargs[name] is None:
                del kwargs[name]
        session = kwargs.get("sagemaker_session")
        if session is not None and kwargs.get("region") is None:
            kwargs["region"] = _session_region(session)
        with argument_errors():  # the same ValidationError, as a member of sagelaunch's family too
            super().__init__(**bind_positional(type(self).__name__, self.POSITIONAL, args, kwargs))

    @classmethod
    def argument_names(cls) -> list[str]:
        """The constructor's argument names (a field's alias where it has one)."""
        return [info.alias or name for name, info in cls.model_fields.items()]

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
                from sagelaunch.estimators.explain import unknown_argument_error

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
        from sagelaunch.estimators.v2_calls import artifacts_path

        return artifacts_path(self, "profiler")

    def latest_job_debugger_artifacts_path(self) -> str | None:
        from sagelaunch.estimators.v2_calls import artifacts_path

        return artifacts_path(self, "debugger")

    def latest_job_tensorboard_artifacts_path(self) -> str | None:
        from sagelaunch.estimators.v2_calls import artifacts_path

        return artifacts_path(self, "tensorboard")

    @property
    def latest_training_job(self) -> TrainingJob | None:
        """The job of the last fit() (set before fit waits) or attach(); None before either."""
        return self._latest_training_job

    def training_image_uri(self, region: str | None = None) -> str:
        """The training image (v2's method); `region=` gives the same image in another region."""
        r = self.resolved
        if region is None or region == r.region or self.image_uri is not None:
            return r.image_uri
        region = support.check_region(check.region(region))
        return self.catalog_image(r.framework_version, r.py_version, region, self.instance_type)[1]

    def catalog_image(self, version: str, py_version: str, region: str, instance_type: str) -> tuple[str, str, str]:
        """(py_version, image URI, repository) of the catalog's training image for this estimator's framework."""
        smdistributed = isinstance(self.distribution, dict) and "smdistributed" in self.distribution
        uri = support.training_image_uri(self.framework, self.framework_version or version, py_version, region,
                                         instance_type, smdistributed)
        return py_version, uri, support.version_entry(self.framework, version, py_version=py_version)["repository"]

    def hyperparameters(self) -> dict[str, str]:
        """What the job is sent, JSON-encoded as v2's `hyperparameters()` returns it: the user's and the
        distribution's; once fit() or attach() has a job, also its sagemaker_* entries."""
        from sagelaunch.estimators.v2_calls import encoded_hyperparameters

        return encoded_hyperparameters(self)

    def set_hyperparameters(self, **values: Any) -> None:
        """Add or change hyperparameters (v2's method); values are kept as given, like `hyperparameters=`."""
        self.user_hyperparameters = {**(self.user_hyperparameters or {}), **values}

    @property
    def model_data(self) -> str | dict[str, Any] | None:
        """The trained model's URI (v2's property): S3ModelArtifacts of the latest job (a dict for an
        uncompressed output, as v2)."""
        from sagelaunch.estimators.v2_calls import model_data

        return model_data(self._require_job("model_data"))

    def logs(self) -> None:
        """Print the latest job's logs, following them until it ends (v2's method); a failed job raises
        JobFailedError after its logs, as v2 raises after printing them."""
        from sagelaunch.launcher import print_logs

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
        from sagelaunch.estimators.v2_calls import attach

        return attach(cls, training_job_name, sagemaker_session, model_channel_name, region)

    # ------------------------------------------------------------ profiler updates (UpdateTrainingJob, as v2)
    def enable_default_profiling(self) -> None:
        """Turn on the default monitoring of the running job (it must have started with profiling disabled)."""
        from sagelaunch.estimators import v2_calls

        v2_calls.enable_default_profiling(self, self._require_job("enable_default_profiling()"))

    def update_profiler(self, rules: Any = None, system_monitor_interval_millis: int | None = None,
                        s3_output_path: str | None = None, framework_profile_params: Any = None,
                        disable_framework_metrics: bool = False) -> None:
        """Change the running job's profiler settings or add profiler rules (v2's arguments and request)."""
        from sagelaunch.estimators import v2_calls

        v2_calls.update_profiler(self._require_job("update_profiler()"), rules, system_monitor_interval_millis,
                                 s3_output_path, framework_profile_params, disable_framework_metrics)

    def disable_profiling(self) -> None:
        """Stop the running job's monitoring and profiling (UpdateTrainingJob DisableProfiler, as v2)."""
        from sagelaunch.estimators import v2_calls

        v2_calls.disable_profiling(self._require_job("disable_profiling()"))

    def _default_base_job_name(self) -> str:
        return self.base_job_name or self.resolved.repository

    def make_job_name(self) -> str:
        return job_name(self._default_base_job_name())

    # ------------------------------------------------------------ spec and request
    def to_spec(self, job_name: str | None = None, inputs: Any = None) -> TrainingJobSpec:
        """The frozen spec of a job submitted now, one builder per part (each part is one request shape)."""
        r = self.resolved
        name = check_name(job_name) if job_name is not None else self.make_job_name()
        local = is_local_instance_type(r.instance_type)
        settings = job_settings(self, inputs, local)  # the other v2 settings, each named as its part's field
        return TrainingJobSpec(
            job_name=name, framework=self.framework, framework_version=r.framework_version, py_version=r.py_version,
            image_uri=r.image_uri, region=r.region, role=self.role,
            tags=tuple((t["Key"], t["Value"]) for t in self.tags or ()),
            code=self._code_part(settings, local), compute=self._compute_part(settings), inputs=settings["inputs"],
            stopping=StoppingSpec(max_run=self.max_run, max_wait=self.max_wait,
                                  use_spot_instances=self.use_spot_instances,
                                  max_retry_attempts=settings["max_retry_attempts"]),
            output=OutputSpec(output_path=None if self._output_path_made else self.output_path, output_kms_key=self.output_kms_key,
                              checkpoint_s3_uri=self.checkpoint_s3_uri,
                              checkpoint_local_path=self.checkpoint_local_path,
                              disable_output_compression=settings["disable_output_compression"]),
            network=NetworkSpec(
                subnets=tuple(self.subnets) if self.subnets is not None else None,
                security_group_ids=tuple(self.security_group_ids) if self.security_group_ids is not None else None,
                enable_network_isolation=self.enable_network_isolation,
                encrypt_inter_container_traffic=self.encrypt_inter_container_traffic),
            observability=ObservabilitySpec(profiler=r.profiler,
                                            **debugger_spec_fields(self, r.region, local, r.plan.strategy)),
        )

    def _code_part(self, settings: dict[str, Any], local: bool) -> CodeSpec:
        """What runs and what it is told (AlgorithmSpecification, HyperParameters, Environment)."""
        r = self.resolved
        entry_point, given_source_dir, dependencies = self._code()
        if given_source_dir is None:
            entry, source_dir, entry_path = os.path.basename(entry_point), None, os.path.abspath(entry_point)
        else:
            entry, entry_path = self._entry_in_source_dir(entry_point, given_source_dir), None
            source_dir = given_source_dir if given_source_dir.startswith("s3://") else os.path.abspath(given_source_dir)
        return CodeSpec(
            entry_point=entry, source_dir=source_dir, entry_point_path=entry_path,
            ignore_patterns=tuple(self.ignore_patterns or ()),
            dependencies=tuple(os.path.abspath(d) for d in dependencies),
            code_location=settings["code_location"], hyperparameters=dict(self.user_hyperparameters or {}),
            environment=dict(self.environment or {}), container_log_level=self.container_log_level,
            distribution=dict(self.distribution or {}), distribution_hyperparameters=dict(r.plan.hyperparameters),
            mp_parameters=r.plan.mp_parameters, input_mode=settings["input_mode"],
            metric_definitions=settings["metric_definitions"],
            enable_sagemaker_metrics=settings["enable_sagemaker_metrics"],
            container_entry_point=settings["container_entry_point"],
            container_arguments=settings["container_arguments"],
            **self._framework_spec_fields(local),
        )

    def _compute_part(self, settings: dict[str, Any]) -> ComputeSpec:
        """Where it runs (ResourceConfig) and how many processes each host starts."""
        r = self.resolved
        count = sum(g.instance_count for g in self.instance_groups) if self.instance_groups else self.instance_count
        return ComputeSpec(instance_type=r.instance_type, instance_count=count, gpus_per_host=r.gpus_per_host,
                           processes_per_host=r.plan.processes_per_host, volume_size=self.volume_size,
                           volume_kms_key=self.volume_kms_key,
                           keep_alive_period_in_seconds=settings["keep_alive_period_in_seconds"],
                           instance_groups=settings["instance_groups"])

    def _framework_spec_fields(self, local: bool) -> dict[str, Any]:
        """Code-part fields only one framework's estimator has (TensorFlow's model_dir)."""
        return {}

    def _code(self) -> tuple[str, str | None, list[str]]:
        """(entry_point, source_dir, dependencies): as given, or inside the clone fit() made of git_config."""
        if self._cloned is not None:
            return self._cloned.entry_point, self._cloned.source_dir, list(self._cloned.dependencies)
        return self.entry_point, self.source_dir, list(self.dependencies or ())

    def _entry_in_source_dir(self, entry_point: str | None = None, source_dir: str | None = None) -> str:
        """entry_point relative to a local source_dir (an absolute path inside it is made relative)."""
        entry_point, source_dir = entry_point or self.entry_point, source_dir or self.source_dir
        assert source_dir is not None
        if os.path.isabs(entry_point) and not source_dir.startswith("s3://"):
            rel = os.path.relpath(entry_point, os.path.abspath(source_dir))
            if not rel.startswith(".."):
                return rel.replace(os.sep, "/")
        return entry_point

    def training_job_request(self, job_name: str, inputs: Any = None) -> dict[str, Any]:
        """The complete CreateTrainingJob request (pure; no network, no files read)."""
        from sagelaunch.launcher import compile_create_training_job_request

        return compile_create_training_job_request(self.to_spec(job_name, inputs))

    # ------------------------------------------------------------ running
    def check_files(self) -> None:
        """The local code must exist before a job is submitted (construction does not read files)."""
        from sagelaunch.launcher import loop_error, symlink_loop

        entry_point, source_dir, dependencies = self._code()
        for field, path in (("source_dir", source_dir), ("entry_point", entry_point)):
            if path and "://" not in path and symlink_loop(path):
                raise loop_error(field, path)
        if source_dir is None:
            if not os.path.isfile(entry_point):
                raise SagelaunchError(f"entry_point={entry_point!r}: no such file (from {os.getcwd()})",
                                      field="entry_point", value=entry_point, allowed="an existing file",
                                      fix=f"check the path (relative to {os.getcwd()})")
        elif not source_dir.startswith("s3://"):
            if not os.path.isdir(source_dir):
                raise SagelaunchError(f"source_dir={source_dir!r}: no such folder", field="source_dir", value=source_dir,
                                      allowed="an existing folder", fix="check the path")
            if not os.path.isfile(os.path.join(source_dir, self._entry_in_source_dir(entry_point, source_dir))):
                raise SagelaunchError(f"entry_point={entry_point!r}: no such file in source_dir={source_dir!r}",
                                      field="entry_point", value=entry_point, allowed=f"a file in {source_dir!r}",
                                      fix="give the path relative to source_dir")
        for dependency in dependencies:
            if not os.path.exists(dependency):
                raise SagelaunchError(f"dependencies: {dependency!r}: no such file or folder (from {os.getcwd()})",
                                      field="dependencies", value=dependency, allowed="existing files or folders",
                                      fix=f"check the path (relative to {os.getcwd()})")

    def fit(self, inputs: Any = None, wait: bool = True, logs: bool = True, job_name: str | None = None, **options: Any
            ) -> TrainingJob:
        """Build the spec, submit it (local or SageMaker by instance type), keep the job handle.

        With git_config the repository is cloned first (as v2 does on every fit) and the code shipped from
        the clone; with sagemaker_session its credentials, region and default bucket are used."""
        import shutil
        from contextlib import nullcontext

        from sagelaunch.launcher import submit

        from sagelaunch.launcher import wants_logs

        logs = wants_logs(logs)
        if self.git_config is not None:
            from sagelaunch.launcher import clone_git_code as clone

            self._cloned = clone(self.git_config, self.entry_point, self.source_dir, self.dependencies or [])
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
            from sagelaunch.estimators.v2_calls import after_submit

            after_submit(self, job)
        finally:
            if self._cloned is not None:
                shutil.rmtree(self._cloned.folder, ignore_errors=True)
                self._cloned = None
        if wait:  # the job handle keeps the session's credentials for its own calls
            job.wait(logs=logs, **{k: v for k, v in options.items() if k == "stop_on_interrupt"})
        return job

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
        from sagelaunch.estimators.trained_model import trained_job_of
        from sagelaunch.jobspec.names import job_name

        trained_job_of(self)
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
        from sagelaunch.estimators.trained_model import trained_job_of
        from sagelaunch.estimators.transformer import transformer_of

        trained_job_of(self)
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
    from sagelaunch.estimators.session import session_parts

    try:
        return session_parts(session).region
    except ValueError:
        return None  # the field check names the problem


def _check_session(v: Any) -> Any:
    from sagelaunch.estimators.session import session_parts

    if v is not None:
        session_parts(v)
    return v


def _session_options(session: Any, instance_type: str) -> Any:
    from sagelaunch.estimators.settings import SessionUse

    return None if session is None else SessionUse.of(session, instance_type)
