"""EstimatorArguments: the SageMaker SDK v2 estimator arguments as a validated pydantic record.

Every field is checked when it is set (extra="forbid", validate_assignment). The record is what the estimators'
helpers read (`resolve`, `settings`, `debugger`, `explain`, `spec_parts`, `trained_model`): they take the arguments,
never the estimator, so none of them imports `base`. What an estimator does with its arguments (the cross-field
check, fit, deploy, v2's calls) is `base.FrameworkEstimator`'s, a subclass of this record.
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator

from sagelaunch.estimators import field_checks as check
from sagelaunch.estimators.inputs import INPUT_MODES
from sagelaunch.estimators.instance_group import InstanceGroup
from sagelaunch.estimators.session import session_parts
from sagelaunch.jobspec import catalog as support
from sagelaunch.jobspec.errors import SagelaunchError
from sagelaunch.launcher import check_git_config
from sagelaunch.profiler_config import DebuggerHookConfig, ProfilerConfig, ProfilerRule, Rule, TensorBoardOutputConfig

MAX_RUN_SECS = 28 * 24 * 3600


class EstimatorArguments(BaseModel):
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

    @field_validator("framework_version", "py_version", mode="before")
    @classmethod
    def _version_is_text(cls, v: Any, info: ValidationInfo) -> Any:
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            assert info.field_name is not None  # a field validator always has its field
            raise SagelaunchError(check.number_as_version(info.field_name, v, cls.framework), field=info.field_name,
                                  value=v, allowed="text", fix="quote it")
        return v

    @classmethod
    def argument_names(cls) -> list[str]:
        """The constructor's argument names (a field's alias where it has one)."""
        return [info.alias or name for name, info in cls.model_fields.items()]

    def catalog_image(self, version: str, py_version: str, region: str, instance_type: str) -> tuple[str, str, str]:
        """(py_version, image URI, repository) of the catalog's training image for this estimator's framework."""
        smdistributed = isinstance(self.distribution, dict) and "smdistributed" in self.distribution
        uri = support.training_image_uri(self.framework, self.framework_version or version, py_version, region,
                                         instance_type, smdistributed)
        return py_version, uri, support.version_entry(self.framework, version, py_version=py_version)["repository"]


def _check_session(v: Any) -> Any:
    if v is not None:
        session_parts(v)
    return v
