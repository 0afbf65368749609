"""smp.init's configuration: SM_HP_MP_PARAMETERS (what SageMaker and the local backend deliver) merged with
the `config` dict given to smp.init, validated by the ONE shared parameter model
(`estimators.distribution.SMPParameters`); modelparallel defines no parameters of its own."""

from __future__ import annotations

import json
import os
from typing import Any

from pydantic import ValidationError

from modelparallel.errors import SMPValidationError

ENV_VAR = "SM_HP_MP_PARAMETERS"


def load_parameters(config: dict[str, Any] | None = None):
    """Return the validated `SMPParameters`; keys in `config` override the environment's."""
    from estimators.distribution import SMPParameters

    merged: dict[str, Any] = {}
    raw = os.environ.get(ENV_VAR, "").strip()
    if raw:
        try:
            from_env = json.loads(raw)
        except json.JSONDecodeError as err:
            raise SMPValidationError(f"{ENV_VAR} is not valid JSON ({err}); expected an object such as "
                                     '{"pipeline_parallel_degree": 2, "microbatches": 4}') from None
        if not isinstance(from_env, dict):
            raise SMPValidationError(f"{ENV_VAR} must be a JSON object, got {type(from_env).__name__}")
        merged.update(from_env)
    if config:
        if not isinstance(config, dict):
            raise SMPValidationError(f"smp.init(config=...) must be a dict, got {type(config).__name__}")
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
        raise SMPValidationError(_error_text(err)) from None


def _error_text(err: ValidationError) -> str:
    """One line per error, each prefixed once with `mp_parameters` (the shared model's own messages already
    start with it; field errors name the field: `mp_parameters.microbatches: …`)."""
    lines = []
    for e in err.errors():
        msg = e["msg"].removeprefix("Value error, ")
        if msg.startswith("mp_parameters"):
            lines.append(msg)
            continue
        loc = ".".join(str(p) for p in e["loc"])
        value = e.get("input")
        shown = "" if isinstance(value, dict) or e["type"] == "missing" else f" (got {value!r})"
        lines.append(f"mp_parameters{'.' + loc if loc else ''}: {msg}{shown}")
    return "; ".join(lines)


# Parameters this implementation cannot honour and whose silent omission would change what the user gets
# (numerics, memory, or an API the script then calls): smp.init refuses them. (name, predicate, what to do)
UNSUPPORTED = (
    ("sharded_data_parallel_degree", lambda v: v > 1,
     "supported: 1 (sharded data parallelism is not implemented); fix: drop it and use shard_optimizer_state=True "
     "with ddp=True to shard the optimizer state over the data-parallel ranks"),
    ("fp16", bool, "supported: False (fp32 training; no FP16_Module / loss scaling); fix: drop fp16"),
    ("bf16", bool, "supported: False (fp32 training); fix: drop bf16"),
    ("delayed_parameter_initialization", bool,
     "supported: False (every rank builds the whole model, then shards it); fix: drop it"),
)

# Parameters that are accepted but have no effect here; ignoring them changes neither the numbers nor the API,
# so smp.init only warns (once, on rank 0) when one is set to a non-default value. Why each is harmless:
IGNORED = {
    "optimize": "SMP's memory/speed partition heuristic; stages are split evenly or by smp.partition",
    "memory_weight": "SMP's partition balancing weight; stages are split evenly or by smp.partition",
    "active_microbatches": "torch.distributed.pipelining's schedule decides how many microbatches are in flight",
    "ddp_port": "the process group uses torchrun's MASTER_ADDR/MASTER_PORT",
    "ddp_dist_backend": "the backend is chosen by device: NCCL on CUDA, gloo on CPU",
    "tensor_parallel_seed": "RNG streams are not offset per tp rank (no effect without dropout)",
    "predefined_hooks": "built-in tensor-parallel plans need no translation hooks",
    "sdp_reduce_bucket_size": "only used with sharded_data_parallel_degree > 1",
    "sdp_param_persistence_threshold": "only used with sharded_data_parallel_degree > 1",
    "sdp_max_live_parameters": "only used with sharded_data_parallel_degree > 1",
    "sdp_hierarchical_allgather": "only used with sharded_data_parallel_degree > 1",
    "sdp_gradient_clipping": "only used with sharded_data_parallel_degree > 1",
}
# honoured trivially: skip_tracing (nothing is traced), deterministic_server (the schedules are deterministic);
# contiguous/horovod (TensorFlow only) are refused by SMPParameters.check_framework("pytorch").


def check_supported(cfg) -> list[str]:
    """Raise SMPValidationError for a parameter this implementation cannot honour; return one note per
    parameter that is set but has no effect here (the caller warns)."""
    try:
        cfg.check_framework("pytorch")
    except ValueError as err:
        raise SMPValidationError(str(err)) from None
    errors = [f"mp_parameters.{name}={getattr(cfg, name)!r} is not supported by sagelaunch's modelparallel; {fix}"
              for name, unsupported, fix in UNSUPPORTED if unsupported(getattr(cfg, name))]
    if errors:
        raise SMPValidationError("; ".join(errors))
    defaults = type(cfg).model_fields
    return [f"{name}={getattr(cfg, name)!r} ({why})" for name, why in IGNORED.items()
            if getattr(cfg, name) != defaults[name].default]
