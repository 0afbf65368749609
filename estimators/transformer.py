"""SDK v2's `Transformer` (sagemaker.transformer): batch transform of a model over S3 (or, locally, files here).

`Transformer(model_name, instance_count, instance_type, …).transform(data, …)` sends v2's CreateTransformJob
(`launcher/common/transform_request.py`) and waits as v2 does; `estimator.transformer()` / `model.transformer()` first
create the model as v2 does (CreateModel). With instance_type="local" the model is served by the local endpoint and
every input file is transformed here (`launcher/local/transform.py`).
"""

from __future__ import annotations

from typing import Any

from sagelaunch.estimators import field_checks as check
from sagelaunch.estimators.session import session_parts
from sagelaunch.estimators.v2_calls import session_region
from sagelaunch.jobspec.instance_types import is_local
from sagelaunch.jobspec.errors import SagelaunchError, SagelaunchRuntimeError
from sagelaunch.jobspec.names import base_from_name, check_name
from sagelaunch.jobspec.names import job_name as generated_name
from sagelaunch.launcher import (
    TransformSettings,
    check_local_settings,
    create_transform_job_request,
    default_region,
    find_transform_job,
    run_local_transform,
    s3,
    start_transform_job,
)


class Transformer:
    """v2's sagemaker.transformer.Transformer: its arguments in its order."""

    def __init__(self, model_name: str, instance_count: int, instance_type: str, strategy: str | None = None,
                 assemble_with: str | None = None, output_path: str | None = None, output_kms_key: str | None = None,
                 accept: str | None = None, max_concurrent_transforms: int | None = None,
                 max_payload: int | None = None, tags: list[dict[str, str]] | None = None,
                 env: dict[str, str] | None = None, base_transform_job_name: str | None = None,
                 sagemaker_session: Any = None, volume_kms_key: str | None = None, *, _local_model: Any = None,
                 _region: str | None = None) -> None:
        self.model_name = model_name
        self.instance_count = instance_count
        self.instance_type = instance_type
        self.strategy, self.assemble_with, self.accept = strategy, assemble_with, accept
        self.output_path = output_path
        self.output_kms_key, self.volume_kms_key = output_kms_key, volume_kms_key
        self.max_concurrent_transforms, self.max_payload = max_concurrent_transforms, max_payload
        self.tags = check.tags(tags)
        self.env = check.environment(env, "env") or {}
        self.base_transform_job_name = base_transform_job_name
        self.sagemaker_session = sagemaker_session
        self.latest_transform_job: Any = None
        self._current_job_name: str | None = None
        self._local_model = _local_model  # the model object locally (no model registry serves local names)
        self._region = _region

    def _region_name(self) -> str:
        return session_region(self.sagemaker_session) or self._region or default_region(
            local=is_local(self.instance_type))

    def _boto_session(self) -> Any:
        if self.sagemaker_session is None:
            return None

        return session_parts(self.sagemaker_session).boto_session

    def transform(self, data: str, data_type: str = "S3Prefix", content_type: str | None = None,
                  compression_type: str | None = None, split_type: str | None = None, job_name: str | None = None,
                  input_filter: str | None = None, output_filter: str | None = None, join_source: str | None = None,
                  experiment_config: Any = None, model_client_config: Any = None,
                  batch_data_capture_config: Any = None, wait: bool = True, logs: bool = True) -> None:
        """Start the transform job (v2's arguments); wait=True waits for it to end."""
        for option, value in (("experiment_config", experiment_config), ("model_client_config", model_client_config),
                              ("batch_data_capture_config", batch_data_capture_config)):
            if value is not None:
                fix = f"drop {option} (SageMaker Experiments, invocation retries and data capture are not sent)"
                raise SagelaunchError(f"transform({option}=…) is not implemented by sagelaunch; {fix}", field=option,
                                      value=value, allowed="None", fix=fix)
        local = is_local(self.instance_type)
        name = check_name(job_name) if job_name else generated_name(self._base_name())
        region = self._region_name()
        output_path = self.output_path or self._default_output(name, region, local)
        settings = TransformSettings(
            job_name=name, model_name=self.model_name, instance_count=self.instance_count,
            instance_type=self.instance_type, data=data, output_path=output_path, data_type=data_type,
            content_type=content_type, compression_type=compression_type, split_type=split_type,
            strategy=self.strategy, assemble_with=self.assemble_with, accept=self.accept,
            max_concurrent_transforms=self.max_concurrent_transforms, max_payload=self.max_payload,
            output_kms_key=self.output_kms_key, volume_kms_key=self.volume_kms_key, env=dict(self.env),
            tags=tuple(self.tags or ()), input_filter=input_filter, output_filter=output_filter,
            join_source=join_source)
        self._current_job_name = name
        if local:
            self.latest_transform_job = self._transform_locally(settings, region)
        else:
            self.latest_transform_job = start_transform_job(create_transform_job_request(settings), region,
                                                            self._boto_session())
        if wait:
            self.latest_transform_job.wait(logs=logs)

    def _base_name(self) -> str:
        if self.base_transform_job_name:
            return self.base_transform_job_name

        return base_from_name(self.model_name)

    def _default_output(self, name: str, region: str, local: bool) -> str:
        """v2's default: s3://<default bucket>/<job name>."""
        if self.sagemaker_session is not None and hasattr(self.sagemaker_session, "default_bucket"):
            return f"s3://{self.sagemaker_session.default_bucket()}/{name}"

        return f"s3://{s3.default_bucket(region)}/{name}"

    def _transform_locally(self, settings: Any, region: str) -> Any:
        if self._local_model is None:
            fix = ("make it with model.transformer(...) or estimator.transformer(...) on the model object; a local "
                   "transform cannot look a model up by name")
            raise SagelaunchError(f"Transformer(model_name={self.model_name!r}, instance_type='local'): {fix}",
                                  field="model_name", value=self.model_name, allowed="a model object's transformer",
                                  fix=fix)
        check_local_settings(settings)
        predictor = self._local_model.deploy(1, "local")
        try:
            def invoke(body: bytes, content_type: str, accept: str) -> bytes:
                status, answer, _ = predictor._invoke(body, content_type, accept, {})
                if status >= 400:
                    raise SagelaunchRuntimeError(f"the model answered {status}: {answer[:500].decode('utf-8', 'replace')}")
                return answer

            return run_local_transform(settings, invoke, region)
        finally:
            predictor.delete()

    def wait(self, logs: bool = True) -> None:
        """v2's: wait for the latest transform job to end (a failed one raises, naming its reason)."""
        self._require_job().wait(logs=logs)

    def describe(self) -> dict[str, Any]:
        return self._require_job().describe()

    def stop_transform_job(self, wait: bool = True) -> None:
        job = self._require_job()
        if job.backend == "local":
            raise SagelaunchError(f"stop_transform_job(): the local transform job {job.name} already ended (it runs "
                                  "inside transform())", field="latest_transform_job", value=job.name,
                                  allowed="a SageMaker transform job", fix="nothing to stop")
        job.stop()
        if wait:
            try:
                job.wait()
            except SagelaunchError:
                pass  # Stopped is what was asked for

    def _require_job(self) -> Any:
        if self.latest_transform_job is None:
            raise SagelaunchError("no transform job yet: call transform(...) first", field="latest_transform_job",
                                  value=None, allowed="a transform job", fix="call transform(...) first")
        return self.latest_transform_job

    @classmethod
    def attach(cls, transform_job_name: str, sagemaker_session: Any = None) -> "Transformer":
        """v2's: a Transformer of an existing transform job (DescribeTransformJob)."""
        region = None
        if sagemaker_session is not None:
            region = session_region(sagemaker_session)
        if region is None:
            region = default_region()
        job = find_transform_job(transform_job_name, region)
        d = job.describe()
        output, resources = d["TransformOutput"], d["TransformResources"]
        transformer = cls(d["ModelName"], resources["InstanceCount"], resources["InstanceType"],
                          d.get("BatchStrategy"), output.get("AssembleWith"), output["S3OutputPath"],
                          output.get("KmsKeyId"), output.get("Accept"), d.get("MaxConcurrentTransforms"),
                          d.get("MaxPayloadInMB"), None, d.get("Environment"), None, sagemaker_session,
                          resources.get("VolumeKmsKeyId"))
        transformer.latest_transform_job = job
        transformer._current_job_name = transform_job_name
        return transformer


def transformer_of(model: Any, model_name: str, instance_count: int, instance_type: str, tags: Any,
                   options: dict[str, Any], base_transform_job_name: str | None, region: str | None) -> Transformer:
    """v2's estimator.transformer() / model.transformer(): CreateModel on SageMaker (not locally: the model
    object is served), then the Transformer of that model."""
    local = is_local(instance_type)
    if not local:
        model._create_sagemaker_model(instance_type, tags=tags)
    env = {**(getattr(model, "env", None) or {}), **(options.pop("env", None) or {})}
    return Transformer(model_name, instance_count, instance_type, tags=tags, env=env,
                       base_transform_job_name=base_transform_job_name,
                       sagemaker_session=getattr(model, "sagemaker_session", None), _local_model=model,
                       _region=region, **options)
