"""A user's process: submits the spec in argv[1] (JSON) and waits with live logs, as a notebook cell would."""

import signal
import sys
from pathlib import Path

from sagelaunch.launcher.backends import submit
from sagelaunch.jobspec.spec import TrainingJobSpec

# Ctrl-C raises KeyboardInterrupt, as in a terminal, even when the test run that started this process
# was itself started in the background with SIGINT ignored (an ignored signal stays ignored across exec)
signal.signal(signal.SIGINT, signal.default_int_handler)
spec = TrainingJobSpec.model_validate_json(Path(sys.argv[1]).read_text())
submit(spec, wait=True, logs=True)
