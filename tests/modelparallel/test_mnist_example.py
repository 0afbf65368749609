"""The real SMP v1 MNIST example (aws/amazon-sagemaker-examples' pt_mnist.py, vendored with its mechanical changes
listed in tests/data/smp_examples/mnist/upstream.json) run by `sagelaunch run` under real torchrun processes, as
the notebook configures it (2 partitions, 4 microbatches, interleaved, ddp) and at degree 1, pp=2 with 2
microbatches, dp=2 and pp=2 × dp=2. Each run equals one process of plain PyTorch training the example's own model
(its classes, optimizer, seed and batches): the losses the script prints, and the parameters in the partial
checkpoint the script saves, one file per pipeline rank holding only that rank's modules."""

from __future__ import annotations

import ast
import concurrent.futures
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from sagelaunch.jobspec.net import free_port
from tests.modelparallel.mnist_standin import IDX_FILES, write_idx
from tests.modelparallel.vendored_example import EXAMPLES, changed_files, prepared_copy, record

STANDIN = Path(__file__).with_name("mnist_standin.py")
TRAIN, TEST, BATCH = 768, 128, 64  # 12 training batches at degree 1: the script prints batches 0 and 10
NOTEBOOK = {"microbatches": 4, "placement_strategy": "spread", "pipeline": "interleaved", "optimize": "speed",
            "partitions": 2, "ddp": True}
RUNS: dict[str, tuple[int, dict, int]] = {  # name: (processes, SMP parameters, data-parallel degree)
    "degree1": (1, {"ddp": True}, 1),
    "notebook_pp2_mb4": (2, NOTEBOOK, 1),
    "pp2_mb2_simple": (2, {**NOTEBOOK, "microbatches": 2, "pipeline": "simple"}, 1),
    "dp2": (2, {"ddp": True}, 2),
    "pp2_dp2": (4, NOTEBOOK, 2),
}
TRAIN_LINE = re.compile(r"Train Epoch: 1 \[(\d+)/\d+ .*\]\tLoss: ([-0-9.e]+)")
TEST_LINE = re.compile(r"Test set: Average loss: ([-0-9.]+)")


def _write_mnist(root: Path) -> None:
    """MNIST's raw IDX files (28×28 uint8 images, labels 0–9), small and random, where torchvision keeps them."""
    rng = np.random.default_rng(0)
    for train, n in ((True, TRAIN), (False, TEST)):
        images, labels = IDX_FILES[train]
        write_idx(root / "MNIST" / "raw" / images, rng.integers(0, 256, (n, 28, 28)))
        write_idx(root / "MNIST" / "raw" / labels, rng.integers(0, 10, (n,)))


def _launch(root: Path, processes: int, parameters: dict) -> tuple[list[str], dict[str, dict]]:
    """The script's printed lines, and its saved partial checkpoint files {name: model_state_dict}."""
    code = prepared_copy("mnist", root / "code", extra=(STANDIN,))
    _write_mnist(root / "data")  # the script reads "../data"
    env = {**os.environ, "OMP_NUM_THREADS": "1", "SMP_TIMEOUT_SECONDS": "120"}
    env.pop("SM_HP_MP_PARAMETERS", None)
    # a free port of its own (torchrun's default is one fixed port): the runs go two at a time
    run = subprocess.run([sys.executable, "-m", "sagelaunch", "run", "--mp-parameters", json.dumps(parameters),
                          "--framework-version", "1.6.0", "--nproc-per-node", str(processes),
                          "--master-port", str(free_port()), "pt_mnist.py"],
                         cwd=code, env=env, capture_output=True, text=True, timeout=400)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-4000:]
    saved = {p.name: {k: v for k, v in torch.load(p, weights_only=False)["model_state_dict"].items()
                      if k != "_smp_is_partial"}  # SMP's mark of a local_state_dict()
             for p in sorted((code / "local_checkpoints").glob("pt_mnist_checkpoint.pt*"))}
    return run.stdout.splitlines(), saved


def _example_model() -> torch.nn.Module:
    """GroupedNet as the vendored script defines it (its classes, without its smdistributed import)."""
    tree = ast.parse((EXAMPLES / "mnist" / "pt_mnist.py").read_text())
    classes: list[ast.stmt] = [node for node in tree.body if isinstance(node, ast.ClassDef)]
    namespace: dict = {"nn": torch.nn, "F": F, "torch": torch}
    exec(compile(ast.Module(body=classes, type_ignores=[]), "pt_mnist.py", "exec"), namespace)
    return namespace["GroupedNet"]()


def _one_process(dp: int) -> dict:
    """Plain PyTorch: the script's seed, model and Adadelta(lr=4.0); each step the dp replicas' batches (replica r
    reads the r-th contiguous part of the data, 64 at a time) make one batch, as DDP averages their gradients."""
    from tests.modelparallel.mnist_standin import MNIST, Compose, Normalize, ToTensor

    root = Path(os.environ["MNIST_REFERENCE_ROOT"])
    transform = Compose([ToTensor(), Normalize((0.1307,), (0.3081,))])
    train, test = MNIST(str(root), True, transform), MNIST(str(root), False, transform)
    torch.manual_seed(1)
    model = _example_model()
    optimizer = torch.optim.Adadelta(model.parameters(), lr=4.0)
    share = TRAIN // dp
    images = torch.stack([train[i][0] for i in range(TRAIN)])
    labels = torch.tensor([train[i][1] for i in range(TRAIN)])
    first_replica_losses = []
    for step in range(0, share, BATCH):
        rows = [list(range(r * share + step, r * share + min(step + BATCH, share))) for r in range(dp)]
        optimizer.zero_grad()
        losses = [F.nll_loss(model(images[idx]), labels[idx]) for idx in rows]
        torch.stack(losses).mean().backward()
        optimizer.step()
        first_replica_losses.append(losses[0].item())
    with torch.no_grad():
        test_x = torch.stack([test[i][0] for i in range(TEST)])
        test_loss = F.nll_loss(model(test_x), torch.tensor([test[i][1] for i in range(TEST)]), reduction="sum")
    return {"losses": first_replica_losses, "test_loss": test_loss.item() / TEST,
            "params": {k: v.detach().clone() for k, v in model.state_dict().items()}}


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """The five runs two at a time (each is mostly one process starting, so two share the 2 cores well); the
    references are computed here meanwhile."""
    root = tmp_path_factory.mktemp("mnist_example")
    _write_mnist(root / "reference")
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool, pytest.MonkeyPatch.context() as mp:
        launched = {name: pool.submit(_launch, root / name, processes, parameters)
                    for name, (processes, parameters, _) in RUNS.items()}
        mp.setenv("MNIST_REFERENCE_ROOT", str(root / "reference"))
        references = {dp: _one_process(dp) for dp in (1, 2)}
        yield {name: (launched[name].result(), references[dp]) for name, (_, _, dp) in RUNS.items()}


def test_the_vendored_script_is_upstreams_text_and_each_change_is_recorded():
    assert changed_files("mnist") == []
    upstream = record("mnist")
    assert upstream["commit"] == "296b3e435f3c3c6420a2db2f1551c414e38595ce"
    assert all(change["why"] for change in upstream["mechanical_changes"])


@pytest.mark.slow
@pytest.mark.timeout(900)
@pytest.mark.parametrize("name", list(RUNS))
def test_each_layout_equals_one_process_in_losses_and_parameters(runs, name):
    (lines, saved), reference = runs[name]
    printed = [(int(m.group(1)), float(m.group(2))) for line in lines if (m := TRAIN_LINE.search(line))]
    # rank 0 prints its replica's loss every 10 batches
    expected = [(i * BATCH, loss) for i, loss in enumerate(reference["losses"]) if i % 10 == 0]
    assert [seen for seen, _ in printed] == [seen for seen, _ in expected]
    assert [loss for _, loss in printed] == pytest.approx([loss for _, loss in expected], abs=1e-5)
    test_losses = [float(m.group(1)) for line in lines if (m := TEST_LINE.search(line))]
    assert test_losses and test_losses == pytest.approx([reference["test_loss"]] * len(test_losses), abs=1.5e-4)
    # the partial checkpoint: one file per pipeline rank (PyTorch 1.6.0's SMP names them <name>_<mp_rank>)
    processes, parameters, dp = RUNS[name]
    pp = parameters.get("partitions", 1)
    assert sorted(saved) == [f"pt_mnist_checkpoint.pt_{r}" for r in range(pp)]
    held = [set(state) for state in saved.values()]
    assert set().union(*held) == set(reference["params"]) and sum(map(len, held)) == len(reference["params"])
    if pp == 2:  # the first stage runs the convolutions, the second the classifier
        assert {k.split(".")[0] + "." + k.split(".")[1] for k in held[0]} == {"net1.conv1", "net1.conv2"}
        assert {k.split(".")[0] for k in held[1]} == {"net2"}
    for state in saved.values():
        for key, value in state.items():
            assert torch.allclose(value, reference["params"][key], atol=1e-5), key
