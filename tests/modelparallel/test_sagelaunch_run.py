"""`sagelaunch run`: an SMP v1 script outside a job, under real torchrun processes, with the `smdistributed` name local
jobs give it; a real installation is never shadowed; torchrun's arguments are torchrun's."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch

from sagelaunch.jobspec.errors import SagelaunchError
from sagelaunch.launcher.local.script_run import prepare, split_arguments

SCRIPT = textwrap.dedent('''
    import json, os, sys
    import torch
    import smdistributed.modelparallel.torch as smp
    from smdistributed.modelparallel.torch.state_mod import state

    smp.init()  # the parameters come from --mp-parameters, as a job's from SM_HP_MP_PARAMETERS
    torch.manual_seed(0)
    model = smp.DistributedModel(torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2)))
    optimizer = smp.DistributedOptimizer(torch.optim.SGD(model.parameters(), lr=0.1))

    @smp.step
    def train_step(model, x, y):
        loss = torch.nn.functional.mse_loss(model(x), y)
        model.backward(loss)
        return loss

    x, y = torch.randn(4, 4, generator=torch.Generator().manual_seed(1)), torch.zeros(4, 2)
    loss = train_step(model, x, y).reduce_mean()
    optimizer.step()
    smp.save({"model": model.local_state_dict()}, os.path.join(sys.argv[1], "ckpt.pt"), partial=True)
    # one write per line: under PYTHONUNBUFFERED print's text and newline are two writes, and two ranks interleave
    sys.stdout.write("RESULT " + json.dumps({"rank": smp.rank(), "pp": smp.pp_size(),
                                             "microbatches": state.cfg.microbatches, "loss": loss.item()}) + "\\n")
    sys.stdout.flush()
''')


def _sagelaunch_run(args: list[str], cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "OMP_NUM_THREADS": "1", "SMP_TIMEOUT_SECONDS": "60", **(env or {})}
    env.pop("SM_HP_MP_PARAMETERS", None)
    return subprocess.run([sys.executable, "-m", "sagelaunch", "run", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=300)


def test_torchruns_arguments_are_told_from_the_scripts_by_torchruns_parser(tmp_path):
    (tmp_path / "train.py").write_text("")
    own, torchrun, script = split_arguments(
        ["--framework-version", "1.6.0", "--nproc-per-node", "2", "--standalone", "--master_port=29500",
         str(tmp_path / "train.py"), "--nproc-per-node", "7", "--mp-parameters", "{}"])
    assert own == {"--framework-version": "1.6.0"}
    assert torchrun == ["--nproc-per-node", "2", "--standalone", "--master_port=29500"]
    assert script == [str(tmp_path / "train.py"), "--nproc-per-node", "7", "--mp-parameters", "{}"]  # the script's
    with pytest.raises(SagelaunchError, match="no script 'missing.py'"):
        prepare(["--nproc-per-node", "2", "missing.py"], base_env={})


def _results(stdout: str) -> list[dict]:
    """Every `RESULT {...}` the ranks printed, wherever it falls: ranks share one stdout, so lines may merge."""
    decoder = json.JSONDecoder()
    return [decoder.raw_decode(part)[0] for part in stdout.split("RESULT ")[1:]]


def test_results_are_read_even_when_two_ranks_lines_merge():
    merged = 'noise RESULT {"rank": 0}RESULT {"rank": 1}\nRESULT {"rank": 2}\n'
    assert [r["rank"] for r in _results(merged)] == [0, 1, 2]


@pytest.mark.slow
def test_an_smp_script_runs_outside_a_job_with_the_smdistributed_name(tmp_path):
    (tmp_path / "train.py").write_text(SCRIPT)
    mp = {"pipeline_parallel_degree": 2, "microbatches": 2, "ddp": True}
    run = _sagelaunch_run(["--mp-parameters", json.dumps(mp), "--framework-version", "1.6.0",
                           "--nproc-per-node", "2", "train.py", str(tmp_path)], tmp_path)
    assert run.returncode == 0, run.stderr[-3000:]
    assert "smdistributed.modelparallel: sagelaunch's modelparallel (the real library is not installed)" in run.stderr
    results = _results(run.stdout)
    assert sorted(r["rank"] for r in results) == [0, 1]
    assert all(r["pp"] == 2 and r["microbatches"] == 2 for r in results)
    # one process, the same model and batch: the pipelined run's loss (computed here, under a seed of its own)
    with torch.random.fork_rng():
        torch.manual_seed(0)
        m = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))
        x = torch.randn(4, 4, generator=torch.Generator().manual_seed(1))
        single = torch.nn.functional.mse_loss(m(x), torch.zeros(4, 2)).item()
    last_stage = max(results, key=lambda r: r["loss"])  # the last stage holds the loss
    assert last_stage["loss"] == pytest.approx(single, abs=1e-6)
    # PyTorch 1.6.0's SMP release names partial checkpoints f"{name}_{mp_rank}"
    assert sorted(p.name for p in tmp_path.glob("ckpt.pt_*")) == ["ckpt.pt_0", "ckpt.pt_1"]


@pytest.mark.slow
def test_a_real_smdistributed_installation_is_never_shadowed(tmp_path):
    real = tmp_path / "site" / "smdistributed" / "modelparallel"
    real.mkdir(parents=True)
    (real.parent / "__init__.py").write_text("")
    (real / "__init__.py").write_text("")
    (tmp_path / "probe.py").write_text("import smdistributed.modelparallel as m; print('FROM ' + m.__file__)")
    run = _sagelaunch_run(["--nproc-per-node", "1", "probe.py"], tmp_path, {"PYTHONPATH": str(tmp_path / "site")})
    assert run.returncode == 0, run.stderr[-3000:]
    assert "smdistributed.modelparallel: the installed library" in run.stderr
    assert f"FROM {real / '__init__.py'}" in run.stdout
