"""Process-tree bookkeeping for a local job: nothing the job started may outlive it.

torchrun starts each worker in a session of its own (to signal it as a group), so a host's
process group does not hold its ranks. We therefore track every descendant by PID (psutil),
signal each one's process group, and SIGKILL whatever is left after the grace period.
"""

from __future__ import annotations

import ctypes
import os
import signal
import time
from collections.abc import Iterable

import psutil

_PR_SET_CHILD_SUBREAPER = 36


def become_subreaper() -> bool:
    """Orphaned descendants (a rank whose torchrun died) are re-parented to us, so we still see them."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def descendants(pid: int) -> list[psutil.Process]:
    try:
        return psutil.Process(pid).children(recursive=True)
    except psutil.Error:
        return []


class ProcessTracker:
    """Remembers every process seen under the roots, so a late snapshot misses nothing."""

    def __init__(self) -> None:
        self.known: dict[int, psutil.Process] = {}

    def add(self, procs: Iterable[psutil.Process]) -> None:
        for proc in procs:
            if proc.pid not in self.known:
                self.known[proc.pid] = proc

    def refresh(self, root_pid: int) -> None:
        """Add the root's current descendants (the supervisor, as subreaper, also gets orphans)."""
        self.add(descendants(root_pid))

    def alive(self, exclude: Iterable[int] = ()) -> list[psutil.Process]:
        skip = set(exclude)
        living = []
        for proc in self.known.values():
            if proc.pid in skip:
                continue
            try:
                # is_running compares create times: a reused PID is not our process
                if proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE:
                    living.append(proc)
            except psutil.Error:
                pass
        return living


def signal_groups(procs: Iterable[psutil.Process], sig: int) -> None:
    """Send `sig` to each process's group (ranks and their data loaders) and to the process itself."""
    groups = set()
    for proc in procs:
        try:
            groups.add(os.getpgid(proc.pid))
        except OSError:
            continue
    me = os.getpgid(0)
    for group in groups - {me}:
        try:
            os.killpg(group, sig)
        except OSError:
            pass
    for proc in procs:
        try:
            proc.send_signal(sig)
        except psutil.Error:
            pass


AGENT_GRACE_SECONDS = 1.0


def terminate(tracker: ProcessTracker, root_pid: int, grace: float, own_children: Iterable[int] = (),
              agents: Iterable[int] = ()) -> list[int]:
    """SIGTERM everything under root_pid, wait up to `grace` seconds, then SIGKILL the rest (their PIDs returned).

    `own_children` are the root's Popen children: signalled like the rest, but left for their
    Popen objects to reap (so their exit codes stay readable). `agents` are launchers (torchrun):
    once their workers are gone they get only a short grace, as they have nothing left to save.
    """
    own, agents = set(own_children), set(agents)
    tracker.refresh(root_pid)
    signal_groups(tracker.alive({root_pid}), signal.SIGTERM)
    deadline = time.monotonic() + grace
    agents_alone_since = None
    while time.monotonic() < deadline:
        tracker.refresh(root_pid)
        reap_orphans(root_pid, keep=own)
        living = tracker.alive({root_pid})
        if not living:
            return []
        if all(proc.pid in agents for proc in living):
            agents_alone_since = agents_alone_since or time.monotonic()
            if time.monotonic() - agents_alone_since > AGENT_GRACE_SECONDS:
                break
        time.sleep(0.05)
    tracker.refresh(root_pid)
    leftovers = tracker.alive({root_pid})
    signal_groups(leftovers, signal.SIGKILL)
    psutil.wait_procs([p for p in leftovers if p.pid not in own], timeout=5)
    reap_orphans(root_pid, keep=own)
    return [p.pid for p in leftovers if p.pid not in agents]


def reap_orphans(root_pid: int, keep: Iterable[int] = ()) -> None:
    """Collect zombies re-parented to us (not our own Popen children, whose exit codes we read)."""
    skip = set(keep)
    try:
        children = psutil.Process(root_pid).children()
    except psutil.Error:
        return
    for child in children:
        if child.pid in skip:
            continue
        try:
            if child.status() == psutil.STATUS_ZOMBIE:
                os.waitpid(child.pid, os.WNOHANG)
        except (psutil.Error, ChildProcessError, OSError):
            pass


def identity(proc: psutil.Process) -> tuple[int, float, int] | None:
    """(pid, create time, process group) of a live process, as the registry records it."""
    try:
        return proc.pid, proc.create_time(), os.getpgid(proc.pid)
    except (psutil.Error, OSError):
        return None


def same_process(pid: int, started: float) -> psutil.Process | None:
    """The live process `pid` if it is the one that started at `started` (not a reused PID), else None."""
    try:
        proc = psutil.Process(pid)
        if abs(proc.create_time() - started) < 1e-3 and proc.status() != psutil.STATUS_ZOMBIE:
            return proc
    except psutil.Error:
        pass
    return None


def end_recorded(recorded: Iterable[tuple[int, float, int]], grace: float) -> list[int]:
    """End the recorded processes still alive (SIGTERM to each one's group, SIGKILL after `grace`); their PIDs."""
    alive = [proc for pid, started, _ in recorded if (proc := same_process(pid, started)) is not None]
    if not alive:
        return []
    signal_groups(alive, signal.SIGTERM)
    _, leftovers = psutil.wait_procs(alive, timeout=grace)
    if leftovers:
        signal_groups(leftovers, signal.SIGKILL)
        psutil.wait_procs(leftovers, timeout=5)
    return [proc.pid for proc in alive]
