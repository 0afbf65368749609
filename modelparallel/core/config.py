"""smp.init's configuration: SM_HP_MP_PARAMETERS (what SageMaker and the local backend deliver) merged with
the `config` dict given to smp.init, validated by the ONE shared parameter model (`sagelaunch.jobspec.smp.SMPParameters`)
and its table of options this implementation lacks; modelparallel defines no parameters or rules of its own."""

from __future__ import annotations

import json
import os
from typing import Any

from pydantic import ValidationError

from sagelaunch.jobspec.contract import SM_HP_MP_PARAMETERS as ENV_VAR
from sagelaunch.jobspec.errors import parts_of, validation_error
from sagelaunch.jobspec.smp import SMPParameters, check_local_support
from sagelaunch.modelparallel.errors import SMPValidationError


def load_parameters(config: dict[str, Any] | None = None) -> SMPParameters:
    """Return the validated `SMPParameters`; keys in `config` override the environment's."""
    merged: dict[str, Any] = {}
    raw = os.environ.get(ENV_VAR, "").strip()
    if raw:
        try:
            from_env = json.loads(raw)
        except json.JSONDecodeError as err:
            example = '{"pipeline_parallel_degree": 2, "microbatches": 4}'
            raise SMPValidationError(f"{ENV_VAR} is not valid JSON ({err}); expected an object such as {example}",
                                     field=ENV_VAR, value=raw, allowed="a JSON object", fix=f"set it to e.g. {example}") from None
        if not isinstance(from_env, dict):
            raise SMPValidationError(f"{ENV_VAR} must be a JSON object, got {type(from_env).__name__}", field=ENV_VAR,
                                     value=from_env, allowed="a JSON object", fix="set it to a JSON object of SMP parameters")
        merged.update(from_env)
    if config:
        if not isinstance(config, dict):
            raise SMPValidationError(f"smp.init(config=...) must be a dict, got {type(config).__name__}", field="config",
                                     value=config, allowed="a dict", fix="pass a dict of SMP parameters")
        # an alias in config replaces the canonical key from the environment (and vice versa)
        aliases = {"partitions": "pipeline_parallel_degree", "fp16_params": "fp16"}
        for key in config:
            other = aliases.get(key) or next((a for a, b in aliases.items() if b == key), None)
            if other:
                merged.pop(other, None)
        merged.update(config)
    try:
        return SMPParameters.model_validate(merged)
    except ValidationError as err:
        raise validation_error(SMPValidationError, "mp_parameters", err) from None


def check_supported(cfg: SMPParameters) -> list[str]:
    """Raise SMPValidationError for a parameter this implementation cannot honour (jobspec.smp.NOT_IMPLEMENTED);
    return one note per parameter that is set but has no effect here (the caller warns)."""
    try:
        return check_local_support(cfg)
    except ValueError as err:
        raise SMPValidationError(str(err), **parts_of(err)) from None
