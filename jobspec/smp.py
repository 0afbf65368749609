"""The SageMaker model parallelism library v1 (SMP v1): its parameters and rules, in one place.

- `SMPParameters`: the parameter table as one pydantic model. Source: SageMaker Python SDK docs,
  doc/api/training/smd_model_parallel_general.rst ("Parameters for modelparallel",
  smdistributed-modelparallel v1.2–v1.15) and the SageMaker developer guide pages on tensor
  parallelism, sharded data parallelism, FP16/BF16 and activation offloading.
- `check_world`: the world-size and GPU rules SageMaker would only find at run time.
- `placement_order` / `mesh_shape` / `GROUP_DIMS`: which rank gets which pipeline / tensor /
  data-parallel coordinate.
- `NOT_IMPLEMENTED` / `IGNORED` and `check_local_support`: what sagelaunch's own SMP implementation
  (`modelparallel`) cannot honour. The estimators check it offline for local jobs, `smp.init` at run time.

The estimators validate `distribution=` with these; `modelparallel` validates `mp_parameters` with them.
"""

from __future__ import annotations

import itertools
import warnings
from typing import Any, Literal, NamedTuple

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, model_validator

from sagelaunch.jobspec.catalog import _version_key, matrix
from sagelaunch.jobspec.errors import SagelaunchError
from sagelaunch.jobspec.suggest import did_you_mean, fix_from_hint

PLACEMENT_PERMUTATIONS = tuple("".join(p) for p in itertools.permutations("DPT"))
# SMP v1 (docs "Placement Strategy with Tensor Parallelism"): D (reduced data parallel), P (pipeline),
# T (tensor); the right-most letter varies fastest over consecutive global ranks.
NAMED_PLACEMENTS = {"cluster": "DPT", "spread": "TPD"}
PLACEMENT_STRATEGIES = (*NAMED_PLACEMENTS, *PLACEMENT_PERMUTATIONS)
# the placement dims each SMP process group spans
GROUP_DIMS = {"pp": "P", "tp": "T", "rdp": "D", "dp": "DT", "mp": "PT", "world": "DPT"}
# TensorFlow's SMP v1 has no tensor parallelism: these keys are PyTorch-only.
# smp.init keys of older SMP releases (the May 2022 GPT-2 example passes them) → the field that holds each
OLD_KEYS = {"_match_weights": "match_weights", "_fp32_grad_accumulation": "fp32_grad_accumulation"}
PYTORCH_ONLY = (
    "tensor_parallel_degree", "ddp", "ddp_port", "ddp_dist_backend", "memory_weight", "active_microbatches",
    "deterministic_server", "offload_activations", "activation_loading_horizon", "fp16", "bf16",
    "fp16_params", "shard_optimizer_state", "prescaled_batch", "skip_tracing", "sharded_data_parallel_degree",
    "sdp_reduce_bucket_size", "sdp_param_persistence_threshold", "sdp_max_live_parameters",
    "sdp_hierarchical_allgather", "sdp_gradient_clipping", "delayed_parameter_initialization",
    "tensor_parallel_seed", "predefined_hooks", "overlapping_allreduce", "static_mode", "fast_mode",
    "checkpoint_attentions", *OLD_KEYS.values(),
)
TENSORFLOW_ONLY = ("horovod", "contiguous")


class SMPParameters(BaseModel):
    """`distribution["smdistributed"]["modelparallel"]["parameters"]`, every key typed and checked."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True, defer_build=True)

    # --- common
    pipeline_parallel_degree: int = Field(
        1, ge=1, validation_alias=AliasChoices("pipeline_parallel_degree", "partitions"),
        description="Number of pipeline stages (alias: partitions, the TensorFlow name).",
    )
    microbatches: int = Field(1, ge=1, description="Microbatches per batch; the batch must divide by it.")
    pipeline: Literal["interleaved", "simple", "_only_forward"] = "interleaved"
    optimize: Literal["memory", "speed"] = "memory"
    placement_strategy: str = Field("cluster", description="cluster, spread, or a permutation of D, P, T.")
    auto_partition: bool = True
    load_partition: bool = False
    partition_file: str | None = Field(None, description="Where SMP saves (or, with load_partition, reads) its "
                                                        "auto-partition decision.")
    default_partition: int | None = Field(None, ge=0, description="Required when auto_partition is False.")
    # --- TensorFlow
    contiguous: bool = True
    horovod: bool = False
    # --- PyTorch
    tensor_parallel_degree: int = Field(1, ge=1)
    tensor_parallel_seed: int = Field(0, ge=0)
    ddp: bool = False
    ddp_port: int | None = Field(None, ge=1, le=65535)
    ddp_dist_backend: Literal["auto", "nccl", "smddp"] = "auto"
    memory_weight: float | None = Field(None, ge=0.0, le=1.0, description="Default 0.2 if optimize=speed else 0.8.")
    active_microbatches: int | None = Field(None, ge=1, description="Default pipeline_parallel_degree + 2.")
    deterministic_server: bool = False
    offload_activations: bool = False
    activation_loading_horizon: int = Field(4, ge=1)
    fp16: bool = Field(False, validation_alias=AliasChoices("fp16", "fp16_params"))
    bf16: bool = False
    shard_optimizer_state: bool = False
    prescaled_batch: bool = False
    skip_tracing: bool = False
    predefined_hooks: bool = True
    delayed_parameter_initialization: bool = False
    sharded_data_parallel_degree: int = Field(1, ge=1)
    sdp_reduce_bucket_size: int = Field(500_000_000, ge=1)
    sdp_param_persistence_threshold: int = Field(1_000_000, ge=0)
    sdp_max_live_parameters: int = Field(1_000_000_000, ge=1)
    sdp_hierarchical_allgather: bool = True
    sdp_gradient_clipping: float = Field(1.0, ge=0.0)
    # --- PyTorch keys that only tune SMP's own runtime and kernels (smp.init accepts them; SDK v2 passes them on)
    overlapping_allreduce: bool = True
    static_mode: bool = False
    fast_mode: bool = False
    checkpoint_attentions: bool = False
    # --- keys of older SMP releases, spelled with a leading underscore (OLD_KEYS)
    match_weights: bool = Field(False, validation_alias="_match_weights",
                                description="_match_weights: a model created for SMP's distributed transformer keeps "
                                            "the weights it was built with instead of SMP's own initialisation.")
    fp32_grad_accumulation: bool = Field(False, validation_alias="_fp32_grad_accumulation",
                                         description="_fp32_grad_accumulation: accumulate fp16/bf16 gradients in fp32.")

    @model_validator(mode="before")
    @classmethod
    def _known_keys(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        known = (set(cls.model_fields) - set(OLD_KEYS.values())) | {"partitions", "fp16_params", *OLD_KEYS}
        for key in data:
            if key not in known:
                hint = did_you_mean(key, sorted(known))
                raise SagelaunchError(
                    f"mp_parameters: unknown SMP v1 parameter {key!r}{hint}; allowed: {', '.join(sorted(known))}",
                    field=f"mp_parameters.{key}", value=data[key], allowed=", ".join(sorted(known)),
                    fix=fix_from_hint(hint, "drop it (SMP v1 has no such parameter)"))
        for a, b in (("partitions", "pipeline_parallel_degree"), ("fp16_params", "fp16")):
            if a in data and b in data and data[a] != data[b]:
                raise SagelaunchError(f"mp_parameters: {a}={data[a]!r} and {b}={data[b]!r} are aliases; give only {b}",
                                      field=f"mp_parameters.{a}", value=data[a], allowed=f"one of {a} and {b}",
                                      fix=f"give only {b}")
        if "fp16_params" in data:
            warnings.warn("mp_parameters: fp16_params is deprecated; use fp16", DeprecationWarning, stacklevel=2)
        return data

    @model_validator(mode="after")
    def _cross_rules(self) -> "SMPParameters":
        pp, tp, sdp = self.pipeline_parallel_degree, self.tensor_parallel_degree, self.sharded_data_parallel_degree
        if self.placement_strategy not in PLACEMENT_STRATEGIES:
            raise placement_error("mp_parameters.placement_strategy", self.placement_strategy)
        if self.ddp and self.horovod:
            raise SagelaunchError("mp_parameters: ddp=True and horovod=True are exclusive; set one of them (ddp for "
                                  "PyTorch)", field="mp_parameters.horovod", value=True, allowed="one of ddp and horovod",
                                  fix="set one of them (ddp for PyTorch)")
        if self.ddp_port is not None and not self.ddp:
            raise SagelaunchError(f"mp_parameters.ddp_port={self.ddp_port} needs ddp=True; add \"ddp\": true or drop "
                                  "ddp_port", field="mp_parameters.ddp_port", value=self.ddp_port, allowed="with ddp=True",
                                  fix="add \"ddp\": true or drop ddp_port")
        if not self.auto_partition:
            if self.default_partition is None:
                raise SagelaunchError(
                    "mp_parameters.default_partition is required when auto_partition=False; "
                    f"set it to a partition id in 0..{pp - 1}", field="mp_parameters.default_partition", value=None,
                    allowed=f"0..{pp - 1}", fix=f"set it to a partition id in 0..{pp - 1}")
        if self.default_partition is not None and self.default_partition >= pp:
            raise SagelaunchError(
                f"mp_parameters.default_partition={self.default_partition} must be < pipeline_parallel_degree={pp}; "
                f"allowed: 0..{pp - 1}", field="mp_parameters.default_partition", value=self.default_partition,
                allowed=f"0..{pp - 1}", fix=f"use a partition id below {pp}")
        if self.fp16 and self.bf16:
            raise SagelaunchError("mp_parameters: bf16=True excludes fp16=True; pick one precision",
                                  field="mp_parameters.bf16", value=True, allowed="one of bf16 and fp16",
                                  fix="pick one precision")
        if sdp > 1 and (tp > 1 or pp > 1):
            raise SagelaunchError(
                f"mp_parameters.sharded_data_parallel_degree={sdp} excludes tensor_parallel_degree={tp} / "
                f"pipeline_parallel_degree={pp} > 1; set both to 1 or sharded_data_parallel_degree to 1",
                field="mp_parameters.sharded_data_parallel_degree", value=sdp,
                allowed="1 with tensor or pipeline parallelism", fix="set both to 1 or sharded_data_parallel_degree to 1")
        if sdp > 1 and self.shard_optimizer_state:
            raise SagelaunchError(
                "mp_parameters: sharded_data_parallel_degree > 1 already shards optimizer state; "
                "drop shard_optimizer_state", field="mp_parameters.shard_optimizer_state", value=True,
                allowed="False with sharded_data_parallel_degree > 1", fix="drop shard_optimizer_state")
        if tp > 1 and not self.ddp:
            raise needs_ddp("tensor_parallel_degree", tp)
        return self

    # derived values the SMP runtime uses when a key is absent
    @property
    def partitions(self) -> int:
        return self.pipeline_parallel_degree

    @property
    def effective_memory_weight(self) -> float:
        if self.memory_weight is not None:
            return self.memory_weight
        return 0.2 if self.optimize == "speed" else 0.8

    @property
    def effective_active_microbatches(self) -> int:
        return self.active_microbatches if self.active_microbatches is not None else self.pipeline_parallel_degree + 2

    @property
    def effective_default_partition(self) -> int:
        return self.default_partition or 0

    def check_framework(self, framework: str) -> None:
        """Reject keys the other framework's SMP v1 does not have (only explicitly set ones)."""
        given = self.model_fields_set
        if framework == "tensorflow":
            bad = [k for k in PYTORCH_ONLY if k in given]
            if self.placement_strategy not in ("cluster", "spread"):
                bad.append("placement_strategy")
        else:
            bad = [k for k in TENSORFLOW_ONLY if k in given and getattr(self, k) != type(self).model_fields[k].default]
        if bad:
            fix = ("TensorFlow supports pipeline parallelism only (placement cluster|spread)" if framework == "tensorflow"
                   else "use ddp instead of horovod")
            raise SagelaunchError(f"mp_parameters: {', '.join(bad)} not supported by SMP v1 for {framework}; {fix}",
                                  field=f"mp_parameters.{bad[0]}", value=getattr(self, bad[0]),
                                  allowed=f"the SMP v1 parameters of {framework}", fix=fix)


# ---------------------------------------------------------------- placement
def placement_order(strategy: str) -> str:
    """'cluster' → 'DPT', 'spread' → 'TPD', a permutation of D/P/T → itself."""
    order = NAMED_PLACEMENTS.get(strategy, strategy)
    if order not in PLACEMENT_PERMUTATIONS:
        raise placement_error("placement_strategy", strategy)
    return order


def needs_ddp(name: str, degree: int) -> SagelaunchError:
    return SagelaunchError(f"mp_parameters.{name}={degree} needs ddp=True; add \"ddp\": true",
                           field=f"mp_parameters.{name}", value=degree, allowed="with ddp=True", fix='add "ddp": true')


def placement_error(field: str, strategy: str) -> SagelaunchError:
    hint = did_you_mean(strategy, PLACEMENT_STRATEGIES)
    allowed = ", ".join(PLACEMENT_STRATEGIES)
    return SagelaunchError(f"{field}={strategy!r} is not valid; allowed: {allowed}{hint}", field=field, value=strategy,
                           allowed=allowed, fix=fix_from_hint(hint, "pick one of the allowed strategies"))


def mesh_shape(order: str, rdp: int, pp: int, tp: int) -> tuple[int, ...]:
    """The rank grid's shape, its dims in placement order."""
    sizes = {"D": rdp, "P": pp, "T": tp}
    return tuple(sizes[d] for d in order)


# ---------------------------------------------------------------- pipeline stages
def even_chunks(n_units: int, n_chunks: int) -> list[range]:
    """The layers of each pipeline chunk when auto-partition splits the layer stack evenly (the first chunks take one
    more when it does not divide): modelparallel's partitioning and the planner's memory per stage."""
    base, extra = divmod(n_units, n_chunks)
    out, start = [], 0
    for i in range(n_chunks):
        size = base + (1 if i < extra else 0)
        out.append(range(start, start + size))
        start += size
    return out


# ---------------------------------------------------------------- world size
def check_grid(world_size: int, pp: int, tp: int) -> None:
    """The ranks must fill a D × P × T grid: pp × tp divides the world size."""
    if world_size % (pp * tp):
        raise SagelaunchError(
            f"mp_parameters: pipeline_parallel_degree × tensor_parallel_degree = {pp}×{tp} = {pp * tp} "
            f"must divide the world size {world_size} (instance_count × processes_per_host); "
            f"change the degrees or processes_per_host", field="mp_parameters.pipeline_parallel_degree", value=pp,
            allowed=f"degrees whose product divides {world_size}", fix="change the degrees or processes_per_host")


class WorldLayout(NamedTuple):
    world_size: int
    pipeline_parallel_degree: int
    tensor_parallel_degree: int
    data_parallel_degree: int  # world / pp: replicas of one pipeline stage (tp ranks included)
    reduced_data_parallel_degree: int  # world / (pp * tp)


def check_world(params: SMPParameters, world_size: int, gpus_per_host: int | None) -> WorldLayout:
    """The hardware rules SageMaker would only find at run time.

    gpus_per_host 0/None means CPU processes (a local run): GPU-count rules are skipped.
    """
    pp, tp = params.pipeline_parallel_degree, params.tensor_parallel_degree
    sdp = params.sharded_data_parallel_degree
    if world_size < 1:
        raise SagelaunchError(f"world_size={world_size} must be ≥ 1 (instance_count × processes_per_host)",
                              field="world_size", value=world_size, allowed="≥ 1",
                              fix="raise instance_count or processes_per_host")
    if gpus_per_host and tp > gpus_per_host:
        raise SagelaunchError(
            f"mp_parameters.tensor_parallel_degree={tp} exceeds the {gpus_per_host} GPUs per instance; "
            f"allowed: 1..{gpus_per_host}, or pick an instance_type with more GPUs",
            field="mp_parameters.tensor_parallel_degree", value=tp, allowed=f"1..{gpus_per_host}",
            fix="lower it, or pick an instance_type with more GPUs")
    for name, degree in (("tensor_parallel_degree", tp), ("pipeline_parallel_degree", pp)):
        if degree > world_size:
            raise SagelaunchError(
                f"mp_parameters.{name}={degree} is larger than the world size {world_size} "
                "(instance_count × processes_per_host); "
                f"allowed: a divisor of {world_size} (1..{world_size}); lower it or launch more processes",
                field=f"mp_parameters.{name}", value=degree, allowed=f"a divisor of {world_size} (1..{world_size})",
                fix="lower it or launch more processes")
    check_grid(world_size, pp, tp)
    if world_size > pp * tp and not (params.ddp or params.horovod):
        raise SagelaunchError(
            f"mp_parameters: world size {world_size} (instance_count × processes_per_host) > "
            f"pipeline_parallel_degree × tensor_parallel_degree = {pp * tp} means data parallelism across model "
            "replicas: set mp_parameters.ddp=True (PyTorch) or horovod=True (TensorFlow)", field="mp_parameters.ddp",
            value=params.ddp, allowed="ddp=True (or horovod=True) with data parallelism",
            fix="set mp_parameters.ddp=True (PyTorch) or horovod=True (TensorFlow)")
    if sdp > 1 and (world_size % sdp or sdp > world_size):
        raise SagelaunchError(
            f"mp_parameters.sharded_data_parallel_degree={sdp} must divide the world size {world_size} "
            "(instance_count × processes_per_host)", field="mp_parameters.sharded_data_parallel_degree", value=sdp,
            allowed=f"a divisor of {world_size}", fix="change it or processes_per_host")
    if sdp > 1 and not params.ddp:
        raise needs_ddp("sharded_data_parallel_degree", sdp)
    return WorldLayout(world_size, pp, tp, world_size // pp, world_size // (pp * tp))


# ---------------------------------------------------------------- what sagelaunch's modelparallel implements
# Parameters sagelaunch's SMP implementation cannot honour and whose silent omission would change what the user
# gets (numerics, memory, or an API the script then calls): refused. (name, predicate, what to do)
NOT_IMPLEMENTED = (
    ("pipeline", lambda v: v == "_only_forward",
     "supported: 'interleaved' or 'simple' (SMP's internal forward-only pipeline has no equivalent); "
     "fix: drop it or use 'simple'"),
)
# Combinations it cannot honour: (name, predicate on all parameters, the parameters it depends on, what to do)
NOT_IMPLEMENTED_WITH = (
    ("delayed_parameter_initialization",
     lambda p: p.delayed_parameter_initialization and (p.pipeline_parallel_degree > 1
                                                       or p.sharded_data_parallel_degree > 1),
     ("pipeline_parallel_degree", "sharded_data_parallel_degree"),
     "supported: with tensor parallelism and (unsharded) data parallelism, where each rank materialises only its "
     "shards; with pipeline_parallel_degree > 1 or sharded_data_parallel_degree > 1 a rank would materialise the "
     "whole model first; fix: drop delayed_parameter_initialization, or use tensor_parallel_degree instead"),
    ("fp32_grad_accumulation", lambda p: p.fp32_grad_accumulation and (p.fp16 or p.bf16), ("fp16", "bf16"),
     "supported: with fp32 training, where gradients already accumulate in fp32; with fp16/bf16 the half-precision "
     "gradients accumulate in their own precision here; fix: drop _fp32_grad_accumulation, or train in fp32"),
)

# Parameters that are accepted but have no effect here; ignoring them changes neither the numbers nor the API,
# so smp.init only warns (once, on rank 0) when one is set to a non-default value. Why each is harmless:
IGNORED = {
    "optimize": "SMP's memory/speed partition heuristic; stages are split evenly or by smp.partition",
    "memory_weight": "SMP's partition balancing weight; stages are split evenly or by smp.partition",
    "ddp_port": "the process group uses torchrun's MASTER_ADDR/MASTER_PORT",
    "ddp_dist_backend": "the backend is chosen by device: NCCL on CUDA, gloo on CPU",
    "tensor_parallel_seed": "RNG streams are not offset per tp rank (no effect without dropout)",
    "predefined_hooks": "built-in tensor-parallel plans need no translation hooks",
    "sdp_reduce_bucket_size": "tunes SMP's MiCS kernels; FSDP2 reduce-scatters per sharded block",
    "sdp_param_persistence_threshold": "tunes SMP's MiCS kernels; FSDP2 shards every parameter",
    "sdp_max_live_parameters": "tunes SMP's MiCS kernels; FSDP2 gathers one sharded block at a time",
    "sdp_hierarchical_allgather": "tunes SMP's MiCS kernels; FSDP2's all-gather is flat",
    "load_partition": "SMP's saved auto-partition decision; stages here are split evenly or by smp.partition/"
                      "smp.set_partition, the same split on every run",
    "partition_file": "SMP's saved auto-partition decision; stages here are split evenly or by smp.partition/"
                      "smp.set_partition, the same split on every run",
    "overlapping_allreduce": "DDP always overlaps the gradient all-reduce with backward",
    "static_mode": "tunes SMP's own pipeline runtime (assumes the same graph every step)",
    "fast_mode": "tunes SMP's own pipeline communication",
    "checkpoint_attentions": "tunes SMP's DistributedTransformer kernels; use smp.set_activation_checkpointing",
}
# sdp_gradient_clipping is honoured: with sharded_data_parallel_degree > 1 the gradients' global L2 norm is clipped
# to it at the end of each smp.step (SMP v1 turns clipping on with sharded data parallelism, default 1.0)
# active_microbatches is honoured: the pipeline runs the microbatches in waves of at most that many
# (modelparallel/pipeline/runner.py); without pipelining microbatches run one at a time.
# honoured trivially: skip_tracing (nothing is traced), deterministic_server (the schedules are deterministic);
# contiguous/horovod (TensorFlow only) are refused by SMPParameters.check_framework("pytorch").


def _not_implemented(params: SMPParameters, name: str, where: str, why: str) -> SagelaunchError:
    """One refused parameter; `why` is its table entry, "supported: …; fix: …"."""
    supported, _, fix = why.partition("; fix: ")
    return SagelaunchError(f"mp_parameters.{name}={getattr(params, name)!r}{where} is not supported by sagelaunch's "
                           f"modelparallel; {why}", field=f"mp_parameters.{name}", value=getattr(params, name),
                           allowed=supported.removeprefix("supported: "), fix=fix)


def check_local_support(params: SMPParameters) -> list[str]:
    """Raise ValueError for a parameter sagelaunch's modelparallel cannot honour; return one note per
    parameter that is set but has no effect there (the caller warns)."""
    params.check_framework("pytorch")
    problems = [_not_implemented(params, name, "", why)
                for name, unsupported, why in NOT_IMPLEMENTED if unsupported(getattr(params, name))]
    problems += [_not_implemented(params, name, " with " + ", ".join(f"{k}={getattr(params, k)!r}" for k in context), why)
                 for name, unsupported, context, why in NOT_IMPLEMENTED_WITH if unsupported(params)]
    if problems:
        raise SagelaunchError("; ".join(str(p) for p in problems), **problems[0].parts())
    defaults = type(params).model_fields
    return [f"{name}={getattr(params, name)!r} ({why})" for name, why in IGNORED.items()
            if getattr(params, name) != defaults[name].default]


# ---------------------------------------------------------------- partial-checkpoint file names
# smp.save(f, partial=True) writes one file per model-parallel rank; SMP releases name it differently:
# "mp_rank": f"{f}_{mp_rank}" (SMP before tensor parallelism: the PyTorch 1.6/1.7 DLCs); "pp_tp":
# f"{f}_{pp_rank}_{tp_rank}" (later releases). The fact and its sources: support_matrix.json.
CHECKPOINT_NAMES = ("pp_tp", "mp_rank")


def checkpoint_names(framework_version: str | None) -> str:
    """The partial-checkpoint naming of the SMP release in the PyTorch DLC of `framework_version` (None: the newest
    release's)."""
    if not framework_version:
        return "pp_tp"
    below = matrix()["distribution"]["modelparallel"]["partial_checkpoint_names"]["mp_rank_below_pytorch"]
    return "mp_rank" if _version_key(framework_version)[:2] < _version_key(below)[:2] else "pp_tp"
