"""`Session`: the SageMaker SDK v2's `sagemaker.Session` as far as notebooks use it (its constructor's names,
`boto_session`, `boto_region_name`, the clients, `default_bucket()`, `upload_data()`, `download_data()`, the S3
file helpers, `expand_role()`, `get_caller_identity_arn()`, the describe and delete calls, `wait_for_endpoint`),
`get_execution_role()`, and `session_parts`, which reads any `sagemaker_session=` an estimator is given.

boto3 is imported when a Session is made, never when `estimators` is imported.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from sagelaunch.estimators.field_checks import s3_uri
from sagelaunch.jobspec.errors import SagelaunchError
from sagelaunch.jobspec.s3uri import default_bucket_name
from sagelaunch.launcher import (
    account_id,
    attach,
    caller_arn,
    client,
    configured_region,
    execution_role,
    expand_role,
    find_transform_job,
    find_tuning_job,
    no_region_error,
    print_logs,
    s3,
    sagemaker_endpoint,
    using_session,
)

# v2 Session arguments sagelaunch cannot honour: it makes its own clients from boto_session
_CLIENT_ARGUMENTS = ("sagemaker_client", "sagemaker_runtime_client", "sagemaker_featurestore_runtime_client",
                     "sagemaker_metrics_client", "settings", "sagemaker_config")


class Session:
    """`Session(boto_session=boto3.Session(region_name="us-west-2"), default_bucket="my-bucket")`."""

    def __init__(self, boto_session: Any = None, sagemaker_client: Any = None, sagemaker_runtime_client: Any = None,
                 sagemaker_featurestore_runtime_client: Any = None, default_bucket: str | None = None,
                 settings: Any = None, sagemaker_metrics_client: Any = None, sagemaker_config: dict | None = None,
                 default_bucket_prefix: str | None = None) -> None:
        given = dict(sagemaker_client=sagemaker_client, sagemaker_runtime_client=sagemaker_runtime_client,
                     sagemaker_featurestore_runtime_client=sagemaker_featurestore_runtime_client, settings=settings,
                     sagemaker_metrics_client=sagemaker_metrics_client, sagemaker_config=sagemaker_config)
        refused = [name for name in _CLIENT_ARGUMENTS if given[name] is not None]
        if refused:
            fix = "pass boto_session=boto3.Session(...) with the credentials and region those clients had"
            raise SagelaunchError(f"Session({', '.join(f'{n}=…' for n in refused)}) is not supported: sagelaunch makes "
                                  "its own clients from boto_session; allowed: boto_session, default_bucket, "
                                  f"default_bucket_prefix — {fix}", field=refused[0], value=given[refused[0]],
                                  allowed="boto_session, default_bucket, default_bucket_prefix", fix=fix)
        if default_bucket is not None:
            s3_uri("default_bucket", f"s3://{default_bucket}")
        if boto_session is None:
            import boto3


            boto_session = boto3.session.Session(region_name=configured_region())
        region = getattr(boto_session, "region_name", None)
        if not region:
            raise no_region_error("Session: ")
        self.boto_session = boto_session
        self._region_name = region
        self._default_bucket_name = default_bucket
        self._default_bucket: str | None = None
        self.default_bucket_prefix = default_bucket_prefix.strip("/") if default_bucket_prefix else None
        self.local_mode = False

    @property
    def boto_region_name(self) -> str:
        return self._region_name

    def account_id(self) -> str:
        with using_session(self.boto_session):
            return account_id(self._region_name)

    def default_bucket(self) -> str:
        """The given default_bucket, else `sagemaker-<region>-<account>`; created when missing, as v2 does."""
        if self._default_bucket is None:
            name = self._default_bucket_name or default_bucket_name(self._region_name, self.account_id())
            with using_session(self.boto_session):
                self._default_bucket = s3.ensure_bucket(name, self._region_name)
        return self._default_bucket

    def upload_data(self, path: str, bucket: str | None = None, key_prefix: str = "data", callback: Any = None,
                    extra_args: dict | None = None) -> str:
        """Upload a file or a folder's files to s3://<bucket>/<key_prefix>/…; return the URI as v2 does
        (the folder's prefix, or the one file's key)."""
        if not os.path.exists(path):
            raise SagelaunchError(f"upload_data: path={path!r} does not exist; pass a file or a folder", field="path",
                                  value=path, allowed="an existing file or folder", fix="pass a file or a folder")
        if bucket is None:
            bucket = self.default_bucket()
            if self.default_bucket_prefix:
                key_prefix = f"{self.default_bucket_prefix}/{key_prefix}"
        key_prefix = key_prefix.strip("/")
        files, single = [], None
        if os.path.isdir(path):
            for folder, _, names in os.walk(path):
                rel = os.path.relpath(folder, path)
                for name in names:
                    files.append((os.path.join(folder, name), f"{key_prefix}/{'' if rel == '.' else rel + '/'}{name}"))
        else:
            single = os.path.basename(path)
            files.append((path, f"{key_prefix}/{single}"))
        with using_session(self.boto_session):
            s3 = client("s3", self._region_name)
            for local, key in files:
                s3.upload_file(local, bucket, key, Callback=callback, ExtraArgs=extra_args)
        uri = f"s3://{bucket}/{key_prefix}"
        return f"{uri}/{single}" if single else uri

    # ------------------------------------------------------------------ clients, as v2's attributes
    def _client(self, service: str) -> Any:
        with using_session(self.boto_session):
            return client(service, self._region_name)

    @property
    def sagemaker_client(self) -> Any:
        return self._client("sagemaker")

    @property
    def sagemaker_runtime_client(self) -> Any:
        return self._client("sagemaker-runtime")

    @property
    def s3_client(self) -> Any:
        return self._client("s3")

    def _expected_owner(self, bucket: str) -> dict[str, str]:
        """v2's spot check: calls on the generated default bucket (once known) assert the account owns it."""
        if self._default_bucket is None or self._default_bucket_name is not None or bucket != self._default_bucket:
            return {}
        account = self.account_id()
        return {"ExpectedBucketOwner": account} if bucket == default_bucket_name(self._region_name, account) else {}

    # ------------------------------------------------------------------ S3 files
    def download_data(self, path: str, bucket: str, key_prefix: str = "", extra_args: dict | None = None) -> list[str]:
        """Download every object under s3://bucket/key_prefix into `path` (v2's layout); the local paths."""
        s3, owner = self.s3_client, self._expected_owner(bucket)
        keys, pages = [], s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=key_prefix, **owner)
        for page in pages:
            keys += [o["Key"] for o in page.get("Contents", []) if not (o["Key"].endswith("/") and o["Size"] == 0)]
        root, downloaded = os.path.realpath(path), []
        one_file = bool(os.path.splitext(key_prefix)[1])  # v2: a prefix with an extension names one file
        for key in keys:
            destination = os.path.join(path, os.path.basename(key) if one_file else os.path.relpath(key, key_prefix))
            if not os.path.realpath(destination).startswith(root + os.sep):
                raise SagelaunchError(f"download_data: key {key!r} would be written outside path={path!r}; refused",
                                      field="key_prefix", value=key, allowed=f"keys that land under {path!r}",
                                      fix="download a prefix whose keys stay inside the folder")
            os.makedirs(os.path.dirname(destination), exist_ok=True)
            s3.download_file(Bucket=bucket, Key=key, Filename=destination,
                             ExtraArgs={**(extra_args or {}), **owner} or None)
            downloaded.append(destination)
        return downloaded

    def upload_string_as_file_body(self, body: str, bucket: str, key: str, kms_key: str | None = None) -> str:
        kms = {"SSEKMSKeyId": kms_key, "ServerSideEncryption": "aws:kms"} if kms_key else {}
        self.s3_client.put_object(Bucket=bucket, Key=key, Body=body, **kms, **self._expected_owner(bucket))
        return f"s3://{bucket}/{key}"

    def read_s3_file(self, bucket: str, key_prefix: str) -> str:
        answer = self.s3_client.get_object(Bucket=bucket, Key=key_prefix, **self._expected_owner(bucket))
        return answer["Body"].read().decode("utf-8")

    def list_s3_files(self, bucket: str, key_prefix: str) -> list[str]:
        pages = self.s3_client.get_paginator("list_objects").paginate(Bucket=bucket, Prefix=key_prefix)
        return [o["Key"] for page in pages for o in page.get("Contents", [])]

    # ------------------------------------------------------------------ SageMaker resources (v2's one-call methods)
    def describe_training_job(self, job_name: str) -> dict:
        return self.sagemaker_client.describe_training_job(TrainingJobName=job_name)

    def describe_model(self, name: str) -> dict:
        return self.sagemaker_client.describe_model(ModelName=name)

    def describe_endpoint(self, endpoint_name: str) -> dict:
        return self.sagemaker_client.describe_endpoint(EndpointName=endpoint_name)

    def describe_endpoint_config(self, endpoint_config_name: str) -> dict:
        return self.sagemaker_client.describe_endpoint_config(EndpointConfigName=endpoint_config_name)

    def delete_endpoint(self, endpoint_name: str) -> None:
        """Delete the endpoint; a local one (instance_type="local") is stopped, a detached one from another process
        too (it is in `sagelaunch endpoints list`)."""
        from sagelaunch.launcher import (  # lazy: local serving loads asyncio and the local registry
            endpoint_registry,
            running_endpoint,
        )

        local = running_endpoint(endpoint_name)
        if local is not None:
            return local.stop()
        if endpoint_registry.find(endpoint_name) is not None:
            endpoint_registry.stop(endpoint_name)
            return None
        self.sagemaker_client.delete_endpoint(EndpointName=endpoint_name)

    def delete_endpoint_config(self, endpoint_config_name: str) -> None:
        from sagelaunch.launcher import running_endpoint  # lazy: local serving loads asyncio and the local registry

        if running_endpoint(endpoint_config_name) is None:  # a local endpoint has no config
            self.sagemaker_client.delete_endpoint_config(EndpointConfigName=endpoint_config_name)

    def delete_model(self, model_name: str) -> None:
        self.sagemaker_client.delete_model(ModelName=model_name)

    def wait_for_endpoint(self, endpoint: str, poll: float = 30) -> dict:
        """DescribeEndpoint until InService (v2's); a local endpoint is in service once deploy returned."""
        from sagelaunch.launcher import running_endpoint  # lazy: local serving loads asyncio and the local registry

        if running_endpoint(endpoint) is not None:
            return {"EndpointName": endpoint, "EndpointStatus": "InService"}
        with using_session(self.boto_session):
            return sagemaker_endpoint.wait_in_service(endpoint, self._region_name, poll=poll)

    # ------------------------------------------------------------------ jobs (local registry first, then SageMaker)
    def _job(self, job_name: str) -> Any:
        with using_session(self.boto_session):
            return attach(job_name, region=self._region_name)

    def logs_for_job(self, job_name: str, wait: bool = False, poll: int = 10, log_type: str = "All",
                     timeout: int | None = None) -> None:
        """v2's: print the training job's logs (following them to its end with wait=True); a failed job raises
        after its logs, as v2's does."""
        if log_type != "All" or timeout is not None:
            fix = "drop log_type/timeout (all of the job's logs are printed)"
            raise SagelaunchError(f"logs_for_job(log_type={log_type!r}, timeout={timeout!r}): only v2's defaults are "
                                  f"supported; {fix}", field="log_type", value=log_type, allowed="'All', timeout=None",
                                  fix=fix)
        job = self._job(job_name)
        if wait:
            print_logs(job)
        else:
            for line in job.logs(follow=False):
                print(line, flush=True)

    def wait_for_job(self, job: str, poll: int = 5) -> dict:
        """v2's: wait for the training job to end; its description, or JobFailedError when it failed."""
        return self._job(job).wait(logs=False)

    def wait_for_transform_job(self, job: str, poll: int = 5) -> dict:
        """v2's: DescribeTransformJob until the transform job ends; a failed one raises naming its reason."""
        return find_transform_job(job, self._region_name, self.boto_session).wait()

    def wait_for_tuning_job(self, job: str, poll: int = 5) -> dict:
        """v2's: DescribeHyperParameterTuningJob until the tuning job ends."""
        return find_tuning_job(job, self._region_name, self.boto_session).wait()

    # ------------------------------------------------------------------ roles
    def get_caller_identity_arn(self) -> str:
        """The execution role of the caller (v2 outside a notebook instance: STS, then IAM for its path)."""
        with using_session(self.boto_session):
            try:
                return execution_role(self._region_name)
            except ValueError:  # not a role: v2 returns the caller's ARN here and get_execution_role refuses it
                return caller_arn(self._region_name)

    def expand_role(self, role: str) -> str:
        """A role name → its ARN (IAM GetRole, keeping its path); an ARN as it is."""
        if "/" in role or role.startswith("arn:"):
            return role
        with using_session(self.boto_session):
            return expand_role(role, self._region_name)


def get_execution_role(sagemaker_session: Session | None = None, use_default: bool = False) -> str:
    """The caller's role ARN, as v2 finds it outside a notebook instance; an error when the caller is no role."""
    if use_default:
        raise SagelaunchError("get_execution_role(use_default=True) is not supported: sagelaunch does not create IAM "
                              "roles (v2 would create AmazonSageMaker-DefaultRole); allowed: use_default=False — create "
                              "the role once and pass its ARN as role=", field="use_default", value=True,
                              allowed="False", fix="create the role once and pass its ARN as role=")

    session = sagemaker_session or Session()
    with using_session(session.boto_session):
        return execution_role(session.boto_region_name)


@dataclass(frozen=True)
class SessionParts:
    boto_session: Any
    region: str
    default_bucket: Any  # () -> str, or None: the backend's default bucket for that session's account
    bucket_prefix: str | None


def session_parts(value: Any) -> SessionParts:
    """What a `sagemaker_session=` holds: a sagemaker.Session (ours or the SDK's, duck-typed) or a boto3.Session."""
    if all(hasattr(value, a) for a in ("boto_session", "boto_region_name", "default_bucket")):
        prefix = getattr(value, "default_bucket_prefix", None)
        return SessionParts(value.boto_session, value.boto_region_name, value.default_bucket,
                            prefix.strip("/") if isinstance(prefix, str) and prefix.strip("/") else None)
    if callable(getattr(value, "client", None)) and hasattr(value, "region_name") and hasattr(value, "get_credentials"):
        if not value.region_name:
            raise SagelaunchError("sagemaker_session: the boto3.Session has no region; allowed: a Session with one, "
                                  "e.g. boto3.Session(region_name='us-west-2')", field="sagemaker_session", value=value,
                                  allowed="a Session with a region", fix="e.g. boto3.Session(region_name='us-west-2')")
        return SessionParts(value, value.region_name, None, None)
    fix = "e.g. sagemaker_session=Session(boto_session=boto3.Session(region_name='us-west-2'))"
    raise SagelaunchError(f"sagemaker_session={type(value).__name__} object is not a session; allowed: a "
                          f"sagemaker.Session, estimators.Session or boto3.Session — {fix}", field="sagemaker_session",
                          value=value, allowed="a sagemaker.Session, estimators.Session or boto3.Session", fix=fix)
