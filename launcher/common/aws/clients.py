"""boto3 sessions and clients with bounded, standard-mode retries.

Endpoints come from boto3's own resolution, so `AWS_ENDPOINT_URL` (and the per-service
`AWS_ENDPOINT_URL_<SERVICE>`) redirect every call — that is how tests reach a moto server.
Clients are cached per (service, region, endpoint, attempts, credentials source) so a changed
endpoint, profile or key is honoured.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from sagelaunch.launcher.common.aws.errors import translate
from sagelaunch.launcher.common.aws.limits import CONNECT_TIMEOUT, max_attempts, read_timeout
from sagelaunch.launcher.common.environment import configured_region, no_region_error


def resolve_region(region: str | None = None) -> str:
    """The region to use: the given one, else the configured one (launcher.common.environment's rule); ValueError if none.

    boto3 alone ignores AWS_REGION, so clients always get their region from here, never from boto3.
    """
    if region:
        return region

    found = configured_region()
    if not found:
        raise no_region_error()
    return found


def botocore_config(attempts: int | None = None, **overrides: Any):
    from botocore.config import Config

    return Config(
        retries={"mode": "standard", "total_max_attempts": attempts or max_attempts()},  # incl. the first call
        connect_timeout=overrides.pop("connect_timeout", CONNECT_TIMEOUT),
        read_timeout=overrides.pop("read_timeout", read_timeout()),
        user_agent_extra="sagelaunch",
        **overrides,
    )


# the boto3 Session of a user's `sagemaker_session=` while its job is prepared and followed (None: the default chain)
_USER_SESSION: ContextVar[Any] = ContextVar("sagelaunch_user_boto_session", default=None)


@contextmanager
def using_session(boto_session: Any) -> Iterator[None]:
    """Clients made inside use `boto_session`'s credentials (a boto3.Session; None: boto3's default chain)."""
    token = _USER_SESSION.set(boto_session)
    try:
        yield
    finally:
        _USER_SESSION.reset(token)


def current_session() -> Any:
    """The boto3 Session `using_session` installed here, or None."""
    return _USER_SESSION.get()


@functools.lru_cache(maxsize=64)
def _cached_client(service: str, region: str, endpoint: str | None, attempts: int, timeout: float,
                   _credentials: tuple, boto_session: Any = None):
    import boto3

    session = boto_session or boto3.session.Session(region_name=region)
    return session.client(service, region_name=region, config=botocore_config(attempts, read_timeout=timeout))


def client(service: str, region: str | None = None):
    """A retrying boto3 client for `service` ("sagemaker", "s3", "logs", "sts", ...)."""
    region = resolve_region(region)
    endpoint = os.environ.get(f"AWS_ENDPOINT_URL_{service.upper().replace('-', '_')}") or os.environ.get(
        "AWS_ENDPOINT_URL"
    )
    credentials = (os.environ.get("AWS_PROFILE"), os.environ.get("AWS_ACCESS_KEY_ID"))
    return _cached_client(service, region, endpoint, max_attempts(), read_timeout(), credentials, current_session())


def account_id(region: str | None = None) -> str:
    """The caller's account id (STS GetCallerIdentity), asked once per endpoint and credentials."""
    region = resolve_region(region)
    return _cached_account(region, os.environ.get("AWS_ENDPOINT_URL"), os.environ.get("AWS_ACCESS_KEY_ID"),
                           os.environ.get("AWS_PROFILE"), current_session())


@functools.lru_cache(maxsize=16)
def _cached_account(region: str, endpoint: str | None, key: str | None, profile: str | None,
                    _session: Any = None) -> str:
    with translate("find your AWS account (sts:GetCallerIdentity)"):
        return client("sts", region).get_caller_identity()["Account"]
