"""`sagelaunch run`: an SMP v1 (or SageMaker Profiler) script outside a job, under torchrun, with the module names
local jobs give it (`smdistributed.modelparallel.torch`, `smppy`, `smprof`: launcher.local.job_modules), never
shadowing a real installation. The arguments are torchrun's, parsed by torchrun's own parser; two of sagelaunch's own
may come before the script: --mp-parameters (what a job's SM_HP_MP_PARAMETERS holds) and --framework-version (whose
SMP release names partial checkpoints: jobspec.smp.checkpoint_names)."""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass, field

from pydantic import ValidationError

from sagelaunch.jobspec.contract import SAGELAUNCH_SMP_CHECKPOINT_NAMES, SM_HP_MP_PARAMETERS
from sagelaunch.jobspec.errors import SagelaunchError, validation_error
from sagelaunch.jobspec.smp import SMPParameters, check_local_support, checkpoint_names
from sagelaunch.launcher.local.job_modules import JOB_MODULES, stand_in_paths

OWN_OPTIONS = ("--mp-parameters", "--framework-version")


@dataclass
class ScriptRun:
    command: list[str]  # python -m torch.distributed.run <torchrun options> <script> <script arguments>
    env: dict[str, str]
    notes: list[str] = field(default_factory=list)  # one line per module name: which library the script gets


def _own_option(token: str) -> tuple[str, str | None] | None:
    name, eq, value = token.partition("=")
    return (name, value if eq else None) if name in OWN_OPTIONS else None


def split_arguments(tokens: list[str]) -> tuple[dict[str, str], list[str], list[str]]:
    """(sagelaunch's options, torchrun's options, [script, *script arguments]) of `tokens`; torchrun's options are
    told apart from the script by torchrun's parser (which options take a value), and checked by it."""
    from torch.distributed.run import get_args_parser

    parser = get_args_parser()
    takes_value = {opt: action.nargs != 0 for action in parser._actions for opt in action.option_strings}
    own: dict[str, str] = {}
    torchrun: list[str] = []
    i = 0
    while i < len(tokens) and tokens[i].startswith("-"):
        token = tokens[i]
        mine = _own_option(token)
        name = token.partition("=")[0]
        if mine is not None or takes_value.get(name) is True and "=" not in token:
            if i + 1 >= len(tokens):
                raise SagelaunchError(f"sagelaunch run: {token} needs a value", field=token, value=None,
                                      allowed="a value after the option", fix=f"give {token} VALUE")
        if mine is not None:
            own[mine[0]] = mine[1] if mine[1] is not None else tokens[i + 1]
            i += 1 if mine[1] is not None else 2
            continue
        torchrun.append(token)
        if takes_value.get(name) is True and "=" not in token:
            torchrun.append(tokens[i + 1])
            i += 1
        i += 1
    script = tokens[i:]
    if not script:
        raise SagelaunchError("sagelaunch run: no training script given", field="script", value=None,
                              allowed="a Python script (or -m module) after the torchrun options",
                              fix="sagelaunch run --nproc-per-node 2 train.py [script arguments]")
    parsed = parser.parse_args([*torchrun, *script])  # torchrun's checks: exits with its usage on a bad option
    if not (parsed.module or parsed.no_python) and not os.path.isfile(script[0]):
        raise SagelaunchError(f"sagelaunch run: no script {script[0]!r}", field="script", value=script[0],
                              allowed="a Python file (or, with -m, a module)",
                              fix="give the script's path, or -m MODULE to run a module")
    return own, torchrun, script


def prepare(tokens: list[str], base_env: dict[str, str] | None = None, python: str = sys.executable) -> ScriptRun:
    """The torchrun command and its environment for `sagelaunch run <tokens>`."""

    own, torchrun, script = split_arguments(tokens)
    env = dict(os.environ if base_env is None else base_env)
    if "--mp-parameters" in own:
        raw = own["--mp-parameters"]
        try:
            parameters = json.loads(raw)
        except json.JSONDecodeError as err:
            example = '{"pipeline_parallel_degree": 2, "microbatches": 2}'
            raise SagelaunchError(f"sagelaunch run: --mp-parameters is not JSON ({err})", field="--mp-parameters",
                                  value=raw, allowed="a JSON object of SMP v1 parameters",
                                  fix=f"e.g. --mp-parameters '{example}'") from None
        try:  # refused here, before any process starts
            check_local_support(SMPParameters.model_validate(parameters))
        except ValidationError as err:
            raise validation_error(SagelaunchError, "--mp-parameters", err) from None
        env[SM_HP_MP_PARAMETERS] = json.dumps(parameters)
    env[SAGELAUNCH_SMP_CHECKPOINT_NAMES] = checkpoint_names(own.get("--framework-version"))
    paths, notes = stand_in_paths(JOB_MODULES, python)
    # the user's own PYTHONPATH first: the stand-ins only answer for names nothing else provides
    env["PYTHONPATH"] = os.pathsep.join([p for p in (env.get("PYTHONPATH"), *paths) if p])
    return ScriptRun([python, "-m", "torch.distributed.run", *torchrun, *script], env, notes)
