"""`sagelaunch run [torchrun options] train.py [script arguments]`: an SMP v1 script outside a job, with the
`smdistributed` name local jobs give it (launcher/local/script_run.py)."""

from __future__ import annotations

import subprocess
import sys

import typer

from sagelaunch.jobspec.errors import SagelaunchError
from sagelaunch.launcher import prepare_script_run

HELP = """Run a training script under torchrun with SageMaker's module names, as a local job would give them.

usage: sagelaunch run [--mp-parameters JSON] [--framework-version V] [torchrun options] SCRIPT [script arguments]

  torchrun options   any of torchrun's (--nproc-per-node 2, --nnodes, --master-port, ...), parsed by torchrun
  --mp-parameters    the SMP v1 parameters a job's SM_HP_MP_PARAMETERS holds (what smp.init() reads), as JSON
  --framework-version  the PyTorch version whose SMP release names partial checkpoints (1.6.0: f"{f}_{mp_rank}")

`import smdistributed.modelparallel.torch as smp` (and smppy/smprof) resolve to sagelaunch's implementations
unless the real library is installed, which is never shadowed. The exit status is torchrun's."""


def run(ctx: typer.Context) -> None:
    """Run an SMP script under torchrun, outside a job (sagelaunch run --help)."""
    from rich.console import Console
    from rich.markup import escape

    tokens = list(ctx.args)
    if not tokens or tokens[0] in ("-h", "--help"):
        print(HELP)
        raise typer.Exit(0 if tokens else 2)
    errors = Console(stderr=True, highlight=False, soft_wrap=True)
    try:
        launch = prepare_script_run(tokens)
    except SagelaunchError as exc:
        errors.print(f"[red]error:[/red] {escape(str(exc))}")
        raise typer.Exit(2) from None
    for note in launch.notes:
        errors.print(f"sagelaunch run: {escape(note)}")
    try:
        code = subprocess.run(launch.command, env=launch.env).returncode
    except KeyboardInterrupt:  # torchrun got the same Ctrl-C (one process group) and ends its workers
        code = 130
    sys.stdout.flush()
    raise typer.Exit(code)


def register(app: typer.Typer) -> None:
    app.command("run", context_settings={"allow_extra_args": True, "ignore_unknown_options": True,
                                         "help_option_names": []}, add_help_option=False)(run)
