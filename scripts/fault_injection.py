"""Fault injection for local jobs and endpoints (issue 32): run N jobs, break them, then check what is promised.

    python scripts/fault_injection.py [--jobs 100] [--seed 0] [--concurrency 3] [--workdir DIR]

Every job reads (and tries to change) one shared user folder as its channel — File or FastFile mode, at random — and
writes a model naming its owner. Each job gets one fault, at random:
  none               runs to the end
  kill-supervisor    SIGKILL to the job's supervisor while the rank runs
  kill-rank          SIGKILL to the rank
  kill-caller        SIGKILL to the process that submitted the job (it waits on it)
  disk-full          output_path on a 1 MiB tmpfs, a 3 MiB model (root: mount; else the fault is skipped, said)
  read-only-output   output_path bind-mounted read-only while the rank runs (root: mount; else skipped, said)
  same-name          two submissions of one job name at the same moment
  other-registry     the name again from another registry (SAGELAUNCH_HOME) with the same output_path, after it ended
  deploy-same-name   two deploys of one endpoint name at the same moment, then `endpoints stop`
Afterwards, the promises (exit 1 when one is broken): every user file byte-identical to before; no model.tar.gz
replaced another job's (each names its owner); the registry lists every job, each in a final status with the
outcome its fault implies; nothing runs (no supervisor, watchdog, rank or endpoint is left).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import signal
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

FAULTS = ("none", "kill-supervisor", "kill-rank", "kill-caller", "disk-full", "read-only-output", "same-name",
          "other-registry", "deploy-same-name")
COMPLETES = {"none", "kill-caller", "same-name", "other-registry"}
DEADLINE_S = 300.0
JOB_SCRIPT = '''
import argparse, os, time
from pathlib import Path
parser = argparse.ArgumentParser()
parser.add_argument("--marks"); parser.add_argument("--owner"); parser.add_argument("--model_bytes", type=int, default=64)
args, _ = parser.parse_known_args()
channel = Path(os.environ["SM_CHANNEL_TRAIN"])
for path in sorted(channel.rglob("*")):  # what a careless preprocessing script does to its input
    try:
        if path.is_file():
            with open(path, "ab") as handle:
                handle.write(b"changed by a job")
            if path.suffix == ".tmp":
                path.unlink()
    except OSError:
        pass
try:
    (channel / "added-by-job.txt").write_text("x")
except OSError:
    pass
Path(args.marks, "started").write_text(str(os.getpid()))
deadline = time.monotonic() + 120
while not Path(args.marks, "go").exists() and time.monotonic() < deadline:
    time.sleep(0.05)
Path(os.environ["SM_MODEL_DIR"], "owner.txt").write_text(args.owner)
Path(os.environ["SM_MODEL_DIR"], "weights.bin").write_bytes(os.urandom(args.model_bytes))
'''
ECHO_HANDLER = '''
import json
def model_fn(model_dir): return "echo"
def input_fn(body, content_type): return json.loads(body)
def predict_fn(data, model): return data
def output_fn(prediction, accept): return json.dumps(prediction)
'''
CALLER = ("import sys; from sagelaunch.jobspec.spec import TrainingJobSpec; "
          "from sagelaunch.launcher.backends import submit; "
          "submit(TrainingJobSpec.model_validate_json(sys.stdin.read()), wait=True, logs=False)")


def snapshot(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "dir"
            for p in sorted(root.rglob("*"))}


def mount(*args: str) -> bool:
    return subprocess.run(["mount", *args], capture_output=True, timeout=60).returncode == 0


def unmount(path: Path) -> None:
    subprocess.run(["umount", "-l", str(path)], capture_output=True, timeout=60)


class Run:
    def __init__(self, workdir: Path, seed: int):
        self.workdir, self.seed = workdir, seed
        self.data, self.code, self.outputs = workdir / "user-data", workdir / "code", workdir / "outputs"
        self.model = workdir / "echo-model"
        self.accepted: dict[str, str] = {}  # job name → fault
        self.notes: list[str] = []
        self.lock = threading.Lock()
        self.can_mount = os.geteuid() == 0 and mount("-t", "tmpfs", "-o", "size=1m", "tmpfs", str(self._probe()))
        if self.can_mount:
            unmount(workdir / "mount-probe")

    def _probe(self) -> Path:
        (self.workdir / "mount-probe").mkdir(parents=True, exist_ok=True)
        return self.workdir / "mount-probe"

    def lay_out(self) -> None:
        (self.data / "nested").mkdir(parents=True)
        for index in range(12):
            suffix = ".tmp" if index % 4 == 0 else ".csv"
            (self.data / ("nested" if index % 2 else "") / f"part-{index}{suffix}").write_bytes(os.urandom(4096))
        self.code.mkdir()
        (self.code / "fault_job.py").write_text(JOB_SCRIPT)
        (self.model / "code").mkdir(parents=True)
        (self.model / "code" / "inference.py").write_text(ECHO_HANDLER)

    def spec(self, name: str, marks: Path, output_path: Path, model_bytes: int = 64, fast_file: bool = False):
        from sagelaunch.jobspec.spec import InputChannel, spec_from_fields

        marks.mkdir(parents=True, exist_ok=True)
        channel = InputChannel(name="train", uri=str(self.data), input_mode="FastFile" if fast_file else "File",
                               mode_given=fast_file)
        return spec_from_fields(job_name=name, framework="pytorch", framework_version="2.13", py_version="py311",
                                image_uri="local-fault-injection", region="us-west-2", entry_point="fault_job.py",
                                source_dir=str(self.code), instance_type="local", output_path=str(output_path),
                                inputs=(channel,), hyperparameters={"marks": str(marks), "owner": name,
                                                                     "model_bytes": model_bytes})

    # --- one scenario ---------------------------------------------------------------------------------
    def scenario(self, index: int, fault: str, fast_file: bool) -> None:
        from sagelaunch.launcher.local import registry
        from sagelaunch.launcher.backends import submit

        name = f"fi{self.seed}-{index:03d}-{fault}"
        marks = self.workdir / "marks" / name
        if fault == "deploy-same-name":
            return self.deploys(name)
        if fault in ("disk-full", "read-only-output") and not self.can_mount:
            with self.lock:
                self.notes.append(f"{name}: skipped (mounting needs root with CAP_SYS_ADMIN)")
            fault = "none"
        output = self.outputs
        if fault == "disk-full":
            output = self.workdir / "full" / name
            output.mkdir(parents=True)
            mount("-t", "tmpfs", "-o", "size=1m,mode=0755", "tmpfs", str(output))
        elif fault == "read-only-output":
            output = self.workdir / "read-only" / name
            output.mkdir(parents=True)
            # a job with a read-only channel view runs in its own mount namespace: where the machine's root mount
            # is private (containers), a mount made after it started does not reach it (README, Reliability)
            fast_file = False
        spec = self.spec(name, marks, output, 3 * 2**20 if fault == "disk-full" else 64, fast_file)
        try:
            caller = None
            if fault == "kill-caller":
                caller = subprocess.Popen([sys.executable, "-c", CALLER], stdin=subprocess.PIPE, text=True,
                                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                caller.stdin.write(spec.model_dump_json())
                caller.stdin.close()
            elif fault == "same-name":
                self.twice(spec)
            else:
                submit(spec, wait=False, logs=False)
            with self.lock:
                self.accepted[name] = fault
            if not self.wait_for(marks / "started", name):
                return
            if fault == "kill-supervisor":
                os.kill(registry.supervisor(name)[0], signal.SIGKILL)
            elif fault == "kill-rank":
                os.kill(int((marks / "started").read_text()), signal.SIGKILL)
            elif fault == "kill-caller":
                caller.kill()
                caller.wait()
            elif fault == "read-only-output":
                mount("--bind", str(output), str(output))
                mount("-o", "remount,bind,ro", str(output))
            (marks / "go").touch()
            self.final(name)
            if fault == "other-registry":
                self.other_registry(spec)
        finally:
            if fault in ("disk-full", "read-only-output"):
                self.final(name)
                unmount(output)

    def twice(self, spec) -> None:
        """Two submissions of one name at the same moment: exactly one is accepted."""
        from sagelaunch.launcher.backends import submit

        gate, outcomes = threading.Barrier(2), []

        def one() -> None:
            gate.wait()
            try:
                submit(spec, wait=False, logs=False)
                outcomes.append("accepted")
            except ValueError as error:
                outcomes.append(f"refused: {error}")

        threads = [threading.Thread(target=one) for _ in range(2)]
        [t.start() for t in threads]
        [t.join() for t in threads]
        if sorted(o.split(":")[0] for o in outcomes) != ["accepted", "refused"]:
            with self.lock:
                self.notes.append(f"BROKEN {spec.job_name}: two submissions of one name gave {outcomes}")

    def other_registry(self, spec) -> None:
        """The same name from another registry, same output_path: refused, the first job's model kept."""
        env = dict(os.environ, SAGELAUNCH_HOME=str(self.workdir / "another-home"))
        done = subprocess.run([sys.executable, "-c", CALLER], input=spec.model_dump_json(), text=True, env=env,
                              capture_output=True, timeout=DEADLINE_S)
        if done.returncode == 0 or "already holds another job's outputs" not in done.stderr:
            with self.lock:
                self.notes.append(f"BROKEN {spec.job_name}: a second registry's job of that name was not refused")

    def deploys(self, name: str) -> None:
        from sagelaunch.launcher.local.serving import endpoint_registry
        from sagelaunch.launcher.local.serving.endpoint import LocalEndpoint

        gate, served, refused = threading.Barrier(2), [], []

        def one() -> None:
            gate.wait()
            try:
                served.append(LocalEndpoint(self.model, name, detach=True).start())
            except ValueError as error:
                refused.append(str(error))

        threads = [threading.Thread(target=one) for _ in range(2)]
        [t.start() for t in threads]
        [t.join() for t in threads]
        listed = [r.name for r in endpoint_registry.live_endpoints() if r.name == name]
        if len(served) != 1 or len(refused) != 1 or listed != [name]:
            with self.lock:
                self.notes.append(f"BROKEN {name}: two deploys served {len(served)}, listed {listed}")
        if endpoint_registry.find(name):
            endpoint_registry.stop(name)
        for endpoint in served:
            endpoint.stop()

    def wait_for(self, path: Path, name: str) -> bool:
        from sagelaunch.launcher.local import registry

        deadline = time.monotonic() + DEADLINE_S
        while not path.exists():
            try:
                if registry.get(name)["TrainingJobStatus"] in registry.TERMINAL_STATUSES:
                    return False
            except KeyError:
                pass  # the caller process has not recorded it yet
            if time.monotonic() > deadline:
                return False
            time.sleep(0.05)
        return True

    def final(self, name: str) -> dict:
        from sagelaunch.launcher.local import registry

        deadline = time.monotonic() + DEADLINE_S
        while time.monotonic() < deadline:
            try:
                record = registry.get(name)
                if record["TrainingJobStatus"] in registry.TERMINAL_STATUSES:
                    return record
            except KeyError:
                pass
            time.sleep(0.1)
        return registry.get(name)

    # --- the promises ------------------------------------------------------------------------------------
    def check(self, before: dict[str, str]) -> list[str]:
        import psutil

        from sagelaunch.launcher.local import registry
        from sagelaunch.launcher.local.serving import endpoint_registry

        broken = [n for n in self.notes if n.startswith("BROKEN")]
        after = snapshot(self.data)
        if after != before:
            changed = sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))
            broken.append(f"user files changed: {changed[:10]}")
        archives = [p for p in self.workdir.rglob("model.tar.gz") if "jobs" not in p.parts]
        for archive in archives:
            with tarfile.open(archive) as tar:  # a job ended before its model: its own archive, empty
                owner = tar.extractfile("owner.txt").read().decode() if "owner.txt" in tar.getnames() else None
            if owner not in (None, archive.parent.parent.name):
                broken.append(f"{archive}: written by {owner}, not its job")
        records = {r["TrainingJobName"]: r for r in registry.list_jobs()}
        outcomes: Counter = Counter()
        for name, fault in sorted(self.accepted.items()):
            record = records.get(name)
            if record is None:
                broken.append(f"{name}: not in the registry")
                continue
            status = record["TrainingJobStatus"]
            outcomes[(fault, status)] += 1
            if status not in registry.TERMINAL_STATUSES:
                broken.append(f"{name}: still {status}")
            elif (status == "Completed") != (fault in COMPLETES):
                broken.append(f"{name} ({fault}): {status} — {record.get('FailureReason', '')[:160]}")
        deadline = time.monotonic() + 30  # the watchdogs of jobs just ended finish their last sweep
        mine = {os.getpid(), *(p.pid for p in psutil.Process().parents())}  # this script and whoever runs it
        while (alive := [p.pid for p in psutil.process_iter(["cmdline"]) if p.pid not in mine
                         and any(str(self.workdir) in part for part in (p.info["cmdline"] or []))]) and \
                time.monotonic() < deadline:
            time.sleep(0.5)
        if alive:
            broken.append("still running: " + "; ".join(f"{pid} {' '.join(psutil.Process(pid).cmdline()[:4])}"
                                                         for pid in alive if psutil.pid_exists(pid)))
        if endpoint_registry.live_endpoints():
            broken.append(f"endpoints still served: {[r.name for r in endpoint_registry.live_endpoints()]}")
        print(f"{len(self.accepted)} jobs, {len(archives)} model archives checked, by fault and final status:")
        for (fault, status), count in sorted(outcomes.items()):
            print(f"  {fault:>18} → {status}: {count}")
        return broken


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--concurrency", type=int, default=3)
    parser.add_argument("--workdir", type=Path, default=None)
    args = parser.parse_args(argv)
    workdir = Path(args.workdir or tempfile.mkdtemp(prefix="sagelaunch-faults-")).resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    os.environ["SAGELAUNCH_HOME"] = str(workdir / "home")
    run = Run(workdir, args.seed)
    run.lay_out()
    before = snapshot(run.data)
    chooser = random.Random(args.seed)
    plan = [(i, FAULTS[i % len(FAULTS)] if i < len(FAULTS) else chooser.choice(FAULTS), chooser.random() < 0.5)
            for i in range(args.jobs)]  # every fault at least once, then at random
    started = time.monotonic()
    with ThreadPoolExecutor(max_workers=args.concurrency) as pool:
        for future in [pool.submit(run.scenario, *job) for job in plan]:
            future.result()
    broken = run.check(before)
    for note in run.notes:
        print(f"  note: {note}")
    print(f"{args.jobs} scenarios in {time.monotonic() - started:.0f} s (seed {args.seed}, workdir {workdir})")
    print("every promise kept" if not broken else f"{len(broken)} promise(s) broken:")
    for line in broken:
        print(f"  BROKEN: {line}")
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
