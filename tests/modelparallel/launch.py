"""Start one torchrun launch of area_worker.py for a list of groups of cases and read each group's per-rank JSON
results as soon as that group ends."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import time
from pathlib import Path

from scripts.torchrun_command import torchrun_command

WORKER = Path(__file__).with_name("area_worker.py")
GROUP_ERROR = "group_error"  # area_worker.GROUP_ERROR: a group whose worker raised on a rank


def first_failure(output: str, lines: int = 60) -> str:
    """The first traceback the ranks printed: the root cause, which the other ranks' timeouts and torchrun's summary
    that follow it would push out of a tail."""
    start = output.find("Traceback (most recent call last)")
    if start < 0:
        return "(no traceback in the output)"
    line_start = output.rfind("\n", 0, start) + 1
    return "\n".join(output[line_start:].splitlines()[:lines])


class Launch:
    """One torchrun launch of area_worker.py running `groups` ({"key", "worker", "cases"}) one after another."""

    def __init__(self, groups: list[dict], world: int, out_dir: Path, timeout: float):
        out_dir.mkdir(parents=True, exist_ok=True)
        groups_file = out_dir / "groups.json"
        groups_file.write_text(json.dumps(groups))
        # collectives wait up to 300 s for a peer: generous, as 4 ranks share 2 busy cores
        cmd, env = torchrun_command(WORKER, [str(groups_file), str(out_dir)], world, smp_timeout_s=300)
        self.world, self.out_dir, self.log = world, out_dir, out_dir / "output.log"
        self.keys = [group["key"] for group in groups]
        with open(self.log, "w") as log:  # a file, not a pipe: nobody reads while the ranks run
            self.proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
        self.deadline = time.monotonic() + timeout
        self.timeout = timeout

    def ranks(self, key: str) -> list[dict]:
        """Each rank's results for group `key`, once every rank has written them."""
        files = [self.out_dir / key / f"rank{r}.json" for r in range(self.world)]
        while True:
            done = [json.loads(f.read_text()) for f in files if f.exists()]
            failed = [r for r in done if GROUP_ERROR in r]
            if failed:
                raise AssertionError(f"group {key} failed on a rank of the {self.world}-rank launch: "
                                     f"{failed[0][GROUP_ERROR]}\n{failed[0]['traceback']}")
            if len(done) == self.world:
                if key == self.keys[-1]:  # the last group: reap the launch now, not at the session's end
                    self.stop()
                return done
            if self.proc.poll() is not None:
                output = self.log.read_text()
                raise AssertionError(f"torchrun with {self.world} ranks ended ({self.proc.returncode}) without "
                                     f"group {key}'s results:\n{first_failure(output)}\n…\n{output[-3000:]}")
            if time.monotonic() > self.deadline:
                self.stop()
                output = self.log.read_text()
                raise AssertionError(f"torchrun with {self.world} ranks did not finish group {key} in "
                                     f"{self.timeout}s:\n{first_failure(output)}\n…\n{output[-3000:]}")
            time.sleep(0.5)

    def stop(self) -> None:
        """End the launch: one whose groups have all ended is let exit (its ranks tear down the process group),
        one with groups nobody waited for (only some tests selected, a failure) is killed."""
        last = self.out_dir / self.keys[-1] / f"rank{self.world - 1}.json"
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=120 if last.exists() else 0)
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, 9)  # torchrun and its workers: the session this launch started
        self.proc.wait()
