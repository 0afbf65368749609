"""Benchmark of the modelparallel package (printed side by side, never asserted).

1. Per-rank optimizer-state bytes (Adam) with shard_optimizer_state at dp=2 vs without (target ≤ 0.55×).
2. Activation bytes kept for backward with activation checkpointing vs without on a tiny RoBERTa (target ≤ 0.5×),
   measured with autograd saved_tensors_hooks (plus the inputs the checkpointed layers keep, and the one layer
   that is recomputed at a time during backward).
3. Step time of tp=2 and pp=2 (2 torchrun ranks on this machine) relative to one process on the same batch.
4. A small Hugging Face GPT-2 (LM head, tied embeddings): per-rank model-state memory (parameters + gradients +
   Adam state, local shards only) and step time at degree 1 vs tp=2, pp=2 and sharded data parallelism 2
   (target: ≤ 0.55× the degree-1 memory at tp=2 and sharded DP 2).

usage: python scripts/bench_modelparallel.py [--steps 8] [--warmup 2] [--hidden 128] [--layers 4] [--seq 32] [--batch 16]
       [--quick]
(--quick: a tiny model, no warm-up and one timed step, to check the benchmark still runs; its figures mean nothing)
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)


def build_roberta(hidden: int, layers: int, seq: int, seed: int = 0):
    import torch
    from transformers import RobertaConfig, RobertaForSequenceClassification

    torch.manual_seed(seed)
    cfg = RobertaConfig(vocab_size=512, hidden_size=hidden, num_hidden_layers=layers, num_attention_heads=4,
                        intermediate_size=4 * hidden, max_position_embeddings=seq + 4, type_vocab_size=1,
                        num_labels=3, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0, pad_token_id=1)
    cfg._attn_implementation = "eager"
    return RobertaForSequenceClassification(cfg)


def build_gpt2(hidden: int, layers: int, seq: int, vocab: int, seed: int = 0):
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(seed)
    cfg = GPT2Config(vocab_size=vocab, n_positions=seq, n_embd=hidden, n_layer=layers, n_head=4, bos_token_id=0,
                     eos_token_id=0, resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0)
    cfg._attn_implementation = "eager"
    return GPT2LMHeadModel(cfg)


GPT2_LAYOUTS = {  # name → (mp_parameters, built inside smp.tensor_parallelism())
    "degree 1": ({}, False),
    "tp=2": ({"tensor_parallel_degree": 2, "ddp": True}, True),
    "pp=2": ({"pipeline_parallel_degree": 2, "microbatches": 2, "pipeline": "simple"}, False),
    "sharded DP 2": ({"sharded_data_parallel_degree": 2, "ddp": True}, False),
}


def model_state_bytes(model, opt) -> dict[str, int]:
    """Bytes this rank holds: parameters, gradients (local shards; tied tensors once) and optimizer state."""
    def local(t):
        return getattr(t, "_local_tensor", t)

    params = {id(p): local(p) for p in model.parameters()}
    grads = {id(p): local(p.grad) for p in model.parameters() if p.grad is not None}
    size = lambda ts: sum(t.numel() * t.element_size() for t in ts.values())  # noqa: E731
    return {"params": size(params), "grads": size(grads), "optimizer": opt.local_state_bytes()}


def gpt2_run(args, name: str) -> dict:
    """One layout on this world: memory after a step (gradients kept) and the median step time."""
    import torch

    import sagelaunch.modelparallel as smp

    from tests.modelparallel.models import lm_loss

    config, tensor_parallel = GPT2_LAYOUTS[name]
    smp.init(config)
    with smp.tensor_parallelism(enabled=tensor_parallel):
        module = build_gpt2(args.hidden, args.layers, args.seq, args.vocab)
    model = smp.DistributedModel(module)
    opt = smp.DistributedOptimizer(torch.optim.Adam(model.parameters(), lr=1e-4))

    @smp.step
    def train_step(model, ids):
        loss = lm_loss(model(ids).logits, ids)
        model.backward(loss)
        return loss

    g = torch.Generator().manual_seed(0)
    ids = torch.randint(0, args.vocab, (args.batch, args.seq), generator=g)
    if smp.dp_size() > 1:  # each data-parallel rank (tp ranks included: scaled batch) brings its share
        ids = ids.chunk(smp.dp_size())[smp.dp_rank()]
    opt.zero_grad()
    train_step(model, ids)
    opt.step()
    memory = model_state_bytes(model, opt)
    step = time_steps(model, opt, lambda m, i, *_: train_step(m, i), ids, None, None, args.steps, args.warmup)
    return {"memory": memory, "step_time": step}


def batch(n: int, seq: int, step: int = 0):
    import torch

    g = torch.Generator().manual_seed(step)
    return (torch.randint(3, 512, (n, seq), generator=g), torch.ones(n, seq, dtype=torch.long),
            torch.randint(0, 3, (n,), generator=g))


def make_step():
    import torch.nn.functional as F

    import sagelaunch.modelparallel as smp

    @smp.step
    def train_step(model, ids, mask, y):
        loss = F.cross_entropy(model(ids, attention_mask=mask).logits, y)
        model.backward(loss)
        return loss

    return train_step


def time_steps(model, opt, step_fn, ids, mask, y, steps: int, warmup: int = 2) -> float:
    """Median step time after `warmup` untimed steps (median: this CPU is shared with other work)."""
    import statistics

    import torch
    import torch.distributed as dist

    def settle() -> None:  # a GPU step ends when its kernels do, not when they are queued
        if torch.cuda.is_available():
            torch.cuda.synchronize()
        dist.barrier()

    times = []
    for i in range(steps + warmup):
        settle()
        start = time.perf_counter()
        opt.zero_grad()
        step_fn(model, ids, mask, y)
        opt.step()
        settle()
        if i >= warmup:
            times.append(time.perf_counter() - start)
    return statistics.median(times)


# ----- 2. saved activations (one process)
def saved_activation_bytes(args, checkpointing: bool) -> int:
    import torch
    import torch.nn.functional as F

    import sagelaunch.modelparallel as smp

    model = smp.DistributedModel(build_roberta(args.hidden, args.layers, args.seq))
    layers = model.get_module().roberta.encoder.layer
    if checkpointing:
        smp.set_activation_checkpointing(layers, strategy="each")
    params = {p.untyped_storage().data_ptr() for p in model.parameters()}
    kept: dict[int, int] = {}

    def remember(t):
        if isinstance(t, torch.Tensor):
            ptr = t.untyped_storage().data_ptr()
            if ptr not in params:
                kept.setdefault(ptr, t.untyped_storage().nbytes())

    def keep_inputs(module, inputs):  # a checkpointed layer keeps its inputs until backward
        for x in inputs:
            remember(x)

    handles = [layer.register_forward_pre_hook(keep_inputs) for layer in layers] if checkpointing else []
    ids, mask, y = batch(args.batch, args.seq)

    def pack(t):
        remember(t)
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        loss = F.cross_entropy(model(ids, attention_mask=mask).logits, y)
    retained = sum(kept.values())
    for h in handles:
        h.remove()
    loss.backward()
    return retained


def per_layer_bytes(args) -> int:
    """What one encoder layer saves for backward (the transient recompute of a checkpointed layer)."""
    import torch

    model = build_roberta(args.hidden, args.layers, args.seq)
    layer = model.roberta.encoder.layer[0]
    hidden = torch.randn(args.batch, args.seq, args.hidden, requires_grad=True)
    params = {p.untyped_storage().data_ptr() for p in model.parameters()}
    kept: dict[int, int] = {}

    def pack(t):
        ptr = t.untyped_storage().data_ptr()
        if ptr not in params and ptr != hidden.untyped_storage().data_ptr():
            kept.setdefault(ptr, t.untyped_storage().nbytes())
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        layer(hidden, None)
    return sum(kept.values())


def single_process(args) -> dict:
    import torch

    import sagelaunch.modelparallel as smp

    torch.set_num_threads(1)  # like each torchrun rank (OMP_NUM_THREADS=1): compares work split, not threads
    smp.init({})
    no_ckpt = saved_activation_bytes(args, checkpointing=False)
    ckpt = saved_activation_bytes(args, checkpointing=True)
    recompute = per_layer_bytes(args)
    model = smp.DistributedModel(build_roberta(args.hidden, args.layers, args.seq))
    opt = smp.DistributedOptimizer(torch.optim.Adam(model.parameters(), lr=1e-3))
    step_time = time_steps(model, opt, make_step(), *batch(args.batch, args.seq), args.steps, args.warmup)
    gpt2 = gpt2_run(args, "degree 1")
    return {"saved_no_ckpt": no_ckpt, "saved_ckpt": ckpt, "recompute_layer": recompute, "step_time": step_time,
            "threads": torch.get_num_threads(), "gpt2": gpt2}


# ----- 1 and 3: two torchrun ranks
def worker(args) -> None:
    import torch
    import torch.distributed as dist

    import sagelaunch.modelparallel as smp

    out = {}
    for name, cfg in [("dp2", {"ddp": True}), ("dp2_sharded", {"ddp": True, "shard_optimizer_state": True})]:
        smp.init(cfg)
        model = smp.DistributedModel(build_roberta(args.hidden, args.layers, args.seq))
        opt = smp.DistributedOptimizer(torch.optim.Adam(model.parameters(), lr=1e-3))
        ids, mask, y = batch(args.batch, args.seq)
        step = make_step()
        opt.zero_grad()
        step(model, ids.chunk(2)[smp.dp_rank()], mask.chunk(2)[smp.dp_rank()], y.chunk(2)[smp.dp_rank()])
        opt.step()
        out[name] = smp.allgather(opt.local_state_bytes())
    for name, cfg in [("tp2", {"tensor_parallel_degree": 2, "ddp": True}),
                      ("pp2", {"pipeline_parallel_degree": 2, "microbatches": 2, "pipeline": "simple"})]:
        smp.init(cfg)
        module = build_roberta(args.hidden, args.layers, args.seq)
        if name == "tp2":
            smp.set_tensor_parallelism(module)
        model = smp.DistributedModel(module)
        opt = smp.DistributedOptimizer(torch.optim.Adam(model.parameters(), lr=1e-3))
        ids, mask, y = batch(args.batch, args.seq)
        if name == "tp2":  # each tp rank brings half of the batch; the scaled batch is the whole one
            ids, mask, y = (t.chunk(2)[smp.tp_rank()] for t in (ids, mask, y))
        out[name] = time_steps(model, opt, make_step(), ids, mask, y, args.steps, args.warmup)
    out["gpt2"] = {name: smp.allgather(gpt2_run(args, name)) for name in GPT2_LAYOUTS if name != "degree 1"}
    if dist.get_rank() == 0:
        with open(args.out, "w") as fd:
            json.dump(out, fd)
    smp.shutdown()


def launch_workers(args) -> dict:
    from sagelaunch.jobspec.net import free_port

    port = free_port()
    out = os.path.join(tempfile.mkdtemp(prefix="bench_mp_"), "ranks.json")
    cmd = [sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", "2", "--master-port", str(port),
           os.path.abspath(__file__), "--worker", "--out", out, "--steps", str(args.steps), "--warmup",
           str(args.warmup), "--hidden", str(args.hidden), "--layers", str(args.layers), "--seq", str(args.seq),
           "--batch", str(args.batch), "--vocab", str(args.vocab)]
    env = {**os.environ, "PYTHONPATH": REPO, "SMP_TIMEOUT_SECONDS": "120"}
    subprocess.run(cmd, check=True, env=env, timeout=900, stdout=subprocess.DEVNULL)
    return json.load(open(out))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=8)
    parser.add_argument("--warmup", type=int, default=2, help="untimed steps before the timed ones")
    parser.add_argument("--hidden", type=int, default=128)
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--seq", type=int, default=32)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--vocab", type=int, default=512, help="GPT-2 vocabulary (section 4)")
    parser.add_argument("--quick", action="store_true", help="tiny sizes, 1 step, no warm-up: checks the script runs")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.quick:
        args.steps, args.warmup, args.hidden, args.layers, args.seq, args.batch, args.vocab = 1, 0, 16, 2, 8, 4, 64
    if args.worker:
        return worker(args)
    multi = launch_workers(args)
    single = single_process(args)
    full, sharded = multi["dp2"], multi["dp2_sharded"]
    print(f"model: RoBERTa hidden={args.hidden} layers={args.layers} seq={args.seq} batch={args.batch}; "
          f"{args.steps} timed steps after {args.warmup} warm-up steps")
    print("1. optimizer state per rank (Adam), dp=2")
    for r in range(2):
        print(f"   rank {r}: unsharded {full[r]:>10,} B   sharded {sharded[r]:>10,} B   "
              f"ratio {sharded[r] / full[r]:.3f}  (target ≤ 0.55)")
    kept_ckpt = single["saved_ckpt"] + single["recompute_layer"]
    print("2. activations kept for backward, one process")
    print(f"   no checkpointing {single['saved_no_ckpt']:>12,} B")
    print(f"   checkpoint each  {single['saved_ckpt']:>12,} B after forward, + {single['recompute_layer']:,} B "
          f"while one layer is recomputed = {kept_ckpt:,} B peak")
    print(f"   ratio (peak)     {kept_ckpt / single['saved_no_ckpt']:.3f}  (target ≤ 0.5)")
    print(f"3. step time (same global batch), single process with {single['threads']} threads: "
          f"{single['step_time'] * 1e3:.1f} ms")
    for name in ("tp2", "pp2"):
        print(f"   {name}: {multi[name] * 1e3:8.1f} ms   ×{multi[name] / single['step_time']:.2f} of single process "
              "(2 ranks × 1 thread each, gloo)")
    base = single["gpt2"]
    base_total = sum(base["memory"].values())
    print(f"4. GPT-2 LM head hidden={args.hidden} layers={args.layers} vocab={args.vocab} seq={args.seq} "
          f"batch={args.batch}: model state per rank (params + grads + Adam) and step time")
    print(f"   {'layout':<13} {'rank':>4} {'params':>11} {'grads':>11} {'optimizer':>11} {'total':>11} {'ratio':>6} "
          f"{'step ms':>8} {'× time':>6}")
    rows = [("degree 1", [base])] + [(name, multi["gpt2"][name]) for name in GPT2_LAYOUTS if name != "degree 1"]
    for name, ranks in rows:
        for rank, res in enumerate(ranks):
            m = res["memory"]
            total = sum(m.values())
            ratio, ms, slower = total / base_total, res["step_time"] * 1e3, res["step_time"] / base["step_time"]
            print(f"   {name:<13} {rank:>4} {m['params']:>11,} {m['grads']:>11,} {m['optimizer']:>11,} {total:>11,} "
                  f"{ratio:>6.3f} {ms:>8.1f} {slower:>6.2f}")
    print("   (target: ratio ≤ 0.55 at tp=2 and sharded DP 2; tp=2 shards the tied vocabulary matrix too, "
          "position embeddings and norms stay replicated)")


if __name__ == "__main__":
    main()
