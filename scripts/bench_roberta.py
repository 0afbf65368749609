"""Training throughput of RoBERTa sentiment fine-tuning: eager fp32 vs torch.compile + bf16 + fused AdamW.

Both variants run side by side in one process on the same randomly initialised
RobertaForSequenceClassification (3 labels; nothing is downloaded), same batches, same steps.
Prints samples/s, the speed-up, and model-FLOPs utilisation (MFU) against the device's dense
bf16 peak.

    python scripts/bench_roberta.py                      # GPU: roberta-base size, sequence 128
    python scripts/bench_roberta.py --size tiny          # CPU smoke run (what CI runs)
    python scripts/bench_roberta.py --json result.json   # also write the figures
    python scripts/bench_roberta.py --profile-dir DIR    # then profile a few optimized steps with our profiler

AWS measured a 42% speed-up from these PyTorch 2 features on 8×A100 40GB; the target on one H200
is ≥ 2× with MFU ≥ 40%.
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import asdict, dataclass

SIZES = {
    # roberta-base: 12 layers × 768 hidden, 50265-token vocabulary, 125M parameters
    "base": dict(vocab_size=50265, hidden_size=768, num_hidden_layers=12, num_attention_heads=12,
                 intermediate_size=3072),
    "tiny": dict(vocab_size=1000, hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=256),
}
# dense bf16 peak FLOP/s by device name (vendor data sheets, without sparsity)
PEAK_BF16_FLOPS = {"H200": 989e12, "H100": 989e12, "A100": 312e12, "A10G": 70e12, "L40S": 362e12, "L4": 121e12}


@dataclass
class Result:
    variant: str
    samples_per_s: float
    step_ms: float
    mfu: float | None
    loss: float
    # what the run really did, read back from torch (so the figures can be traced to it)
    elapsed_s: float  # the timed steps' wall time
    optimizer_steps: int  # AdamW's own step count: warm-up + timed steps
    first_loss: float  # same model, same first batch: both variants must start from the same loss
    logits_dtype: str  # torch.bfloat16 under autocast
    fused_adamw: bool
    compiled_graphs: int  # graphs torch.compile (dynamo) captured for this variant; 0 for eager
    peak_mem_gb: float | None  # the device's peak allocation during the variant (None on CPU)


def peak_flops_and_source(device: str, override_tflops: float | None) -> tuple[float | None, str | None]:
    """The FLOP/s that MFU divides by, and where that number comes from."""
    if override_tflops:
        return override_tflops * 1e12, "--peak-tflops"
    if device != "cuda":
        return None, None
    import torch

    name = torch.cuda.get_device_name()
    key = next((key for key in PEAK_BF16_FLOPS if key in name), None)
    return (PEAK_BF16_FLOPS[key], f"{key} dense bf16 data-sheet peak") if key else (None, None)


def train_flops_per_sample(model, seq: int) -> float:
    """6·N per token for the weight matmuls (forward + backward) plus 12·L·H·S for attention (PaLM's count)."""
    cfg = model.config
    embeddings = sum(p.numel() for n, p in model.named_parameters() if "embeddings" in n)
    n_params = sum(p.numel() for p in model.parameters()) - embeddings
    return seq * (6 * n_params + 12 * cfg.num_hidden_layers * cfg.hidden_size * seq)


def build_model(size: str, seq: int, device: str, seed: int = 0):
    import torch
    from transformers import RobertaConfig, RobertaForSequenceClassification

    torch.manual_seed(seed)
    config = RobertaConfig(**SIZES[size], max_position_embeddings=seq + 2, num_labels=3, type_vocab_size=1)
    return RobertaForSequenceClassification(config).to(device)


def run_variant(name: str, args, device: str, optimized: bool) -> Result:
    import torch

    import torch._dynamo

    torch._dynamo.reset()  # this variant's compiled graphs only
    torch._dynamo.utils.counters.clear()
    model = build_model(args.size, args.seq, device)
    model.train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-5, fused=True if optimized else None)
    step_model = torch.compile(model, backend=args.compile_backend) if optimized else model
    vocab = model.config.vocab_size
    g = torch.Generator().manual_seed(1)
    batches = [
        (torch.randint(3, vocab, (args.batch, args.seq), generator=g).to(device),
         torch.randint(0, 3, (args.batch,), generator=g).to(device))
        for _ in range(4)
    ]
    autocast = torch.autocast(device_type=device, dtype=torch.bfloat16, enabled=optimized)
    seen: dict = {}

    def step(i: int) -> torch.Tensor:
        ids, labels = batches[i % len(batches)]
        with autocast:
            out = step_model(input_ids=ids, labels=labels)
        out.loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        seen.setdefault("first_loss", float(out.loss.detach().float()))
        seen["logits_dtype"] = str(out.logits.dtype)
        return out.loss

    def sync() -> None:
        if device == "cuda":
            torch.cuda.synchronize()

    if device == "cuda":
        torch.cuda.reset_peak_memory_stats()
    for i in range(args.warmup):  # compilation and allocator warm-up happen here, outside the timing
        step(i)
    sync()
    start = time.perf_counter()
    for i in range(args.steps):
        loss = step(i)
    sync()
    elapsed = time.perf_counter() - start
    samples_per_s = args.steps * args.batch / elapsed
    peak, _ = peak_flops_and_source(device, args.peak_tflops)
    mfu = samples_per_s * train_flops_per_sample(model, args.seq) / peak if peak else None
    steps_taken = int(max(float(state["step"]) for state in optimizer.state.values()))
    graphs = int(torch._dynamo.utils.counters["stats"]["unique_graphs"])
    peak_mem = torch.cuda.max_memory_allocated() / 2**30 if device == "cuda" else None
    if optimized and args.profile_dir:
        profile_steps(step, sync, args.profile_dir, args.profile_steps)
    return Result(name, samples_per_s, 1000 * elapsed / args.steps, mfu, float(loss.detach().float()),
                  elapsed, steps_taken, seen["first_loss"], seen["logits_dtype"], bool(optimizer.defaults["fused"]),
                  graphs, peak_mem)


def profile_steps(step, sync, out_dir: str, steps: int) -> None:
    """A few more steps under our profiler (one step_N annotation each): where the time goes, for `profile analyze`."""
    import sagelaunch.profiler as smprof

    smprof.configure(smprof.Config(output_dir=out_dir, host="bench", rank=0))
    smprof.start_profiling()
    for i in range(steps):
        with smprof.annotate(f"step_{i + 1}"):
            step(i)
            sync()
    smprof.stop_profiling()


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", choices=sorted(SIZES), default=None, help="default: base on GPU, tiny on CPU")
    parser.add_argument("--seq", type=int, default=None, help="sequence length (default 128; 32 for tiny)")
    parser.add_argument("--batch", type=int, default=None, help="per-step batch (default 64 on GPU, 8 on CPU)")
    parser.add_argument("--steps", type=int, default=None, help="timed steps (default 50 on GPU, 5 on CPU)")
    parser.add_argument("--warmup", type=int, default=None, help="untimed steps first (default 10 / 2)")
    parser.add_argument("--compile-backend", default="inductor")
    parser.add_argument("--peak-tflops", type=float, default=None, help="device peak for MFU (auto on known GPUs)")
    parser.add_argument("--json", help="write the figures to this file")
    parser.add_argument("--profile-dir", help="profile a few steps of the optimized variant into this folder")
    parser.add_argument("--profile-steps", type=int, default=5)
    args = parser.parse_args(argv)

    import torch

    device = "cuda" if torch.cuda.is_available() else "cpu"
    gpu = device == "cuda"
    args.size = args.size or ("base" if gpu else "tiny")
    args.seq = args.seq or (128 if args.size == "base" else 32)
    args.batch = args.batch or (64 if gpu else 8)
    args.steps = args.steps or (50 if gpu else 5)
    args.warmup = args.warmup if args.warmup is not None else (10 if gpu else 2)
    if gpu:
        torch.backends.cuda.matmul.allow_tf32 = False  # the baseline is plain fp32, as the post's
    where = torch.cuda.get_device_name() if gpu else "CPU"
    print(f"RoBERTa-{args.size} classifier, seq {args.seq}, batch {args.batch}, {args.steps} timed steps on {where}")

    results = [
        run_variant("eager fp32 + AdamW", args, device, optimized=False),
        run_variant("torch.compile + bf16 + fused AdamW", args, device, optimized=True),
    ]
    for r in results:
        mfu = f"MFU {100 * r.mfu:5.1f}%" if r.mfu is not None else "MFU n/a (pass --peak-tflops)"
        print(f"{r.variant:<36} {r.samples_per_s:10.1f} samples/s  {r.step_ms:8.1f} ms/step  {mfu}  loss {r.loss:.3f}  "
              f"({r.optimizer_steps} optimizer steps, {r.compiled_graphs} compiled graphs, logits {r.logits_dtype})")
    speedup = results[1].samples_per_s / results[0].samples_per_s
    print(f"speed-up: {speedup:.2f}x")
    peak, peak_source = peak_flops_and_source(device, args.peak_tflops)
    report = {"device": where, "size": args.size, "seq": args.seq, "batch": args.batch, "steps": args.steps,
              "warmup": args.warmup, "speedup": speedup, "results": [asdict(r) for r in results],
              "peak_tflops": peak / 1e12 if peak else None, "peak_source": peak_source,
              "profile_dir": args.profile_dir}
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=2)
    return report


if __name__ == "__main__":
    main()
