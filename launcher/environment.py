"""Probes of the machine the client runs on: the configured AWS region and the GPUs this machine shows.

One function each; nothing here touches the network. The support catalog (jobspec.catalog) holds
facts only; what depends on this machine is read here.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path

from jobspec.catalog import LOCAL_DEFAULT_REGION


def configured_region() -> str | None:
    """AWS_REGION, AWS_DEFAULT_REGION, then the profile's region in the AWS config file; no network."""
    for var in ("AWS_REGION", "AWS_DEFAULT_REGION"):
        if os.environ.get(var):
            return os.environ[var]
    path = Path(os.environ.get("AWS_CONFIG_FILE", "~/.aws/config")).expanduser()
    if path.is_file():
        import configparser

        parser = configparser.ConfigParser()
        try:
            parser.read(path)
        except configparser.Error:
            return None
        profile = os.environ.get("AWS_PROFILE", "default")
        for section in (f"profile {profile}", profile):
            if parser.has_option(section, "region"):
                return parser.get(section, "region")
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
    raise ValueError(
        "region is not set, and a SageMaker job runs in the region you choose; no AWS_REGION, "
        "AWS_DEFAULT_REGION or region in the AWS config file was found. Fix: pass region='us-west-2' "
        "(or your region), export AWS_REGION=us-west-2, or run `aws configure set region us-west-2`."
    )


def visible_gpus(env: Mapping[str, str] | None = None) -> list[str]:
    """GPU ids this machine shows: CUDA_VISIBLE_DEVICES when set (in `env`, default os.environ), else NVML's."""
    env = os.environ if env is None else env
    visible = env.get("CUDA_VISIBLE_DEVICES")
    if visible is not None:
        return [d.strip() for d in visible.split(",") if d.strip() and d.strip() != "-1"]
    return [str(i) for i in range(_nvml_device_count())]


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
    return max(1, len(visible_gpus()))
