"""v2's sagemaker.image_uris.retrieve for the frameworks sagelaunch runs (jobspec.catalog answers)."""

from __future__ import annotations

from typing import Any

from sagelaunch.sagemaker import _not_mirrored

from sagelaunch.jobspec import catalog
from sagelaunch.jobspec.errors import SagelaunchError
from sagelaunch.jobspec.suggest import allowed_list

__all__ = ["retrieve"]


def retrieve(framework: str, region: str, version: str | None = None, py_version: str | None = None,
             instance_type: str | None = None, accelerator_type: Any = None, image_scope: str | None = None,
             container_version: Any = None, distribution: dict | None = None, **v2_options: Any) -> str:
    """The image v2 resolves: training images with the full DLC tag where known (README), serving images exactly."""
    unsupported = {k: v for k, v in dict(accelerator_type=accelerator_type, container_version=container_version,
                                           **v2_options).items() if v is not None}
    if unsupported:
        allowed = "framework, region, version, py_version, instance_type, image_scope, distribution"
        raise SagelaunchError(f"image_uris.retrieve({', '.join(f'{k}=…' for k in unsupported)}): not supported by "
                              f"sagelaunch's catalog; allowed: {allowed} — drop them", field=next(iter(unsupported)),
                              value=next(iter(unsupported.values())), allowed=allowed, fix="drop them")
    catalog.check_framework(framework)
    if version is None or instance_type is None:
        raise SagelaunchError(f"image_uris.retrieve: version= and instance_type= are required for {framework} "
                              f"(version: one of {allowed_list(catalog.framework_versions(framework))})",
                              field="version" if version is None else "instance_type", value=None,
                              allowed=", ".join(catalog.framework_versions(framework)) if version is None
                              else "an instance type", fix="pass version= and instance_type=")
    scope = image_scope or "training"
    if scope not in ("training", "inference"):
        raise SagelaunchError(f"image_scope={scope!r}; allowed: 'training', 'inference'", field="image_scope",
                              value=scope, allowed="training, inference", fix="use 'training' or 'inference'")
    if scope == "inference":
        return catalog.inference_image_uri(framework, version, region, instance_type, py_version)
    resolved = catalog.resolve_framework_version(framework, version)
    py = catalog.check_py_version(framework, resolved, py_version)
    smdistributed = isinstance(distribution, dict) and "smdistributed" in distribution
    return catalog.training_image_uri(framework, version, py, region, instance_type, smdistributed)

__getattr__ = _not_mirrored.refusing_getattr(__name__)  # a v2 name not mirrored: refused by name
