"""`distribution["mpi"]["custom_mpi_options"]` in local jobs, where torchrun (not mpirun) starts the ranks.

mpirun's `-x NAME=VALUE` (and `-x NAME`, which exports the launcher's own value) set environment variables on
every rank: local jobs set them the same way. mpirun's other options tune MPI's transports (`--mca ...`,
`--bind-to`, `-verbose`); no MPI runs here, so they have no counterpart: the job log names them."""

from __future__ import annotations

import shlex

EXPORT_FLAGS = ("-x", "--x")


def exported_environment(options: str, launcher_env: dict[str, str]) -> tuple[dict[str, str], list[str]]:
    """(variables every rank gets, one job-log note per option without effect)."""
    words = shlex.split(options or "")
    variables: dict[str, str] = {}
    ignored: list[str] = []
    i = 0
    while i < len(words):
        word = words[i]
        if word in EXPORT_FLAGS and i + 1 < len(words):
            name, sep, value = words[i + 1].partition("=")
            if sep:
                variables[name] = value
            elif name in launcher_env:
                variables[name] = launcher_env[name]
            i += 2
            continue
        # an option and its arguments (the words up to the next option)
        option = [word]
        while i + 1 < len(words) and not words[i + 1].startswith("-"):
            i += 1
            option.append(words[i])
        ignored.append(" ".join(option))
        i += 1
    notes = [f"custom_mpi_options: {' ; '.join(ignored)}: mpirun transport options, without effect "
             "(local jobs start ranks with torchrun; only -x variables apply)"] if ignored else []
    return variables, notes
