"""Module names that real SageMaker scripts import, given to local jobs when the real library is absent.

SMP v1 scripts import `smdistributed.modelparallel.torch`; SageMaker Profiler scripts import `smppy`/`smprof`; scripts
written for the training toolkit import `sagemaker_training.environment` and `.entry_point`.
In a local job these names resolve to sagelaunch's own packages through thin re-export modules kept in
`job_modules/<name>/<name>/` at the repository root (one folder per top-level name, so each goes on the job's
PYTHONPATH on its own). They are never installed into the user's environment, and a library that is really
installed in the job's Python is never shadowed: the job log says which one the job uses.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

from sagelaunch.jobspec.install import PACKAGE_DIR

if TYPE_CHECKING:
    from sagelaunch.launcher.local.local_job import LocalJob

JOB_MODULES_ROOT = PACKAGE_DIR / "job_modules"


@dataclass(frozen=True)
class JobModule:
    name: str                                  # the top-level name scripts import
    real: str                                  # the module whose presence means the real library is installed
    ours: str                                  # what the job gets instead, for the job log
    wanted: Callable[["LocalJob"], bool]       # whether this job needs the name at all


JOB_MODULES: tuple[JobModule, ...] = (
    JobModule("smdistributed", "smdistributed.modelparallel", "sagelaunch's modelparallel",
              lambda job: job.mp_parameters is not None),
    # SageMaker Profiler's package: smppy in the TF 2.11 / PT 1.13 images, smprof after; any script may import it
    JobModule("smppy", "smppy", "sagelaunch's profiler", lambda job: True),
    JobModule("smprof", "smprof", "sagelaunch's profiler", lambda job: True),
    # the SageMaker training toolkit (scripts read `environment.Environment()`, launch with `entry_point.run`)
    JobModule("sagemaker_training", "sagemaker_training",
              "sagelaunch's environment and entry_point from SM_TRAINING_ENV",
              lambda job: True),
)


def _installed(python: str, modules: list[str]) -> set[str]:
    """Which of `modules` the job's Python can import without our folders (the user's PYTHONPATH included). Asked of
    a fresh process: what this client process has on its path or imported says nothing about the job's."""
    if not modules:
        return set()
    probe = ("import importlib.util, sys\n"
             "for m in sys.argv[2:]:\n"
             "    try:\n"
             "        s = importlib.util.find_spec(m)\n"
             "    except (ImportError, ValueError):  # a parent package exists but not the module\n"
             "        continue\n"
             "    if s is not None and not (s.origin or '').startswith(sys.argv[1]):  # our stand-in is not it\n"
             "        print(m)\n")
    out = subprocess.run([python, "-c", probe, str(JOB_MODULES_ROOT.resolve()), *modules], capture_output=True,
                         text=True, timeout=120)
    return set(out.stdout.split())


def job_module_paths(job: "LocalJob", python: str) -> tuple[list[str], list[str]]:
    """(folders to add to the job's PYTHONPATH, one log line per name the job uses)."""
    return stand_in_paths([m for m in JOB_MODULES if m.wanted(job)], python)


def stand_in_paths(wanted: "list[JobModule] | tuple[JobModule, ...]", python: str) -> tuple[list[str], list[str]]:
    """(folders to add to PYTHONPATH for the names in `wanted` that `python` lacks, one line per name saying which
    library it gets): the same stand-ins for a local job and for `sagelaunch run` outside one."""
    installed = _installed(python, [m.real for m in wanted])
    paths, notes = [], []
    for module in wanted:
        folder = JOB_MODULES_ROOT / module.name
        if module.real in installed:
            notes.append(f"{module.real}: the installed library")
        elif folder.is_dir():
            paths.append(str(folder))
            notes.append(f"{module.real}: {module.ours} (the real library is not installed)")
        else:
            notes.append(f"{module.real}: not available (neither installed nor shipped with this sagelaunch)")
    return paths, notes
