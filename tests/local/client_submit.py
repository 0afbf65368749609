"""A user's process: submits the spec in argv[1] (JSON) and waits with live logs, as a notebook cell would."""

import sys
from pathlib import Path

from launcher.backends import submit
from jobspec.spec import TrainingJobSpec

spec = TrainingJobSpec.model_validate_json(Path(sys.argv[1]).read_text())
submit(spec, wait=True, logs=True)
