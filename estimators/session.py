"""`Session`: the SageMaker SDK v2's `sagemaker.Session` as far as a training notebook uses it (its
constructor's names, `boto_session`, `boto_region_name`, `default_bucket()`, `upload_data()`,
`expand_role()`), and `session_parts`, which reads any `sagemaker_session=` an estimator is given.

boto3 is imported when a Session is made, never when `estimators` is imported.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

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
            raise ValueError(f"Session({', '.join(f'{n}=…' for n in refused)}) is not supported: sagelaunch makes its "
                             "own clients from boto_session; allowed: boto_session, default_bucket, "
                             "default_bucket_prefix — pass boto_session=boto3.Session(...) with the credentials and "
                             "region those clients had")
        if default_bucket is not None:
            from estimators.field_checks import s3_uri

            s3_uri("default_bucket", f"s3://{default_bucket}")
        if boto_session is None:
            import boto3

            from launcher.environment import configured_region

            boto_session = boto3.session.Session(region_name=configured_region())
        region = getattr(boto_session, "region_name", None)
        if not region:
            from launcher.environment import NO_REGION

            raise ValueError(f"Session: {NO_REGION}")
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
        from launcher.aws.clients import account_id, using_session

        with using_session(self.boto_session):
            return account_id(self._region_name)

    def default_bucket(self) -> str:
        """The given default_bucket, else `sagemaker-<region>-<account>`; created when missing, as v2 does."""
        if self._default_bucket is None:
            from jobspec.s3uri import default_bucket_name
            from launcher.aws import s3
            from launcher.aws.clients import using_session

            name = self._default_bucket_name or default_bucket_name(self._region_name, self.account_id())
            with using_session(self.boto_session):
                self._default_bucket = s3.ensure_bucket(name, self._region_name)
        return self._default_bucket

    def upload_data(self, path: str, bucket: str | None = None, key_prefix: str = "data", callback: Any = None,
                    extra_args: dict | None = None) -> str:
        """Upload a file or a folder's files to s3://<bucket>/<key_prefix>/…; return the URI as v2 does
        (the folder's prefix, or the one file's key)."""
        from launcher.aws.clients import client, using_session

        if not os.path.exists(path):
            raise ValueError(f"upload_data: path={path!r} does not exist; pass a file or a folder")
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

    def expand_role(self, role: str) -> str:
        """A role name → its ARN (IAM GetRole, keeping its path); an ARN as it is."""
        from launcher.aws.clients import using_session
        from launcher.aws.training import expand_role

        if "/" in role or role.startswith("arn:"):
            return role
        with using_session(self.boto_session):
            return expand_role(role, self._region_name)


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
            raise ValueError("sagemaker_session: the boto3.Session has no region; allowed: a Session with one, "
                             "e.g. boto3.Session(region_name='us-west-2')")
        return SessionParts(value, value.region_name, None, None)
    raise ValueError(f"sagemaker_session={type(value).__name__} object is not a session; allowed: a "
                     "sagemaker.Session, estimators.Session or boto3.Session — e.g. "
                     "sagemaker_session=Session(boto_session=boto3.Session(region_name='us-west-2'))")
