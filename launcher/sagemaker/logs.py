"""CloudWatch Logs of a training job: every `algo-N` stream, merged in time order, `[algo-N]` prefix.

SageMaker writes one stream per host (and per restart) named `<job>/algo-N-<epoch>` into the
log group /aws/sagemaker/TrainingJobs. `JobLogTail.poll()` returns the lines that arrived since
the last call; calling it between DescribeTrainingJob polls streams a running job.
"""

from __future__ import annotations

import re
from collections import deque
from dataclasses import dataclass, field

from sagelaunch.launcher.common.aws.clients import client
from sagelaunch.launcher.common.aws.errors import error_code, translate

TRAINING_LOG_GROUP = "/aws/sagemaker/TrainingJobs"
_HOST_SUFFIX = re.compile(r"-\d+$")


def host_of(stream_name: str) -> str:
    """'job/algo-2-1700000000' → 'algo-2'."""
    return _HOST_SUFFIX.sub("", stream_name.rsplit("/", 1)[-1])


@dataclass
class JobLogTail:
    job_name: str
    region: str | None = None
    log_group: str = TRAINING_LOG_GROUP
    _tokens: dict[str, str] = field(default_factory=dict)
    last_lines: deque = field(default_factory=lambda: deque(maxlen=50))  # kept for a failure message

    def streams(self) -> list[str]:
        logs = client("logs", self.region)
        names, token = [], None
        with translate(f"list the log streams of {self.job_name}"):
            while True:
                kwargs = {"logGroupName": self.log_group, "logStreamNamePrefix": self.job_name + "/"}
                if token:
                    kwargs["nextToken"] = token
                try:
                    page = logs.describe_log_streams(**kwargs)
                except Exception as exc:
                    if error_code(exc) == "ResourceNotFoundException":  # no job has logged yet
                        return []
                    raise
                names += [s["logStreamName"] for s in page.get("logStreams", [])]
                token = page.get("nextToken")
                if not token:
                    break
        return sorted(names)

    def _new_events(self, stream: str) -> list[dict]:
        logs = client("logs", self.region)
        events = []
        while True:
            kwargs = {"logGroupName": self.log_group, "logStreamName": stream, "startFromHead": True}
            if stream in self._tokens:
                kwargs["nextToken"] = self._tokens[stream]
            page = logs.get_log_events(**kwargs)
            events += page.get("events", [])
            token = page.get("nextForwardToken")
            # CloudWatch signals "no more for now" by handing back the token it was given
            if not token or token == kwargs.get("nextToken"):
                break
            self._tokens[stream] = token
            if not page.get("events"):
                break
        return events

    def poll(self) -> list[str]:
        """New lines from every host since the last poll, in time order."""
        merged = []
        with translate(f"read the logs of {self.job_name}"):
            for order, stream in enumerate(self.streams()):
                host = host_of(stream)
                merged += [(e["timestamp"], order, i, host, e["message"]) for i, e in enumerate(self._new_events(stream))]
        merged.sort()
        lines = [
            f"[{host}] {line}" for _, _, _, host, message in merged for line in message.rstrip("\n").split("\n")
        ]
        self.last_lines.extend(lines)
        return lines
