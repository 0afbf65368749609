"""Measure what each rank of sagelaunch's own SMP holds, per model-parallel layout: the planner's memory check.

Tiny GPT-2-, BERT- and Llama-style models (transformers configs, no download) run under torchrun on the CPU (gloo)
through `sagelaunch.modelparallel` (smp.init, DistributedModel, DistributedOptimizer, @smp.step) across tensor,
pipeline, data and sharded data parallelism, optimizer-state sharding, activation checkpointing, microbatches and
fp32/bf16. On each rank torch's MemTracker (a TorchDispatchMode over tensor storages: live tensors, each storage
counted once) follows the third training step: the optimizer state exists and DDP has rebuilt its gradient buckets
(at the first forward after a backward: in step 2 with one microbatch, inside step 1 with several), so every layout
is measured in the same steady state. One `MeasuredRank` record per
(configuration, rank) goes to --out (scripts/planner_records.py).

    .venv/bin/python scripts/planner_measure.py [--out test-artifacts/planner_measured.json] [--only NAME ...]

Categories (MemTracker's, plus the fp32 masters of bf16):
  parameters      the model's local parameters at the step's start (tp shards, pp stage, sdp shard)
  gradients       the model parameters' .grad after backward, before the optimizer step
  masters         bf16: fp32 master weights; their gradients are counted apart, as the optimizer step begins
  optimizer state Adam's exp_avg, exp_avg_sq and step of the rank (its ZeRO shard), after the step — not the masters
  activations     tensors made outside backward and the optimizer step (forward, recomputation, pipeline buffers,
                  sharded data parallelism's gathered parameters), highest total during the step
  backward        tensors made during backward (activation gradients, …) together with the parameters' gradients
                  as they accumulate, highest total during forward+backward
  optimizer step  what smp.DistributedOptimizer.step makes (master gradients: filed as gradients once the inner
                  optimizer starts; its temporaries) counts as optimizer state while it lives
  peak            all tracked live storages together, highest total, with the categories at that moment
  DDP buckets     DDP's gradient buckets, made before the measured step: reported apart (ddp_bucket_bytes, from
                  DDP's own reducer); the tracker counts a bucket from the reducer's first copy into it in backward,
                  so a peak inside backward already holds it (ddp_bucket_bytes_in_peak)
Not seen: gloo's internal buffers.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:  # run as a file (torchrun): the repository's packages and scripts
    sys.path.insert(0, str(REPO))

from scripts.planner_records import MeasuredConfig, MeasuredRank, MeasuredRun  # noqa: E402
from scripts.torchrun_command import torchrun_command  # noqa: E402

DEFAULT_OUT = REPO / "test-artifacts" / "planner_measured.json"
SEQ, VOCAB, BATCH = 64, 512, 4
WARMUP_STEPS = 2  # the tracker follows the step after these
BACKWARD = "Temp+Gradient"  # the category high mark backward_peak_bytes reports
MODEL_CLASSES = {"gpt2": "GPT2LMHeadModel", "bert": "BertForMaskedLM", "llama": "LlamaForCausalLM"}
LAYER_STACKS = {"gpt2": "transformer.h", "bert": "bert.encoder.layer", "llama": "model.layers"}


def transformers_config(family: str) -> Any:
    """A few layers, hidden 128: each run takes seconds on a CPU."""
    import transformers

    if family == "gpt2":
        cfg = transformers.GPT2Config(vocab_size=VOCAB, n_positions=SEQ, n_embd=128, n_layer=4, n_head=4,
                                      bos_token_id=0, eos_token_id=0)
    elif family == "bert":
        cfg = transformers.BertConfig(vocab_size=VOCAB, hidden_size=128, num_hidden_layers=4, num_attention_heads=4,
                                      intermediate_size=512, max_position_embeddings=SEQ, type_vocab_size=1)
    else:
        cfg = transformers.LlamaConfig(vocab_size=VOCAB, hidden_size=128, intermediate_size=344, num_hidden_layers=4,
                                       num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=SEQ)
    cfg._attn_implementation = "eager"  # attention scores materialised, as the planner's activation model assumes
    cfg.use_cache = False  # training: no key/value cache (a recomputed layer would append to it again)
    return cfg


# ------------------------------------------------------------------ the configurations
def _layout(world: int, tp: int = 1, pp: int = 1, sop: bool = False, sdp: int = 1, ckpt: bool = False,
            mb: int = 1, bf16: bool = False) -> dict[str, Any]:
    return {"world": world, "tp": tp, "pp": pp, "sop": sop, "sdp": sdp, "ckpt": ckpt, "mb": mb, "bf16": bf16}


# a covering subset of tp {1,2} × pp {1,2} × sop × sdp × checkpointing × microbatches {1,4} × fp32/bf16, world ≤ 4
LAYOUTS = [
    _layout(2),  # dp 2
    _layout(2, sop=True, ckpt=True, mb=4, bf16=True),
    _layout(2, tp=2),
    _layout(2, tp=2, ckpt=True, mb=4, bf16=True),
    _layout(2, pp=2, mb=4),
    _layout(2, pp=2, ckpt=True, mb=4, bf16=True),
    _layout(2, sdp=2),
    _layout(4, tp=2, pp=2, mb=4),
    _layout(4, tp=2, sop=True, ckpt=True),
    _layout(4, pp=2, sop=True, mb=4, bf16=True),
    _layout(4, sdp=2, bf16=True),  # two sharded groups of 2 (HSDP)
]


def layout_name(family: str, lay: dict[str, Any]) -> str:
    parts = [family, f"w{lay['world']}", f"tp{lay['tp']}", f"pp{lay['pp']}"]
    parts += ["sop"] * lay["sop"] + [f"sdp{lay['sdp']}"] * (lay["sdp"] > 1) + ["ckpt"] * lay["ckpt"]
    return "_".join([*parts, f"mb{lay['mb']}", "bf16" if lay["bf16"] else "fp32"])


def smp_config(lay: dict[str, Any]) -> dict[str, Any]:
    cfg: dict[str, Any] = {"ddp": True, "microbatches": lay["mb"]}
    if lay["tp"] > 1:
        cfg.update(tensor_parallel_degree=lay["tp"], prescaled_batch=True)
    if lay["pp"] > 1:
        cfg.update(pipeline_parallel_degree=lay["pp"], pipeline="interleaved")
    if lay["sop"]:
        cfg["shard_optimizer_state"] = True
    if lay["sdp"] > 1:
        cfg["sharded_data_parallel_degree"] = lay["sdp"]
    if lay["bf16"]:
        cfg["bf16"] = True
    return cfg


# sagelaunch's modelparallel unties BertForMaskedLM's MLM bias under tensor parallelism (decoder.bias becomes a
# DTensor, cls.predictions.bias is left without a gradient), which DDP refuses at the second step when tp ranks are
# also data-parallel replicas ("Expected to have finished reduction in the prior iteration"): BERT runs that world-4
# layout at dp 4 instead of tp 2 × dp 2
EXCEPTIONS = {("bert", 8): {"tp": 1}}


def cases() -> list[dict[str, Any]]:
    out = []
    for family in MODEL_CLASSES:
        for i, base in enumerate(LAYOUTS):
            lay = {**base, **EXCEPTIONS.get((family, i), {})}
            out.append({"name": layout_name(family, lay), "family": family, "layout": lay,
                        "smp_config": smp_config(lay)})
    return out


# ------------------------------------------------------------------ on each rank (under torchrun)
def _storages_bytes(tensors) -> int:
    """Bytes of the distinct storages behind `tensors` (a DTensor: its local shard's)."""
    from torch.distributed._tools.common_utils import get_untyped_storages

    seen: dict[int, int] = {}
    for t in tensors:
        if t is not None:
            for st in get_untyped_storages(t):
                seen[id(st)] = st.nbytes()
    return sum(seen.values())


def _local(t):
    return t.to_local() if hasattr(t, "to_local") else t


class _StepTracker:
    """torch's MemTracker over one training step, with the highest total of each category kept as well."""

    def __init__(self) -> None:
        from torch.distributed._tools.common_utils import get_untyped_storages
        from torch.distributed._tools.mem_tracker import MemTracker, _MemRefType

        class CategoryPeaks(MemTracker):
            # MemTracker files what the optimizer makes as optimizer state only inside a hooked torch optimizer's
            # step; smp.DistributedOptimizer.step makes the fp32 master gradients before its inner optimizer runs.
            # While `in_step` is set the whole step counts as the optimizer's, so activations are the forward's.
            in_step = False
            in_forward_backward = False
            _in_opt = property(lambda self: self._hooked_in_opt or self.in_step,
                               lambda self, value: setattr(self, "_hooked_in_opt", value))

            def __init__(self) -> None:
                super().__init__()
                self.category_peaks: dict[str, int] = {}
                # DDP's buckets were made before the step, outside the tracker; it starts counting one when the
                # reducer first copies a gradient into it (a Temp storage of the bucket's size, seen in backward)
                self.bucket_sizes: set[int] = set()
                self.buckets_at_peak = 0
                self._peak_total = 0
                # --explain: where each activation storage was made, and the ones live at the activations' height
                self.explain = False
                self._op = ""
                self.activation_peak_tensors: list[dict[str, Any]] = []

            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                self._op = str(getattr(func, "__name__", func))
                return super().__torch_dispatch__(func, types, args, kwargs)

            def _track(self, reftype, t) -> None:
                super()._track(reftype, t)
                if self.explain and reftype == _MemRefType.ACT:
                    for st in get_untyped_storages(t):
                        winfo, _ = self._WINFO.get(st, (None, None))
                        if winfo is not None and not hasattr(winfo, "origin"):
                            parents = self._mod_tracker.parents - {"Global"}
                            winfo.origin = {"op": self._op, "shape": list(t.shape), "dtype": str(t.dtype),
                                            "module": max(parents, key=len, default=""),
                                            "backward": self._mod_tracker.is_bw}

            def _live_activations(self) -> list[dict[str, Any]]:
                live = [(w, ref) for w, ref in self._WINFO.values()
                        if w.reftype == _MemRefType.ACT and ref() is not None and w.mem_consumed]
                return sorted(({"bytes": w.mem_consumed, **getattr(w, "origin", {"op": "(made before tracking)"})}
                               for w, _ in live), key=lambda d: -d["bytes"])

            def _pre_fw_hook(self, module, inputs) -> None:
                # microbatches and pipeline schedules call the top module once per microbatch; MemTracker's
                # module-wise statistics (unused here) refuse a second top-level call, its totals and peaks (kept
                # by __torch_dispatch__, not by this hook) do not depend on it
                if module in self.memory_tracking and not self._mod_tracker.is_bw:
                    name = self._mod_tracker.get_known_fqn(module)
                    if set(self._mod_tracker.parents) - {name} == {"Global"}:
                        return
                super()._pre_fw_hook(module, inputs)

            def _update_peak_stats(self, peak_state) -> None:  # after every op: keep each category's high mark
                super()._update_peak_stats(peak_state)
                total = sum(snap.get("Total", 0) for snap in self._curr_mem_snap.values())
                if total > self._peak_total:  # the whole step's height: which buckets does it already count?
                    self._peak_total = total
                    self.buckets_at_peak = sum(
                        w.mem_consumed for w, _ in self._WINFO.values()
                        if w.reftype == _MemRefType.TEMP and w.mem_consumed in self.bucket_sizes) if self.bucket_sizes else 0
                for snap in self._curr_mem_snap.values():
                    for kind, value in snap.items():
                        key = getattr(kind, "value", str(kind))
                        if value > self.category_peaks.get(key, 0):
                            self.category_peaks[key] = value
                            if self.explain and kind == _MemRefType.ACT:
                                self.activation_peak_tensors = self._live_activations()
                    if self.in_forward_backward:  # who tags a gradient (autograd or DDP's reducer) varies: both
                        made = snap.get(_MemRefType.TEMP, 0) + snap.get(_MemRefType.GRAD, 0)
                        self.category_peaks[BACKWARD] = max(self.category_peaks.get(BACKWARD, 0), made)

        self.tracker = CategoryPeaks()

    def current(self) -> dict[str, int]:
        return _flat(self.tracker.get_tracker_snapshot("current"))

    def peak(self) -> dict[str, int]:
        return _flat(self.tracker.get_tracker_snapshot("peak"))


def _flat(snapshot) -> dict[str, int]:
    """One device (the CPU): {category name: bytes}."""
    out: dict[str, int] = {}
    for dev_snap in snapshot.values():
        for kind, value in dev_snap.items():
            key = getattr(kind, "value", str(kind))
            out[key] = out.get(key, 0) + int(value)
    return out


def _batch(step: int, n: int):
    """The step's token ids for n sequences (the same on every rank: each takes its data-parallel share)."""
    import torch

    g = torch.Generator().manual_seed(1000 + step)
    return torch.randint(1, VOCAB, (n, SEQ), generator=g)


def _ddp_bucket_sizes(model) -> list[int]:
    """DDP's gradient buckets' bytes, as its reducer sizes them (zero copies of each bucket)."""
    return [b.buffer().nbytes for m in model.ddp_modules for b in m.reducer._get_zeros_like_grad_buckets()]


def _run_case(case: dict[str, Any]) -> dict[str, Any]:
    import torch
    import torch.nn.functional as F
    import transformers
    from torch.distributed._tools.mem_tracker import _MemRefType
    from torch.optim.optimizer import register_optimizer_step_pre_hook

    import sagelaunch.modelparallel as smp

    family, lay = case["family"], case["layout"]
    smp.init(case["smp_config"])
    cfg = transformers_config(family)
    torch.manual_seed(0)
    with smp.tensor_parallelism(enabled=lay["tp"] > 1):  # SMP v1: the model is built inside the context
        module = getattr(transformers, MODEL_CLASSES[family])(cfg)
    model = smp.DistributedModel(module)
    del module
    if lay["ckpt"]:
        stack = model.get_module().get_submodule(LAYER_STACKS[family])
        smp.set_activation_checkpointing(stack, strategy="each")
    opt = smp.DistributedOptimizer(torch.optim.Adam(model.parameters(), lr=1e-3))

    @smp.step
    def train_step(model, ids):
        logits = model(ids).logits
        if family == "bert":  # masked-LM head over every position (the memory of a masked batch is the same)
            loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]).float(), ids.reshape(-1))
        else:
            loss = F.cross_entropy(logits[:, :-1].reshape(-1, logits.shape[-1]).float(), ids[:, 1:].reshape(-1))
        model.backward(loss)
        return loss

    index, count = (smp.rdp_rank(), smp.rdp_size()) if lay["tp"] > 1 else (smp.dp_rank(), smp.dp_size())

    def one_step(step: int) -> None:
        ids = _batch(step, BATCH * count).chunk(count)[index]
        opt.zero_grad()
        tracker.in_forward_backward = True
        try:
            train_step(model, ids)
        finally:
            tracker.in_forward_backward = False
        after_backward.append(_storages_bytes(p.grad for p in model.local_parameters()))
        tracker.in_step = True
        try:
            opt.step()
        finally:
            tracker.in_step = False

    after_backward: list[int] = []
    steps = _StepTracker()
    tracker = steps.tracker
    tracker.explain = bool(case.get("explain"))
    for step in range(WARMUP_STEPS):  # untracked (the tracker is not entered): partitioning, optimizer state, buckets
        one_step(step)
    after_backward.clear()
    gc.collect()

    params = list(model.local_parameters())
    masters = [m for _, m in opt.mixed.pairs()] if opt.mixed is not None else []
    master_grads: list[int] = []

    def at_step_begin(optimizer, args, kwargs) -> None:
        """The fp32 masters' gradients exist from here to the next zero_grad: filed as gradients, sized apart."""
        grads = [m.grad for m in masters if m.grad is not None]
        if grads and not master_grads:
            master_grads.append(_storages_bytes(grads))
            for g in grads:
                tracker._update_and_maybe_create_winfos(g, _MemRefType.GRAD)

    tracker.bucket_sizes = set(_ddp_bucket_sizes(model))
    tracker.track_external(model, opt.local_optimizer(), *masters)
    handle = register_optimizer_step_pre_hook(at_step_begin)
    try:
        with tracker:
            start = steps.current()
            began = time.perf_counter()
            one_step(WARMUP_STEPS)
            seconds = time.perf_counter() - began
            end = steps.current()
    finally:
        handle.remove()
    peak = steps.peak()
    named = dict(model.local_named_parameters())
    record = {
        "rank": smp.rank(), "pp_rank": smp.pp_rank(), "tp_rank": smp.tp_rank(), "rdp_rank": smp.rdp_rank(),
        "layout": {"tp": smp.tp_size(), "pp": smp.pp_size(), "dp": smp.dp_size(), "rdp": smp.rdp_size()},
        "parameter_bytes": start.get(_MemRefType.PARAM.value, 0),
        "parameter_numel": sum(_local(p).numel() for p in params),
        "local_parameter_shapes": {n: list(_local(p).shape) for n, p in named.items()},
        "buffer_bytes": start.get(_MemRefType.BUFFER.value, 0),
        "gradient_bytes": after_backward[0],
        "master_parameter_bytes": _storages_bytes(masters),
        "master_gradient_bytes": master_grads[0] if master_grads else 0,
        "optimizer_state_bytes": end.get(_MemRefType.OPT.value, 0),
        "optimizer_state_check_bytes": opt.local_state_bytes(),
        "activation_peak_bytes": tracker.category_peaks.get(_MemRefType.ACT.value, 0),
        "backward_peak_bytes": tracker.category_peaks.get(BACKWARD, 0),
        "peak_bytes": peak.get("Total", 0),
        "peak_breakdown": peak,
        "step_seconds": seconds,
        "ddp_bucket_bytes": sum(_ddp_bucket_sizes(model)),
        "ddp_bucket_bytes_in_peak": tracker.buckets_at_peak,
        "transformers_config": cfg.to_dict(),
        "activation_peak_tensors": tracker.activation_peak_tensors,
    }
    del model, opt, params, masters, named
    gc.collect()
    return record


def worker(cases_file: Path, out_dir: Path) -> None:
    import torch.distributed as dist

    rank = int(os.environ["RANK"])
    results = []
    for case in json.loads(cases_file.read_text()):
        if rank == 0:
            print(f"measuring {case['name']}", flush=True)
        results.append({"name": case["name"], **_run_case(case)})
    (out_dir / f"rank{rank}.json").write_text(json.dumps(results))
    if dist.is_initialized():
        dist.barrier()


# ------------------------------------------------------------------ the launcher
def launch(world_cases: list[dict[str, Any]], world: int, out_dir: Path, timeout: float) -> list[list[dict]]:
    """One torchrun launch of `world` ranks for these cases; each rank's results."""
    out_dir.mkdir(parents=True, exist_ok=True)
    cases_file = out_dir / "cases.json"
    cases_file.write_text(json.dumps(world_cases))
    cmd, env = torchrun_command(Path(__file__).resolve(), ["--worker", str(cases_file), str(out_dir)], world,
                                smp_timeout_s=120)
    done = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
                          timeout=timeout, check=False)
    if done.returncode != 0:
        last = done.stdout.rfind("measuring ")
        which = done.stdout[last:done.stdout.find("\n", last)] if last >= 0 else "(before the first case)"
        start = done.stdout.find("Traceback")
        raise SystemExit(f"torchrun with {world} ranks failed ({done.returncode}) {which}:\n"
                         f"{done.stdout[max(0, start):][:6000]}\n…\n{done.stdout[-3000:]}")
    return [json.loads((out_dir / f"rank{r}.json").read_text()) for r in range(world)]


def measure(selected: list[dict[str, Any]], work_dir: Path, timeout: float = 1800) -> MeasuredRun:
    import torch
    import transformers

    by_case = {c["name"]: c for c in selected}
    records: list[MeasuredRank] = []
    for world in sorted({c["layout"]["world"] for c in selected}):
        world_cases = [c for c in selected if c["layout"]["world"] == world]
        for ranks in zip(*launch(world_cases, world, work_dir / f"world{world}", timeout)):
            for result in ranks:
                records.append(_record(by_case[result["name"]], result))
    return MeasuredRun(torch_version=torch.__version__, transformers_version=transformers.__version__,
                       tracker="torch.distributed._tools.mem_tracker.MemTracker", records=records)


def _record(case: dict[str, Any], r: dict[str, Any]) -> MeasuredRank:
    lay, layout = case["layout"], r["layout"]
    config = MeasuredConfig(
        name=case["name"], family=case["family"], model_class=MODEL_CLASSES[case["family"]],
        transformers_config=r["transformers_config"], world_size=lay["world"], tp=layout["tp"], pp=layout["pp"],
        dp=layout["dp"], rdp=layout["rdp"], shard_optimizer_state=lay["sop"], sharded_data_parallel_degree=lay["sdp"],
        activation_checkpointing=lay["ckpt"], microbatches=lay["mb"], precision="bf16" if lay["bf16"] else "fp32",
        batch_per_rank=BATCH, prescaled_batch=lay["tp"] > 1, seq_len=SEQ, optimizer="Adam",
        smp_config=case["smp_config"])
    fields = set(MeasuredRank.model_fields) - {"config"}
    return MeasuredRank(config=config, **{k: v for k, v in r.items() if k in fields})


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--worker"]:
        worker(Path(argv[1]), Path(argv[2]))
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--only", nargs="*", default=None, help="configuration names (default: all)")
    parser.add_argument("--list", action="store_true", help="print the configuration names and stop")
    parser.add_argument("--explain", action="store_true",
                        help="also record, per rank, the activation storages live at the activations' height (where "
                             "each was made: op, shape, dtype, innermost module); slow, for a few configurations")
    args = parser.parse_args(argv)
    selected = [{**c, "explain": args.explain} for c in cases() if args.only is None or c["name"] in args.only]
    if args.list:
        print("\n".join(c["name"] for c in selected))
        return
    if not selected:
        raise SystemExit(f"--only matched no configuration; see --list ({len(cases())} in all)")
    import tempfile

    began = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="planner-measure-") as work:
        run = measure(selected, Path(work))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(run.model_dump_json(indent=1))
    print(f"{len(selected)} configurations, {len(run.records)} rank records in {time.perf_counter() - began:.0f} s "
          f"→ {args.out}")


if __name__ == "__main__":
    main()
