"""smp.utils: SMP's small helpers that scripts import."""

from __future__ import annotations


def rmsg(message: str) -> str:
    """`message` prefixed with this process's ranks, as SMP's log lines are."""
    from sagelaunch.modelparallel.core import state

    if not state.initialized:
        return message
    lay = state.layout
    return f"[{lay.rank}|pp{lay.pp_rank}|tp{lay.tp_rank}|rdp{lay.rdp_rank}] {message}"
