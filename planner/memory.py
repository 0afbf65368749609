"""What one GPU holds, per term, for a model, a layout and a microbatch: the most loaded rank of each pipeline
stage. Two runtimes, because they hold different things:

- "sagelaunch": sagelaunch.modelparallel (what a local job runs; checked against measured per-rank tensors by
  scripts/bench_planner_memory.py). fp16/bf16 models hold half parameters and gradients; smp.DistributedOptimizer
  keeps fp32 master weights of every local parameter (MasterWeights), and fp32 master gradients at the step;
  shard_optimizer_state is ZeroRedundancyOptimizer: only the optimizer's state is sharded, whole tensors assigned
  greedily (largest first, to the rank holding least) over the replica group; with pp == 1 and data parallelism
  DDP keeps a flat bucket copy of the gradients it reduces (not of tensor-parallel DTensors); sharded data
  parallelism (FSDP2) keeps fp32 shards of parameters, gradients and state, and gathers one block at a time.
- "smp": SageMaker's SMP v1 library (what an ml.* job runs): its fp16/bf16 optimizer with shard_optimizer_state
  shards the fp32 masters with the state (ZeRO-1), and its reducer keeps no second copy of the gradients.

Activations (Korthikanti et al. 2022, Table 2, written per element so that fp32 and half both follow): per layer
and microbatch, tensors the eager layer saves for backward; with activation checkpointing each layer keeps only
its input and one layer's activations are rebuilt at a time; offloading keeps at most activation_loading_horizon
layers' inputs on the GPU. Microbatches in flight per stage follow the pipeline schedule modelparallel runs.
"""

from __future__ import annotations

import heapq
import itertools
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict

from sagelaunch.jobspec.errors import SagelaunchError
from sagelaunch.jobspec.smp import even_chunks
from sagelaunch.planner.layout import Layout, World
from sagelaunch.planner.pipeline_schedule import rank_order, wave_size
from sagelaunch.planner.shape import ModelShape, Tensor

Runtime = Literal["sagelaunch", "smp"]
ALLOCATOR_OVERHEAD = 0.0  # a caching allocator's fragmentation is not modelled in the tensor figures; see total()
ADAM_STATES = 2  # exp_avg, exp_avg_sq (torch.optim.Adam/AdamW), in the masters' dtype
STEP_BYTES = 4  # Adam's per-tensor step counter (a float32 scalar)


PHASES = ("forward_backward", "layer_backward", "step")  # ties: the first


class MemoryBreakdown(BaseModel):
    """Bytes on one GPU (the most loaded rank of a stage). Its height is the largest of three moments: the forward's
    end (activations and the loss's gradient live; gradients only where earlier microbatches left them), backward
    inside the stage's last layer (see layer_backward_*) and the optimizer step (fp32 master gradients and the
    optimizer's temporaries, activations gone)."""

    model_config = ConfigDict(frozen=True)

    stage: int
    parameters: int
    gradients: int
    optimizer_state: int  # Adam's moments (and step counters) this rank holds
    master_weights: int  # fp32 copies of half parameters
    master_gradients: int  # their fp32 gradients, from the step's start to the next zero_grad
    activations: int
    communication: int  # DDP's gradient buckets, sharded data parallelism's gathered blocks
    gathered_root: int = 0  # of which sharded data parallelism's root parameters, gathered through forward+backward
    allocator: int  # the caching allocator's reserve beyond live tensors
    backward_transient: int  # the loss's gradient (logits-sized) as backward starts
    step_transient: int  # the optimizer's temporaries
    gradients_in_forward: bool  # microbatches > 1 or a pipeline: earlier microbatches' gradients are live
    capacity: int
    # inside backward, at the stage's last layer: the head's gradients are made, the loss is gone but the layers'
    # saved tensors are not, and the layer's own backward holds the gradients of its saved tensors
    layer_backward_gradients: int = 0  # parameter gradients live then
    layer_backward_activations: int = 0
    layer_backward_transient: int = 0

    @property
    def model_states(self) -> int:
        return (self.parameters + self.gradients + self.optimizer_state + self.master_weights
                + self.master_gradients)

    def phase_terms(self, phase: str) -> dict[str, int]:
        """The terms live at "forward_backward" (the forward's end, backward starting), "layer_backward" (backward
        inside the stage's last layer) or at "step"."""
        if phase == "layer_backward":
            return {"parameters": self.parameters, "gradients": self.layer_backward_gradients,
                    "optimizer_state": self.optimizer_state, "master_weights": self.master_weights,
                    "master_gradients": 0, "activations": self.layer_backward_activations,
                    "communication": self.communication, "transient": self.layer_backward_transient,
                    "allocator": self.allocator}
        fwd = phase == "forward_backward"
        return {"parameters": self.parameters,
                "gradients": self.gradients if not fwd or self.gradients_in_forward else 0,
                "optimizer_state": self.optimizer_state, "master_weights": self.master_weights,
                "master_gradients": 0 if fwd else self.master_gradients,
                "activations": self.activations if fwd else 0, "communication": self.communication,
                "transient": self.backward_transient if fwd else self.step_transient, "allocator": self.allocator}

    @property
    def peak_phase(self) -> str:
        return max(PHASES, key=lambda p: sum(self.phase_terms(p).values()))

    def terms(self) -> dict[str, int]:
        """The terms at the peak."""
        return self.phase_terms(self.peak_phase)

    @property
    def total(self) -> int:
        return sum(self.terms().values())

    @property
    def share(self) -> float:
        return self.total / self.capacity if self.capacity else float("inf")


# ---------------------------------------------------------------- which tensors each pipeline rank holds
def virtual_stages(layout: Layout, layers: int) -> int:
    """modelparallel/partitioning.plan_stages: two chunks per rank with the interleaved schedule when the stack
    has at least 2·pp layers, else one."""
    if layout.pp == 1:
        return 1
    return 2 if layout.pipeline == "interleaved" and layers >= 2 * layout.pp else 1


def check_divides(shape: ModelShape, layout: Layout) -> None:
    """The layout must divide the model as modelparallel splits it (refused there at run time)."""
    if shape.layers < layout.pp:
        raise SagelaunchError(
            f"pipeline_parallel_degree={layout.pp} exceeds the model's {shape.layers} layers", field="pp",
            value=layout.pp, allowed=f"1..{shape.layers}", fix=f"use pipeline_parallel_degree ≤ {shape.layers}")
    if layout.tp > 1:
        for name, value in (("num_attention_heads", shape.heads), ("num_key_value_heads", shape.kv_heads)):
            if value % layout.tp:
                allowed = ", ".join(str(d) for d in range(1, value + 1) if value % d == 0)
                raise SagelaunchError(
                    f"tensor_parallel_degree={layout.tp} does not divide the model's {name}={value}", field="tp",
                    value=layout.tp, allowed=allowed, fix=f"use a tensor_parallel_degree in {allowed}")
        for unit in shape.units[:1] + shape.units[-1:]:
            for t in unit:
                if t.split == "split" and t.divides % layout.tp:
                    allowed = ", ".join(str(d) for d in range(1, t.divides + 1) if t.divides % d == 0)
                    raise SagelaunchError(
                        f"tensor_parallel_degree={layout.tp} does not divide the model's {t.divides_name}="
                        f"{t.divides}", field="tp", value=layout.tp, allowed=allowed,
                        fix=f"use a tensor_parallel_degree in {allowed}")


@dataclass(frozen=True)
class StageTensors:
    """One pipeline rank's tensors: (global numel, local numel on one tp rank, DDP reduces it) per tensor."""

    stage: int
    layers: int
    tensors: tuple[tuple[int, int, bool], ...]
    first: bool
    last: bool
    local: int  # numel on one tp rank
    reduced_by_ddp: int  # of which plain tensors (not DTensors), the ones DDP's buckets hold


def per_shape(shape: ModelShape) -> dict[object, object]:
    """Memoised figures of one shape, keyed by the object (a frozen model's hash walks every tensor: too slow
    for a search that asks thousands of times)."""
    entry = _PER_SHAPE.get(id(shape))
    if entry is None or entry[0] is not shape:
        if len(_PER_SHAPE) > 64:
            _PER_SHAPE.clear()
        entry = _PER_SHAPE[id(shape)] = (shape, {})
    return entry[1]


_PER_SHAPE: dict[int, tuple[ModelShape, dict[object, object]]] = {}


def _local(t: Tensor, tp: int, vocab: int) -> tuple[int, int, bool]:
    split = t.split == "split" or (t.split == "vocab" and tp > 1 and vocab % tp == 0)
    local = t.numel // tp if split and tp > 1 else t.numel
    dtensor = tp > 1 and (split or t.tp_module)
    return t.numel, local, not dtensor


def stage_tensors(shape: ModelShape, tp: int, pp: int, virtual: int) -> tuple[StageTensors, ...]:
    memo = per_shape(shape)
    key = ("stages", tp, pp, virtual)
    if key not in memo:
        memo[key] = _stage_tensors(shape, tp, pp, virtual)
    return memo[key]  # type: ignore[return-value]


def _local_part(shape: ModelShape, part: tuple[Tensor, ...], tp: int) -> tuple[tuple[int, int, bool], ...]:
    """A layer's tensors as one tp rank holds them; identical layers (one tuple, repeated) are worked out once."""
    memo = per_shape(shape)
    key = ("part", id(part), tp)
    if key not in memo:
        memo[key] = tuple(_local(t, tp, shape.vocab) for t in part)
    return memo[key]  # type: ignore[return-value]


def _stage_tensors(shape: ModelShape, tp: int, pp: int, virtual: int) -> tuple[StageTensors, ...]:
    chunks = even_chunks(shape.layers, pp * virtual)
    out = []
    for rank in range(pp):
        mine = [s for s in range(len(chunks)) if s % pp == rank]
        first, last = 0 in mine, len(chunks) - 1 in mine
        parts: list[tuple[Tensor, ...]] = []
        if first:
            parts.append(shape.pre)
        parts += [shape.units[i] for s in mine for i in chunks[s]]
        if last:  # a tied head is the embedding's tensor: held again only on a last stage that is not the first
            parts.append(tuple(t for t in shape.post if not t.tied or not first))
        tensors = tuple(itertools.chain.from_iterable(_local_part(shape, part, tp) for part in parts))
        out.append(StageTensors(rank, sum(len(chunks[s]) for s in mine), tensors, first, last,
                                sum(t[1] for t in tensors), sum(t[1] for t in tensors if t[2])))
    return tuple(out)


def zero_partition(tensors: tuple[tuple[int, int, bool], ...], ranks: int) -> list[tuple[int, int]]:
    """ZeroRedundancyOptimizer._partition_parameters: tensors sorted by (global) numel, largest first, each to the
    rank with the smallest total so far; per rank (local numel, tensors)."""
    sizes = [(0, r) for r in range(ranks)]
    local = [[0, 0] for _ in range(ranks)]
    for numel, loc, _ in sorted(tensors, key=lambda t: t[0], reverse=True):
        total, r = heapq.heappop(sizes)
        local[r][0] += loc
        local[r][1] += 1
        heapq.heappush(sizes, (total + numel, r))
    return [(a, b) for a, b in local]


def zero_partition_max(tensors: tuple[tuple[int, int, bool], ...], ranks: int) -> tuple[int, int]:
    """The most loaded rank's (local numel, tensors) of the ZeRO partition."""
    if ranks <= 1:
        return sum(t[1] for t in tensors), len(tensors)
    return max(zero_partition(tensors, ranks))


# ---------------------------------------------------------------- activations
class ActivationModel(BaseModel):
    """The tensors one eager Hugging Face layer saves for backward, counted per family (autograd's saved tensors of
    transformers' GPT2Block, BertLayer and LlamaDecoderLayer with attn_implementation="eager", counted storage by
    storage), in units of `sbh` (tokens × hidden), `sbf` (tokens × FFN width), `scores` (samples × heads × seq²) and
    `sb` (tokens): elements of the activation dtype (`*_e`), fp32 elements (`*_fp32`), and dropout masks (bool on
    CUDA, the activation dtype on the CPU). The `split` terms are divided by the tensor-parallel degree."""

    model_config = ConfigDict(frozen=True)

    sbh_whole_e: float  # norm inputs/outputs, the block inputs of q|k|v and the MLP
    sbh_whole_fp32: float = 0  # a norm's input as fp32 (Llama's RMSNorm upcasts; in fp32 it is the input)
    sbh_split_e: float  # q, k, v (as the score and context products keep them), the output projection's input
    sbf_split_e: float  # the MLP's inner tensors (activation function inputs/outputs, gate·up)
    scores_split_e: float  # softmax output, dropout output
    scores_split_fp32: float = 0  # a softmax computed in fp32 (Llama)
    scores_half_copy: float = 0  # its cast back to a half dtype, kept by the product with V
    sb_e: float = 0  # LayerNorm's mean and rstd
    sb_fp32: float = 0  # RMSNorm's rsqrt
    masks_sbh: float = 0  # dropout masks after attention and MLP (whole)
    masks_scores: float = 0  # the attention dropout mask (split)
    pre_sbh_e: float = 0  # the embedding stage's own (first stage): the embedding LayerNorm's input
    pre_masks_sbh: float = 0  # the embedding dropout's mask
    post_sbh_e: float = 0  # after the stack (last stage): final norm input/output, MLM transform
    post_sbh_fp32: float = 0


ACTIVATIONS = {
    # GPT2Block: ln_1/ln_2 inputs and outputs (4) whole; q, kᵀ, v copies for the batched products and c_proj's
    # input (4) split; NewGELU's five tensors (c_fc out, x³ input, tanh, 0.5x, 1+tanh) and c_proj's input; two
    # resid-dropout masks; softmax out, attention dropout mask and output
    "gpt2": ActivationModel(sbh_whole_e=4, sbh_split_e=4, sbf_split_e=5, scores_split_e=2, sb_e=4, masks_sbh=2,
                            masks_scores=1, pre_masks_sbh=1, post_sbh_e=2),
    # BertLayer: the layer input, LayerNorm inputs and the first LayerNorm's output (4) whole; q, kᵀ, v copies and
    # the context (4) split; GELU input and output; two dropout masks; softmax, dropout mask and output
    "bert": ActivationModel(sbh_whole_e=4, sbh_split_e=4, sbf_split_e=2, scores_split_e=2, sb_e=4, masks_sbh=2,
                            masks_scores=1, pre_sbh_e=1, pre_masks_sbh=1, post_sbh_e=4),
    # LlamaDecoderLayer: per RMSNorm its fp32 input, normalised half copy and output; q, k and v repeated to all
    # heads, o_proj's input; SiLU input, its output and up_proj's output, down_proj's input; softmax in fp32
    "llama": ActivationModel(sbh_whole_e=4, sbh_whole_fp32=2, sbh_split_e=4, sbf_split_e=4, scores_split_e=0,
                             scores_split_fp32=1, scores_half_copy=1, sb_fp32=2, post_sbh_e=2, post_sbh_fp32=1),
}
ACTIVATIONS["roberta"] = ACTIVATIONS["bert"]
ACTIVATIONS["generic"] = ACTIVATIONS["gpt2"]
Device = Literal["cuda", "cpu"]


def layer_activation_bytes(shape: ModelShape, tp: int, tokens: int, seq: int, element: int,
                           device: Device = "cuda") -> float:
    """One layer's saved tensors for `tokens` = micro-batch × seq tokens."""
    a = ACTIVATIONS[shape.family]
    sbh, sbf = tokens * shape.hidden, tokens * shape.ffn
    scores = tokens / seq * shape.heads * seq * seq
    mask = element if device == "cpu" else 1
    half_copy = element if element < 4 else 0
    whole = sbh * (a.sbh_whole_e * element + a.sbh_whole_fp32 * 4 + a.masks_sbh * mask)
    split = (sbh * a.sbh_split_e * element + sbf * a.sbf_split_e * element
             + scores * (a.scores_split_e * element + a.scores_split_fp32 * 4 + a.scores_half_copy * half_copy
                         + a.masks_scores * mask)) / tp
    return whole + split + tokens * (a.sb_e * element + a.sb_fp32 * 4)


def edge_activation_bytes(shape: ModelShape, tokens: int, element: int, first: bool, last: bool,
                          device: Device = "cuda") -> float:
    """The first stage's embedding activations and the last stage's after the stack (final norm, head input)."""
    a = ACTIVATIONS[shape.family]
    sbh = tokens * shape.hidden
    mask = element if device == "cpu" else 1
    out = sbh * (a.pre_sbh_e * element + a.pre_masks_sbh * mask) if first else 0
    if last:
        out += sbh * (a.post_sbh_e * element + a.post_sbh_fp32 * 4)
    return out


def causal_lm(shape: ModelShape) -> bool:
    """A causal language model's loss shifts the logits by one token (BERT/RoBERTa's masked LM does not)."""
    return shape.family not in ("bert", "roberta")


def logits_bytes(shape: ModelShape, layout: Layout, tokens: int, runtime: Runtime) -> int:
    """A language model's loss at its height: the model's output in fp32 (SMP's half-precision model returns fp32
    outputs), a causal LM's shifted copy (`logits[:, :-1].contiguous()`: a strided slice is copied once
    flattened) and the fp32 log-softmax autograd keeps. modelparallel's vocabulary-parallel head gathers the
    logits whole on every tp rank (output Replicate); SMP's distributed cross-entropy keeps them split."""
    vocab = shape.vocab // layout.tp if runtime == "smp" else shape.vocab
    return tokens * vocab * (4 + 4 * causal_lm(shape) + 4)


def held_output_bytes(shape: ModelShape, layout: Layout, tokens: int, runtime: Runtime) -> int:
    """The output kept while backward runs through the layers: the training script's fp32 output
    (`logits = model(x).logits; model.backward(loss)`), or under a pipeline the last stage's raw output (the
    activation dtype), which the schedule keeps with the chunk's forward state until the chunk's backward ends."""
    vocab = shape.vocab // layout.tp if runtime == "smp" else shape.vocab
    element = 4 if layout.precision == "fp32" else 2
    return tokens * vocab * (4 if layout.pp == 1 else element)


def loss_gradient_bytes(shape: ModelShape, layout: Layout, tokens: int, runtime: Runtime) -> int:
    """As backward starts: the gradient of the fp32 log-softmax and of the logits (a language model's last stage)."""
    if not shape.logits:
        return 0
    vocab = shape.vocab // layout.tp if runtime == "smp" else shape.vocab
    return tokens * vocab * 4 * 2


def activation_bytes(shape: ModelShape, layout: Layout, st: StageTensors, virtual: int, tokens: int, seq: int,
                     runtime: Runtime, device: Device) -> tuple[int, int, int]:
    """A stage's activations at their height: the layers' saved tensors for the microbatches in flight (with
    checkpointing only each layer's input, plus one layer rebuilt in backward; offloading keeps at most
    activation_loading_horizon of those inputs), the embedding's and head's own, and the loss. Also, inside the
    backward of the stage's last layer: the activations still live and that layer's backward temporaries (the
    gradients of the MLP's inner tensors and of its output; autograd frees each saved tensor once its node ran)."""
    element = 2 if layout.precision != "fp32" else 4
    layer = layer_activation_bytes(shape, layout.tp, tokens, seq, element, device)
    chunk_layers = st.layers / virtual
    if runtime == "sagelaunch" and layout.pp > 1:
        return scheduled_activation_bytes(shape, layout, st, virtual, tokens, seq, element, layer, device)
    flight = in_flight(layout, st.stage, virtual, layout.microbatches)
    # modelparallel's pipeline stages each run the root's own forward with the stack cut to their layers: the
    # embeddings of other stages return zeros, but the embedding's norm/dropout still run (and save) in every chunk
    every_chunk = runtime == "sagelaunch" and layout.pp > 1
    first = edge_activation_bytes(shape, tokens, element, st.first or every_chunk, False, device)
    last = edge_activation_bytes(shape, tokens, element, False, st.last, device)
    lm_head = st.last and shape.logits
    loss = logits_bytes(shape, layout, tokens, runtime) if lm_head else 0
    kept = first * flight
    if layout.pp > 1 and not (st.last and virtual == 1):  # the schedule keeps each chunk's output until backward
        kept += tokens * shape.hidden * element * flight
    if runtime == "sagelaunch":  # measured on transformers' own layers; SMP v1 swaps in its distributed transformer
        kept += forward_extras_bytes(shape, layout, tokens, seq, element) * flight
    if layout.activation_checkpointing:
        inputs = tokens * shape.hidden * element * chunk_layers * flight
        if layout.offload_activations:
            inputs = min(inputs, tokens * shape.hidden * element * layout.activation_loading_horizon)
        # the forward ends with the head and the loss; backward rebuilds one layer at a time: its height is at the
        # layer's end (every saved tensor rebuilt, and the output its last norm just made; the attention's
        # transients are gone by then and smaller than the MLP's saved tensors), while the outputs stay held
        rebuilt = layer + tokens * shape.hidden * element
        if lm_head:
            rebuilt += held_output_bytes(shape, layout, tokens, runtime)
        backward_acts = kept + inputs + rebuilt
        peak = kept + inputs + max(rebuilt, last + loss)
    else:
        held = held_output_bytes(shape, layout, tokens, runtime) if lm_head else 0
        peak = kept + layer * chunk_layers * flight + last * flight + loss
        backward_acts = peak - loss + held
    return int(peak), int(backward_acts), int(layer_backward_temps(shape, layout, tokens, element))


def layer_backward_temps(shape: ModelShape, layout: Layout, tokens: int, element: int) -> float:
    """The MLP's backward, the layer's heaviest: the output's gradient, and those of its inner tensors (FFN-wide)."""
    return (tokens * shape.hidden + 3 * tokens * shape.ffn / layout.tp) * element


def saves_raw_input(shape: ModelShape, element: int) -> bool:
    """Whether a layer's autograd keeps its input tensor itself: GPT-2's and BERT's first LayerNorm / projections
    do, and Llama's RMSNorm in fp32 (its upcast is a no-op); in half precision RMSNorm saves an fp32 copy."""
    return shape.family != "llama" or element == 4


def forward_extras_bytes(shape: ModelShape, layout: Layout, tokens: int, seq: int, element: int) -> float:
    """Tensors one forward of the model makes once and hands to every layer, kept while its activations live:
    Llama's rotary tables (cos and sin, `LlamaRotaryEmbedding` cast to the activation dtype, 1 × seq × head_dim:
    the position ids are shared by the batch), which the rotary products save; with activation checkpointing also
    the 4-D causal mask eager attention adds to the scores (`create_causal_mask`: samples × 1 × seq × seq in the
    activation dtype), which a checkpoint keeps as one of its layers' inputs (without checkpointing the addition
    saves nothing and the mask goes with the forward)."""
    rotary = 2 * seq * shape.head_dim * element if shape.family == "llama" else 0
    mask = tokens * seq * element if layout.activation_checkpointing and causal_lm(shape) else 0
    return rotary + mask


def scheduled_activation_bytes(shape: ModelShape, layout: Layout, st: StageTensors, virtual: int, tokens: int,
                               seq: int, element: int, layer: float, device: Device) -> tuple[int, int, int]:
    """A pipeline rank's activations under sagelaunch.modelparallel, walked action by action through the order
    torch.distributed.pipelining runs (planner/pipeline_schedule.py). Besides each live chunk-microbatch's own
    tensors (from its forward to its backward) the rank holds:
    - one receive buffer per microbatch of the wave for each of its chunks that is not the first stage, made
      once and reused (PipelineStage `_setup_forward_recv_info`: the hidden state and the model's token ids);
    - every hidden state it sent forward, until the wave ends: `_PipelineScheduleRuntime._step_microbatches`
      keeps the send works (which hold their tensors) and waits on them only before returning.
    With checkpointing a chunk-microbatch keeps each layer's input (a non-first stage's first layer reads the
    receive buffer itself), and backward rebuilds one layer at a time. The stage holding the embeddings runs
    them in each of its chunks (every chunk runs the root's forward), the last stage keeps its head's output
    and the loss until that microbatch's backward."""
    ckpt = layout.activation_checkpointing
    sbh = tokens * shape.hidden * element
    chunks = layout.pp * virtual
    wave = wave_size(layout.microbatches, layout.active_microbatches, layout.pp, layout.pipeline, virtual)
    chunk_layers = st.layers / virtual
    extras = forward_extras_bytes(shape, layout, tokens, seq, element)
    embedding = edge_activation_bytes(shape, tokens, element, st.first, False, device)
    after_stack = edge_activation_bytes(shape, tokens, element, False, True, device)
    # the head's output (the vocabulary gathered whole on every tp rank), kept by the schedule until the
    # microbatch's backward; the loss's tensors: its fp32 log-softmax, the fp32 cast of a half output, and a
    # causal LM's shifted copy (`logits[:, :-1]` is contiguous, so no copy, when a microbatch is one sequence)
    held = tokens * shape.vocab * element if shape.logits else 0
    fp32_vocab = tokens * shape.vocab * 4
    loss = fp32_vocab * (1 + (element != 4) + (causal_lm(shape) and tokens > seq)) if shape.logits else 0

    def global_stage(chunk: int) -> int:
        return chunk * layout.pp + st.stage

    def own(chunk: int) -> tuple[float, float]:
        """(what a live chunk-microbatch holds, of which freed once its backward reaches the layers: the loss's
        tensors and those of the final norm / head input)."""
        stage = global_stage(chunk)
        last = stage == chunks - 1
        if ckpt:  # offloading keeps at most activation_loading_horizon of them on the GPU (modelled, not measured)
            body = sbh * (chunk_layers - (0 if stage == 0 else 1))
            if layout.offload_activations:
                body = min(body, sbh * layout.activation_loading_horizon)
        else:  # a first layer that saves its raw input saves the receive buffer itself
            body = layer * chunk_layers - (sbh if stage != 0 and saves_raw_input(shape, element) else 0)
        body += extras + embedding
        if last:
            return body + after_stack + held + loss, after_stack + loss
        return body, 0.0

    non_first = sum(1 for c in range(virtual) if global_stage(c) != 0)
    receive = non_first * wave * (sbh + tokens * 8)
    rebuilt = layer + sbh if ckpt else 0.0  # a rebuilt layer's saved tensors and its output
    holds = [own(c) for c in range(virtual)]
    live = sent = 0.0  # what the live chunk-microbatches hold; the hidden states sent so far
    forward_peak = backward_peak = 0.0
    for action in rank_order(st.stage, layout.pp, virtual, wave, layout.pipeline):
        whole, freed = holds[action.chunk]
        if action.forward:
            live += whole
            if global_stage(action.chunk) != chunks - 1:
                sent += sbh
            forward_peak = max(forward_peak, receive + sent + live)
        else:
            backward_peak = max(backward_peak, receive + sent + live - freed + rebuilt)
            live -= whole
    peak = max(forward_peak, backward_peak) if ckpt else forward_peak
    return int(peak), int(backward_peak), int(layer_backward_temps(shape, layout, tokens, element))


def in_flight(layout: Layout, stage: int, virtual: int, pp_microbatches: int) -> int:
    """Chunk-microbatches whose activations a pipeline rank holds at once under modelparallel's schedules:
    pp == 1 runs microbatches one by one; GPipe ("simple") holds a whole wave; Interleaved1F1B its warm-up plus
    one (torch.distributed.pipelining's rule)."""
    if layout.pp == 1:
        return 1
    wave = min(layout.active_microbatches or layout.pp + 2, pp_microbatches)
    if layout.pipeline == "simple" or virtual == 1:
        return wave
    rounds = max(1, wave // layout.pp)
    per_round = wave // rounds
    warmup = (virtual - 1) * per_round + 2 * (layout.pp - 1 - stage)
    return min(warmup + 1, wave * virtual)


def largest_unit(shape: ModelShape) -> int:
    memo = per_shape(shape)
    if "largest_unit" not in memo:
        memo["largest_unit"] = max(sum(t.numel for t in unit) for unit in shape.units)
    return memo["largest_unit"]  # type: ignore[return-value]


def stage_numel(shape: ModelShape, layout: Layout) -> int:
    """The parameters one tp rank of the largest pipeline stage holds (before any data-parallel sharding)."""
    return max(st.local for st in stage_tensors(shape, layout.tp, layout.pp, virtual_stages(layout, shape.layers)))


def _zero_share(shape: ModelShape, tp: int, pp: int, virtual: int, stage: int, replicas: int,
                rank: int | None) -> tuple[int, int]:
    """(local numel, tensors) of one replica rank's optimizer shard; rank None: the most loaded."""
    memo = per_shape(shape)
    key = ("zero", tp, pp, virtual, stage, replicas, rank)
    if key not in memo:
        tensors = stage_tensors(shape, tp, pp, virtual)[stage].tensors
        memo[key] = (zero_partition_max(tensors, replicas) if rank is None
                     else zero_partition(tensors, replicas)[rank])
    return memo[key]  # type: ignore[return-value]


def stage_memory(shape: ModelShape, layout: Layout, world: World, micro_batch: int, seq: int, capacity: int,
                 runtime: Runtime = "sagelaunch", activations: bool = True,
                 only_ends: bool = False, device: Device = "cuda",
                 replica_rank: int | None = None) -> list[MemoryBreakdown]:
    """Per pipeline stage, the most loaded rank's bytes. activations=False: model states only (a lower bound).
    only_ends: the first and last stage only — the most loaded ranks (stage 0 holds the embedding, the most
    layers of an uneven split and the most microbatches in flight; the last holds the head and the logits).
    replica_rank: that rank of the replica group instead of the most loaded (optimizer-state sharding gives ranks
    different shares)."""
    check_divides(shape, layout)
    virtual = virtual_stages(layout, shape.layers)
    stages = stage_tensors(shape, layout.tp, layout.pp, virtual)
    if only_ends:
        stages = (stages[0],) if len(stages) == 1 else (stages[0], stages[-1])
    half = layout.precision != "fp32"
    sdp = layout.sdp
    replicas = world.rdp if layout.tp > 1 else world.dp  # modelparallel's replica group
    out = []
    element = 2 if half else 4
    for st in stages:
        n = st.local
        largest = max((t[1] for t in st.tensors), default=0)
        gathered_root = 0
        if sdp > 1:  # FSDP2: fp32 shards; a block is gathered in the compute dtype, the next one prefetched
            shard = -(-n // sdp)
            params, grads = shard * 4, shard * 4
            optimizer = shard * 4 * ADAM_STATES + len(st.tensors) * STEP_BYTES
            masters = master_grads = 0
            # FSDP2 keeps the root's parameters (embeddings, final norm, head) gathered from the forward's start to
            # the end of backward (it never reshards the root after forward); one block is gathered at a time
            root = [t for t in shape.pre if st.first] + [t for t in shape.post if st.last and not (t.tied and st.first)]
            gathered_root = sum(_local(t, layout.tp, shape.vocab)[1] for t in root) * element
            comm = gathered_root + largest_unit(shape) * element
            step_temp = 3 * -(-largest // sdp) * 4
        else:
            pbytes = element
            params, grads = n * pbytes, n * pbytes
            zero = layout.shard_optimizer_state and replicas > 1
            opt_numel, opt_tensors = (_zero_share(shape, layout.tp, layout.pp, virtual, st.stage, replicas,
                                                  replica_rank) if zero else (n, len(st.tensors)))
            optimizer = opt_numel * 4 * ADAM_STATES + opt_tensors * STEP_BYTES
            if runtime == "sagelaunch":  # MasterWeights: every local parameter's master; ZeRO shards the state
                masters = master_grads = n * 4 if half else 0
                ddp = layout.pp == 1 and replicas > 1
                comm = st.reduced_by_ddp * pbytes if ddp else 0
            else:  # SMP v1's ZeRO-1: the masters sharded with the state; no second gradient copy
                masters = master_grads = opt_numel * 4 if half else 0
                comm = 0
            step_temp = 3 * largest * 4  # single-tensor Adam: sqrt(v), its bias-corrected denominator, m's step
        act, layer_acts, layer_temps = activation_bytes(shape, layout, st, virtual, micro_batch * seq, seq, runtime,
                                                        device) if activations else (0, 0, 0)
        in_forward = layout.microbatches > 1 or layout.pp > 1
        head = sum(t[1] for t in _local_part(shape, shape.post, layout.tp)) if st.last else 0
        layer_grads = grads if in_forward else grads * head // max(n, 1)
        if sdp > 1:  # FSDP2 reduce-scatters each block's gradients as backward leaves it: not modelled apart
            layer_acts = layer_temps = layer_grads = 0
        backward = loss_gradient_bytes(shape, layout, micro_batch * seq, runtime) if activations and st.last else 0
        out.append(MemoryBreakdown(stage=st.stage, parameters=params, gradients=grads, optimizer_state=optimizer,
                                   master_weights=masters, master_gradients=master_grads, activations=act,
                                   communication=comm, allocator=int(ALLOCATOR_OVERHEAD), backward_transient=backward,
                                   step_transient=step_temp,
                                   gradients_in_forward=in_forward, capacity=capacity,
                                   layer_backward_gradients=layer_grads, layer_backward_activations=layer_acts,
                                   layer_backward_transient=layer_temps, gathered_root=gathered_root))
    return out
