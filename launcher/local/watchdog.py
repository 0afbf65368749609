"""The parent of a local job's supervisor: `python -m sagelaunch.launcher.local.watchdog <job folder>`.

Nothing of a job may outlive its supervisor, even one killed with SIGKILL (which it cannot catch).
Why a parent watchdog rather than PR_SET_PDEATHSIG on torchrun: the death signal reaches only the
process it is set on. torchrun would end its ranks, but not what the ranks started in sessions of
their own, nor anything if torchrun itself is stuck or killed; and setting it needs a preexec_fn,
unsafe once the supervisor's log threads run. This process is a child subreaper above the
supervisor: when the supervisor dies, the kernel re-parents every process of the job — whatever
its session or group — to us, so we see and end them all, with no PID list that could be stale.
If this process dies too, the registry's record of the job's processes lets `jobs describe`,
`list` and `stop` end what is left (launcher.local.backend).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

FAILURE_GRACE_SECONDS = 3.0  # the supervisor is gone: nothing will be saved, end the rest quickly


def command(job_dir: Path) -> list[str]:
    """What the submitter starts (detached): this watchdog, which starts the supervisor."""
    return [sys.executable, "-m", "sagelaunch.launcher.local.watchdog", str(job_dir)]


def supervisor_command(job_dir: Path) -> list[str]:
    return [sys.executable, "-m", "sagelaunch.launcher.local.supervisor", str(job_dir)]


def main(argv: list[str]) -> int:
    from sagelaunch.launcher.local import (
        processes,  # lazy: the watchdog starts the supervisor before anything else loads
    )

    job_dir = Path(argv[0])
    processes.become_subreaper()  # before the supervisor starts anything
    supervisor = subprocess.Popen(supervisor_command(job_dir), stdin=subprocess.DEVNULL,
                                  start_new_session=True)  # stdout/stderr: ours, logs/supervisor.log
    # a signal meant for the job (sent to us) is a stop request
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda signum, _: supervisor.send_signal(signum))
    import psutil

    from sagelaunch.jobspec.contract import (
        TERMINAL_STATUSES,  # lazy: the watchdog starts the supervisor before anything else loads
    )
    from sagelaunch.launcher.local import (
        registry,  # lazy: the watchdog starts the supervisor before anything else loads
    )

    name = job_dir.name  # the job folder is named after the job (launcher.local.registry.job_dir)
    found = processes.identity(psutil.Process(supervisor.pid))
    if found is not None:
        registry.set_supervisor(name, found[0], found[1])
    code = supervisor.wait()
    tracker = processes.ProcessTracker()
    tracker.refresh(os.getpid())
    left = {proc.pid for proc in tracker.alive()}
    processes.terminate(tracker, os.getpid(), FAILURE_GRACE_SECONDS)
    # without a subreaper (outside Linux) orphans are not ours to see: end what the supervisor recorded
    left.update(processes.end_recorded(registry.processes(name), FAILURE_GRACE_SECONDS))
    if registry.get(name)["TrainingJobStatus"] in TERMINAL_STATUSES:
        return 0
    from sagelaunch.launcher.local.failure import (
        describe_exit,  # lazy: the watchdog starts the supervisor before anything else loads
    )

    reason = (f"InternalServerError: the job's supervisor process {describe_exit(code)} before the job ended"
              + (f"; sagelaunch ended the {len(left)} process(es) it left running" if left else ""))
    try:
        with open(job_dir / "logs" / "job.log", "a", encoding="utf-8") as log:
            log.write(f"[sagelaunch] {reason}\n")
    except OSError:
        pass
    registry.fail_unless_ended(name, reason)
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
