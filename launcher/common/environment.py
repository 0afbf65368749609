"""Probes of the machine the client runs on: the configured AWS region and the GPUs this machine shows.

One function each; nothing here touches the network. The support catalog (jobspec.catalog) holds
facts only; what depends on this machine is read here.
"""

from __future__ import annotations

import configparser
import os
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path

from sagelaunch.jobspec.catalog import LOCAL_DEFAULT_REGION
from sagelaunch.jobspec.errors import SagelaunchError

REGION_VARIABLES = ("AWS_REGION", "AWS_DEFAULT_REGION")
NO_REGION = ("no AWS region is configured (none of AWS_REGION, AWS_DEFAULT_REGION or a region in the AWS config "
             "file's profile); fix: pass --region us-west-2 (region= in Python) or export AWS_REGION=us-west-2")
REGION_ALLOWED = "an AWS region such as us-west-2"


def no_region_error(prefix: str = "") -> SagelaunchError:
    """NO_REGION as an error of the `region` field (callers tell it by its field, never by its text)."""
    return SagelaunchError(prefix + NO_REGION, field="region", value=None, allowed=REGION_ALLOWED,
                           fix="pass --region us-west-2 (region= in Python) or export AWS_REGION=us-west-2")


def configured_region() -> str | None:
    """The one region rule, for every command: AWS_REGION, AWS_DEFAULT_REGION, then the profile's region in the
    AWS config file (AWS_CONFIG_FILE; AWS_PROFILE / AWS_DEFAULT_PROFILE, else "default"), as the AWS CLI reads
    them. No network, no boto3 (boto3 alone ignores AWS_REGION: launcher.common.aws.clients passes this region on)."""
    for var in REGION_VARIABLES:
        if os.environ.get(var):
            return os.environ[var]

    path = Path(os.environ.get("AWS_CONFIG_FILE") or "~/.aws/config").expanduser()
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read(path, encoding="utf-8")
    except (configparser.Error, OSError, UnicodeDecodeError):
        return None
    profile = os.environ.get("AWS_PROFILE") or os.environ.get("AWS_DEFAULT_PROFILE") or "default"
    for section in (f"profile {profile}", profile):
        if parser.has_option(section, "region"):
            return parser.get(section, "region") or None
    return None


def default_region(local: bool = True) -> str:
    """The configured region; local jobs fall back to us-east-1, SageMaker jobs must name one.

    Guessing a region for a SageMaker job would send it (and its data) somewhere the user never chose.
    """
    region = configured_region()
    if region:
        return region
    if local:
        return LOCAL_DEFAULT_REGION
    fix = ("pass region='us-west-2' (or your region), export AWS_REGION=us-west-2, or run "
           "`aws configure set region us-west-2`")
    raise SagelaunchError(
        "region is not set, and a SageMaker job runs in the region you choose; no AWS_REGION, "
        f"AWS_DEFAULT_REGION or region in the AWS config file was found. Fix: {fix}.",
        field="region", value=None, allowed=REGION_ALLOWED, fix=fix)


def machine_gpus(env: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """GPU ids this machine shows: CUDA_VISIBLE_DEVICES when set (in `env`, default os.environ), else NVML's.
    The one probe: the estimators' GPU count and the local backend's GPU ids both come from here."""
    return _probe_gpus((os.environ if env is None else env).get("CUDA_VISIBLE_DEVICES"))


@lru_cache(maxsize=8)
def _probe_gpus(visible: str | None) -> tuple[str, ...]:
    if visible is not None:
        return tuple(d.strip() for d in visible.split(",") if d.strip() and d.strip() != "-1")
    return tuple(str(i) for i in range(_nvml_device_count()))


@lru_cache(maxsize=1)
def _nvml_device_count() -> int:
    try:
        import pynvml  # nvidia-ml-py, light; only asked about for local_gpu

        pynvml.nvmlInit()
        try:
            return pynvml.nvmlDeviceGetCount()
        finally:
            pynvml.nvmlShutdown()
    except Exception:  # no driver / no package: no GPU seen
        return 0


def local_gpu_count() -> int:
    """GPUs a "local_gpu" job gets per host: those visible, at least 1 (what local_gpu promises)."""
    return max(1, len(machine_gpus()))
