"""PyTorchModel and TensorFlowModel: the SageMaker SDK v2's model classes, names, positions and requests.

    PyTorchModel(model_data="s3://…/model.tar.gz", role=ROLE, entry_point="inference.py", source_dir="code",
                 framework_version="2.0.0", py_version="py310").deploy(1, "ml.c7g.4xlarge")

`deploy` sends CreateModel, CreateEndpointConfig and CreateEndpoint as v2 2.257 does: the model named
after its serving image (`pytorch-inference-<timestamp>`) unless `name=` says otherwise; with an
entry_point the archive is repacked (the model's files plus entry_point / source_dir / dependencies
under code/) into the default bucket, and PyTorch's SAGEMAKER_PROGRAM / SAGEMAKER_SUBMIT_DIRECTORY /
SAGEMAKER_CONTAINER_LOG_LEVEL / SAGEMAKER_REGION are set; TensorFlow Serving gets SAGEMAKER_TFS_NGINX_LOGLEVEL.
instance_type="local" serves on 127.0.0.1 (launcher.local.serving): PyTorch as SageMaker's PyTorch serving toolkit does,
TensorFlow as its TF Serving container answers, from the SavedModel loaded in process. Arguments v2 has and sagelaunch cannot honour are
refused by name, never dropped.
"""

from __future__ import annotations

import inspect
import logging
import os
import re
import shutil
import tempfile
from typing import TYPE_CHECKING, Any, ClassVar

from sagelaunch.estimators import field_checks as check
from sagelaunch.estimators.deploy_checks import check_endpoint_name, deploy_target, refuse_unsupported
from sagelaunch.estimators.serializers import JSONDeserializer, JSONSerializer, NumpyDeserializer, NumpySerializer
from sagelaunch.estimators.transformer import transformer_of
from sagelaunch.jobspec.catalog import (
    LOCAL_DEFAULT_REGION,
    huggingface_image_uri,
    inference_image_uri,
    inference_scope,
    warn_if_unpatched,
)
from sagelaunch.jobspec.instance_types import is_local
from sagelaunch.jobspec.errors import SagelaunchError, SagelaunchRuntimeError
from sagelaunch.jobspec.names import job_name
from sagelaunch.jobspec.s3uri import key_destination, parse_s3_uri
from sagelaunch.jobspec.suggest import unexpected_arguments
from sagelaunch.launcher import (
    LocalPredictor,
    SageMakerPredictor,
    client,
    create_model,
    repack_model,
    resolve_region,
    role_arn,
    s3,
)
from sagelaunch.launcher import sagemaker_endpoint as sme

if TYPE_CHECKING:
    from sagelaunch.launcher import LocalPredictor, Predictor, SageMakerPredictor

TF_LOG_LEVELS = {logging.DEBUG: "debug", logging.INFO: "info", logging.WARNING: "warn", logging.ERROR: "error",
                 logging.CRITICAL: "crit"}
MODEL_SERVER_WORKERS_VAR = "SAGEMAKER_MODEL_SERVER_WORKERS"


def region_of(sagemaker_session: Any) -> str | None:
    """The region of a sagemaker.Session (boto_region_name) or a boto3.Session (region_name), duck-typed."""
    if sagemaker_session is None:
        return None
    return getattr(sagemaker_session, "boto_region_name", None) or getattr(sagemaker_session, "region_name", None)


def base_name_from_image(image: str) -> str:
    """v2's default model/endpoint base name: the image's repository (…/pytorch-inference:tag → pytorch-inference)."""
    return image.rsplit("/", 1)[-1].split(":", 1)[0].split("@", 1)[0]


def base_from_name(name: str) -> str:
    """A generated name without its timestamp (v2's base_from_name)."""
    match = re.match(r"^(.+)-\d{4}-\d{2}-\d{2}-\d{2}-\d{2}-\d{2}-\d{3}$", name)
    return match.group(1) if match else name


class FrameworkModel:
    """What PyTorchModel and TensorFlowModel share: v2's FrameworkModel/Model arguments and deploy.

    Arguments every model takes (SDK v2's meaning):
        model_data: s3:// URI of the model.tar.gz (or, for local endpoints, a local model.tar.gz or folder).
        role: IAM role ARN SageMaker assumes to pull the image and the model (SageMaker endpoints only).
        entry_point: inference script (model_fn / input_fn / predict_fn / output_fn); repacked under code/.
        image_uri: inference image to run instead of the one chosen from the framework version.
        framework_version: framework version of the inference image.
        py_version: Python version of the inference image (e.g. 'py310').
        predictor_cls: v2's predictor class; refused by name (choose deploy's serializer / deserializer).
        env: environment variables set in the inference container.
        name: the model's name (default: generated from the image, as v2 does).
        vpc_config: {'Subnets': [...], 'SecurityGroupIds': [...]} the endpoint's containers run in.
        sagemaker_session: the session whose region and credentials the model's calls use.
        enable_network_isolation: run the container without network access.
        model_kms_key: KMS key that encrypts the repacked model in S3.
        source_dir: folder of entry_point (and of a requirements.txt), repacked with it.
        code_location: S3 prefix where the repacked model is uploaded.
        container_log_level: logging level of the serving toolkit in the container.
        dependencies: extra local folders repacked next to the code.
        git_config: v2's git repository of the code; refused by name (clone it and pass the paths).
        region: sagelaunch's addition: the AWS region (default: the session's, then the configured one).
    """

    framework: ClassVar[str]
    KEYWORDS: ClassVar[tuple[str, ...]] = (
        "image_uri", "framework_version", "py_version", "predictor_cls", "env", "name", "vpc_config",
        "sagemaker_session", "enable_network_isolation", "model_kms_key", "source_dir", "code_location",
        "container_log_level", "dependencies", "git_config", "region",
    )

    def _setup(self, model_data: str, role: str | None, entry_point: str | None, options: dict[str, Any]) -> None:
        unknown = {k: v for k, v in options.items() if k not in self.KEYWORDS}
        if unknown:

            named = [p for p in inspect.signature(type(self).__init__).parameters if p not in ("self", "kwargs")]
            raise unexpected_arguments(type(self).__name__, unknown, (*named, *self.KEYWORDS))
        if not isinstance(model_data, str) or not model_data:
            raise SagelaunchError(f"model_data={model_data!r} must be the s3:// URI (or local path) of a model.tar.gz",
                                  field="model_data", value=model_data, allowed="the s3:// URI or local path of a model.tar.gz",
                                  fix="e.g. s3://my-bucket/model/model.tar.gz")
        if model_data.startswith("s3://"):
            check.s3_uri("model_data", model_data)
        if options.get("git_config"):
            fix = "clone the repository and pass entry_point / source_dir from it"
            raise SagelaunchError(f"git_config for a model is not implemented by sagelaunch; {fix}", field="git_config",
                                  value=options["git_config"], allowed="None", fix=fix)
        if options.get("predictor_cls") is not None:
            raise SagelaunchError("predictor_cls is not implemented by sagelaunch; deploy returns a predictor whose "
                                  "serializer / deserializer you choose with deploy(serializer=…, deserializer=…)",
                                  field="predictor_cls", value=options["predictor_cls"], allowed="None",
                                  fix="choose deploy(serializer=…, deserializer=…)")
        self.model_data, self.role, self.entry_point = model_data, check.role(role), entry_point
        self.image_uri = check.image_uri(options.get("image_uri"))
        self.framework_version = options.get("framework_version")
        self.py_version = check.py_version(options.get("py_version"))
        self.env = dict(check.environment(options.get("env"), "env") or {})
        self.name = options.get("name")
        self.vpc_config = options.get("vpc_config")
        self.sagemaker_session = options.get("sagemaker_session")
        self.enable_network_isolation_flag = bool(options.get("enable_network_isolation"))
        self.model_kms_key = options.get("model_kms_key")
        self.source_dir = options.get("source_dir")
        self.code_location = options.get("code_location")
        self.container_log_level = options.get("container_log_level", logging.INFO)
        self.dependencies = list(options.get("dependencies") or [])
        self.region = check.region(options.get("region")) or region_of(self.sagemaker_session)
        self.endpoint_name: str | None = None
        if self.framework_version is None and self.image_uri is None:
            raise SagelaunchError(f"{type(self).__name__} needs framework_version (or image_uri) to choose the serving "
                                  "image, e.g. framework_version='2.0.0'", field="framework_version", value=None,
                                  allowed="a version, or image_uri", fix="e.g. framework_version='2.0.0'")
        if self.framework_version is not None:
            check.version_text(self.framework_version)

    def enable_network_isolation(self) -> bool:
        return self.enable_network_isolation_flag

    # ------------------------------------------------------------------ what each framework decides
    def serving_image_uri(self, region_name: str, instance_type: str) -> str:
        if self.image_uri:
            return self.image_uri
        version = self.framework_version
        if version is None:  # _setup requires it without image_uri
            raise SagelaunchRuntimeError(f"{type(self).__name__}: framework_version is not set")
        uri = inference_image_uri(self.framework, version, region=region_name,
                                  instance_type=instance_type, py_version=self.py_version)
        warn_if_unpatched(self.framework, version, inference_scope(instance_type))
        return uri

    def _environment(self, region: str, repacked: bool) -> dict[str, str]:
        raise NotImplementedError

    def _default_serializers(self) -> tuple[Any, Any]:
        raise NotImplementedError

    # ------------------------------------------------------------------ deploy
    def deploy(self, initial_instance_count: int | None = None, instance_type: str | None = None,
               serializer: Any = None, deserializer: Any = None, accelerator_type: str | None = None,
               endpoint_name: str | None = None, tags: Any = None, kms_key: str | None = None, wait: bool = True,
               data_capture_config: Any = None, async_inference_config: Any = None,
               serverless_inference_config: Any = None, volume_size: int | None = None,
               model_data_download_timeout: int | None = None,
               container_startup_health_check_timeout: int | None = None, inference_recommendation_id: Any = None,
               explainer_config: Any = None, accept_eula: Any = None, endpoint_logging: bool = False,
               resources: Any = None, endpoint_type: Any = None, managed_instance_scaling: Any = None,
               inference_component_name: Any = None, routing_config: Any = None, model_reference_arn: Any = None,
               inference_ami_version: str | None = None, update_endpoint: bool = False, *,
               max_body_bytes: int | None = None) -> Predictor:
        """Create the model, endpoint config and endpoint (v2's Model.deploy); returns a predictor.

        instance_type="local" serves on 127.0.0.1 (max_body_bytes: its request limit, sagelaunch's own).
        """
        refuse_unsupported(dict(
            accelerator_type=accelerator_type, data_capture_config=data_capture_config,
            async_inference_config=async_inference_config, serverless_inference_config=serverless_inference_config,
            inference_recommendation_id=inference_recommendation_id, explainer_config=explainer_config,
            accept_eula=accept_eula, endpoint_logging=endpoint_logging, resources=resources,
            endpoint_type=endpoint_type, managed_instance_scaling=managed_instance_scaling,
            inference_component_name=inference_component_name, routing_config=routing_config,
            model_reference_arn=model_reference_arn, update_endpoint=update_endpoint))
        count, instance_type = deploy_target(initial_instance_count, instance_type)
        default_serializer, default_deserializer = self._default_serializers()
        serializer = serializer if serializer is not None else default_serializer
        deserializer = deserializer if deserializer is not None else default_deserializer
        if endpoint_name is not None:
            check_endpoint_name(endpoint_name)
        if is_local(instance_type):
            self.serving_image_uri(LOCAL_DEFAULT_REGION, instance_type)  # one catalog: local serves what SageMaker does
            return self._deploy_local(endpoint_name, serializer, deserializer, max_body_bytes)
        variant_options = {k: v for k, v in (
            ("VolumeSizeInGB", volume_size), ("ModelDataDownloadTimeoutInSeconds", model_data_download_timeout),
            ("ContainerStartupHealthCheckTimeoutInSeconds", container_startup_health_check_timeout),
            ("InferenceAmiVersion", inference_ami_version)) if v is not None}
        return self._deploy_sagemaker(count, instance_type, endpoint_name, check.tags(tags), kms_key, wait,
                                      variant_options, serializer, deserializer)

    def _deploy_sagemaker(self, count: int, instance_type: str, endpoint_name: str | None, tags: list | None,
                          kms_key: str | None, wait: bool, variant_options: dict[str, Any], serializer: Any,
                          deserializer: Any) -> SageMakerPredictor:
        sme.check_instance_type(instance_type)
        region = resolve_region(self.region)
        role = role_arn(self.role, instance_type, region)
        image = self.serving_image_uri(region, instance_type)
        model_data, repacked = self._model_data_for_endpoint(image, region)
        container = {"Image": image, "Environment": self._environment(region, repacked), "ModelDataUrl": model_data}
        model_name = self.name or job_name(base_name_from_image(image))
        endpoint = endpoint_name or job_name(base_from_name(model_name))
        resources = sme.create_endpoint(
            model_name=model_name, endpoint_name=endpoint, role_arn=role, container=container,
            instance_type=instance_type, initial_instance_count=count, region=region, tags=tags,
            vpc_config=self.vpc_config, enable_network_isolation=self.enable_network_isolation(), kms_key=kms_key,
            variant_options=variant_options, wait=wait)
        self.name, self.endpoint_name = model_name, endpoint
        return SageMakerPredictor(resources, serializer, deserializer)

    def _create_sagemaker_model(self, instance_type: str, accelerator_type: Any = None, tags: Any = None,
                                serverless_inference_config: Any = None, **kwargs: Any) -> str:
        """v2's: CreateModel of this model (the serving image, the repacked model, the script's variables), named
        self.name or a name made from the image; what transformer() does first."""
        region = resolve_region(self.region)
        role = role_arn(self.role, instance_type, region)
        image = self.serving_image_uri(region, instance_type)
        model_data, repacked = self._model_data_for_endpoint(image, region)
        container = {"Image": image, "Environment": self._environment(region, repacked), "ModelDataUrl": model_data}
        self.name = self.name or job_name(base_name_from_image(image))
        return create_model(self.name, role, container, region, tags=check.tags(tags), vpc_config=self.vpc_config,
                            enable_network_isolation=self.enable_network_isolation())

    def transformer(self, instance_count: int, instance_type: str, strategy: str | None = None,
                    assemble_with: str | None = None, output_path: str | None = None,
                    output_kms_key: str | None = None, accept: str | None = None, env: dict[str, str] | None = None,
                    max_concurrent_transforms: int | None = None, max_payload: int | None = None,
                    tags: Any = None, volume_kms_key: str | None = None) -> Any:
        """v2's Model.transformer: CreateModel, then a Transformer of it (locally: the model served here)."""
        if not is_local(instance_type) and self.name is None:
            self.name = job_name(base_name_from_image(self.serving_image_uri(resolve_region(self.region),
                                                                             instance_type)))
        options = dict(strategy=strategy, assemble_with=assemble_with, output_path=output_path,
                       output_kms_key=output_kms_key, accept=accept, env=env,
                       max_concurrent_transforms=max_concurrent_transforms, max_payload=max_payload,
                       volume_kms_key=volume_kms_key)
        return transformer_of(self, self.name or job_name(f"{self.framework}-local"), instance_count, instance_type,
                              tags, options, None, self.region)

    def _code_prefix(self, image: str, region: str) -> str:
        """s3://bucket/prefix where v2 puts a repacked model: code_location, else the default bucket;
        the key prefix is the model's name, else one made from the image."""
        folder = self.name or job_name(base_name_from_image(image))
        if self.code_location:
            bucket, prefix = parse_s3_uri(self.code_location)
            return f"s3://{bucket}/" + "/".join(p for p in (prefix.strip("/"), folder) if p)

        return f"s3://{s3.default_bucket(region)}/{folder}"

    def _model_data_for_endpoint(self, image: str, region: str) -> tuple[str, bool]:
        """(ModelDataUrl, repacked): with an entry_point the repacked archive; else model_data (a local
        archive is uploaded first — v2 would send its path and fail)."""
        if self.entry_point:
            target = f"{self._code_prefix(image, region)}/model.tar.gz"
            source_dir = self.source_dir
            if source_dir and not source_dir.startswith("s3://"):
                source_dir = os.path.abspath(source_dir)
            return sme.repack_to_s3(self.model_data, target, region, entry_point=self.entry_point,
                                    source_dir=source_dir, dependencies=tuple(self.dependencies),
                                    kms_key=self.model_kms_key), True
        if self.model_data.startswith("s3://"):
            return self.model_data, False

        local = self.model_data.removeprefix("file://")
        if not os.path.isfile(local):
            raise SagelaunchError(f"model_data={self.model_data!r} is not a model.tar.gz file; pass one, or its s3:// URI",
                                  field="model_data", value=self.model_data, allowed="a model.tar.gz file or s3:// URI",
                                  fix="pass one, or its s3:// URI")
        return s3.upload_file(local, f"{self._code_prefix(image, region)}/model.tar.gz", region), False

    def _deploy_local(self, endpoint_name: str | None, serializer: Any, deserializer: Any,
                      max_body_bytes: int | None) -> LocalPredictor:
        from sagelaunch.launcher import LocalEndpoint  # lazy: local serving loads asyncio and the local registry

        name = endpoint_name or job_name(f"{self.framework}-local")
        model_data, scratch, program = self.model_data, None, None
        try:
            if self.entry_point:  # repacked as for SageMaker; the server runs code/<entry_point>
                scratch = tempfile.mkdtemp(prefix="sagelaunch-model-")
                local_model = self._fetch_local(model_data, scratch)
                model_data = str(repack_model(local_model, os.path.join(scratch, "model.tar.gz"),
                                              entry_point=self.entry_point, source_dir=self._local_source(scratch),
                                              dependencies=self.dependencies))
                program = os.path.basename(self.entry_point)
            endpoint = LocalEndpoint(model_data, name, region=self.region, max_body_bytes=max_body_bytes,
                                     program=program, framework=self.framework).start()
        finally:  # the endpoint unpacked its own copy
            if scratch:
                shutil.rmtree(scratch, ignore_errors=True)
        self.endpoint_name = name
        return LocalPredictor(endpoint, serializer, deserializer)

    def _fetch_local(self, uri: str, scratch: str) -> str:
        if not uri.startswith("s3://"):
            return uri.removeprefix("file://")

        bucket, key = parse_s3_uri(uri)
        local = str(key_destination(scratch, key, os.path.basename(key) or "download.tar.gz"))
        client("s3", self.region).download_file(bucket, key, local)
        return local

    def _local_source(self, scratch: str) -> str | None:
        if self.source_dir and self.source_dir.startswith("s3://"):
            return self._fetch_local(self.source_dir, scratch)
        return self.source_dir

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name or self.model_data}>"


class PyTorchModel(FrameworkModel):
    """v2's sagemaker.pytorch.model.PyTorchModel: TorchServe-based PyTorch inference images.

    Arguments: FrameworkModel's, and
        model_server_workers: model server workers per instance (SAGEMAKER_MODEL_SERVER_WORKERS; default one per
            vCPU).
    """

    framework: ClassVar[str] = "pytorch"

    def __init__(self, model_data: str, role: str | None = None, entry_point: str | None = None,
                 framework_version: str | None = "1.3", py_version: str | None = None, image_uri: str | None = None,
                 predictor_cls: Any = None, model_server_workers: int | None = None, **kwargs: Any) -> None:
        self._setup(model_data, role, entry_point, dict(kwargs, framework_version=framework_version,
                                                        py_version=py_version, image_uri=image_uri,
                                                        predictor_cls=predictor_cls))
        if model_server_workers is not None and (not isinstance(model_server_workers, int) or model_server_workers < 1):
            raise SagelaunchError(f"model_server_workers={model_server_workers!r} must be a whole number >= 1 (or None: "
                                  "one worker per vCPU)", field="model_server_workers", value=model_server_workers,
                                  allowed="a whole number >= 1, or None", fix="or None: one worker per vCPU")
        self.model_server_workers = model_server_workers

    def _environment(self, region: str, repacked: bool) -> dict[str, str]:
        if repacked and self.entry_point:  # repacked: the model carries code/<entry_point>
            program, submit = os.path.basename(self.entry_point), sme.MODEL_CODE_DIR
        else:  # no code of ours: what env already says (v2 sends the variables empty)
            program, submit = self.env.get(sme.PROGRAM_VAR, ""), self.env.get(sme.SUBMIT_DIR_VAR, "")
        env = {**self.env, **sme.script_environment(program, submit, self.container_log_level, region)}
        if self.model_server_workers:
            env[MODEL_SERVER_WORKERS_VAR] = str(self.model_server_workers)
        return env

    def _default_serializers(self) -> tuple[Any, Any]:
        return NumpySerializer(), NumpyDeserializer()  # v2's PyTorchPredictor


class TensorFlowModel(FrameworkModel):
    """v2's sagemaker.tensorflow.model.TensorFlowModel: TensorFlow Serving inference images.

    Arguments: FrameworkModel's (container_log_level sets TF Serving's nginx log level); entry_point, when given,
    must be inference.py (the container runs only code/inference.py).
    """

    framework: ClassVar[str] = "tensorflow"

    def __init__(self, model_data: str, role: str | None = None, entry_point: str | None = None,
                 image_uri: str | None = None, framework_version: str | None = None,
                 container_log_level: int | None = None, predictor_cls: Any = None, **kwargs: Any) -> None:
        self._setup(model_data, role, entry_point, dict(kwargs, image_uri=image_uri,
                                                        framework_version=framework_version,
                                                        predictor_cls=predictor_cls))
        self.container_log_level = container_log_level

    def _environment(self, region: str, repacked: bool) -> dict[str, str]:
        env = dict(self.env)
        if self.container_log_level in TF_LOG_LEVELS:
            env["SAGEMAKER_TFS_NGINX_LOGLEVEL"] = TF_LOG_LEVELS[self.container_log_level]
        return env

    def _default_serializers(self) -> tuple[Any, Any]:
        return JSONSerializer(), JSONDeserializer()  # v2's TensorFlowPredictor

    def _deploy_local(self, endpoint_name: str | None, serializer: Any, deserializer: Any,
                      max_body_bytes: int | None) -> LocalPredictor:
        if self.entry_point and os.path.basename(self.entry_point) != "inference.py":  # before anything starts
            raise SagelaunchError(f"entry_point={self.entry_point!r} for a TensorFlowModel: SageMaker's TensorFlow "
                                  "container only runs code/inference.py (its input_handler/output_handler), so this "
                                  "script would never run; name it inference.py", field="entry_point",
                                  value=self.entry_point, allowed="inference.py", fix="name it inference.py")
        return super()._deploy_local(endpoint_name, serializer, deserializer, max_body_bytes)


class HuggingFaceModel(PyTorchModel):
    """v2's sagemaker.huggingface.HuggingFaceModel: a PyTorch model served by the Hugging Face inference DLC.

    Arguments: PyTorchModel's (framework_version is pytorch_version), and
        transformers_version: Transformers version of the Hugging Face inference image (e.g. '4.28.1').
        pytorch_version: PyTorch version of the Hugging Face inference image (e.g. '2.0.0').
        tensorflow_version: v2's TensorFlow flavour; refused by name.
    """

    def __init__(self, role: str | None = None, model_data: str | None = None, entry_point: str | None = None,
                 transformers_version: str | None = None, tensorflow_version: str | None = None,
                 pytorch_version: str | None = None, py_version: str | None = None, image_uri: str | None = None,
                 model_server_workers: int | None = None, **kwargs: Any) -> None:
        if tensorflow_version is not None:
            raise SagelaunchError(f"tensorflow_version={tensorflow_version!r}: the TensorFlow flavour of "
                                  "HuggingFaceModel is not supported by sagelaunch; allowed: pytorch_version=...",
                                  field="tensorflow_version", value=tensorflow_version, allowed="pytorch_version=...",
                                  fix="use pytorch_version=... instead")
        if model_data is None:
            raise SagelaunchError("model_data=None (a Hugging Face Hub model named by env HF_MODEL_ID) is not supported "
                                  "by sagelaunch; pass the model.tar.gz of a trained model as model_data",
                                  field="model_data", value=None, allowed="a trained model's model.tar.gz",
                                  fix="pass the model.tar.gz of a trained model as model_data")
        if image_uri is None and (transformers_version is None or pytorch_version is None):
            example = "transformers_version='4.28.1', pytorch_version='2.0.0', py_version='py310'"
            raise SagelaunchError(f"HuggingFaceModel needs transformers_version and pytorch_version (or image_uri), e.g. "
                                  f"{example}", field="transformers_version" if transformers_version is None
                                  else "pytorch_version", value=None, allowed="a version, or image_uri", fix=f"e.g. {example}")
        super().__init__(model_data, role, entry_point, framework_version=pytorch_version, py_version=py_version,
                         image_uri=image_uri, model_server_workers=model_server_workers, **kwargs)
        self.transformers_version, self.pytorch_version = transformers_version, pytorch_version

    def serving_image_uri(self, region_name: str, instance_type: str) -> str:
        if self.image_uri:
            return self.image_uri
        transformers, pytorch = self.transformers_version, self.pytorch_version
        if transformers is None or pytorch is None:  # __init__ requires both without image_uri
            raise SagelaunchRuntimeError("HuggingFaceModel: transformers_version and pytorch_version are not set")
        uri, _ = huggingface_image_uri(transformers, pytorch, self.py_version, region_name, instance_type, "inference")
        warn_if_unpatched("pytorch", pytorch, "inference")
        return uri

    def _default_serializers(self) -> tuple[Any, Any]:
        return JSONSerializer(), JSONDeserializer()  # v2's HuggingFacePredictor
