"""The framework versions SageMaker's data-parallel library (smdistributed dataparallel) accepts are v2's own list
(`sagemaker.fw_utils.SM_DATAPARALLEL_SUPPORTED_FRAMEWORK_VERSIONS`, the source support_matrix.json names), read from
the real SDK v2: AWS's smddp MNIST notebook asks for PyTorch 1.11.0, which an older copy of the list refused."""

from __future__ import annotations

import pytest

from sagelaunch.jobspec import catalog
from tests.conftest import RUN_ENV
from tests.fixtures.sdk_v2 import SDK_V2_PYTHON

pytestmark = pytest.mark.slow  # starts the SDK v2 interpreter


def test_the_dataparallel_versions_are_v2s():
    import json
    import subprocess

    code = ("import json; from sagemaker.fw_utils import SM_DATAPARALLEL_SUPPORTED_FRAMEWORK_VERSIONS as V; "
            "print(json.dumps(V))")
    out = subprocess.run([str(SDK_V2_PYTHON), "-c", code], capture_output=True, text=True, check=True,
                         env={**RUN_ENV, "SAGEMAKER_SUPPRESS_V2_WARNING": "1", "PATH": "/usr/bin:/bin"}).stdout
    v2 = json.loads(out.strip().splitlines()[-1])
    ours = catalog.matrix()["distribution"]["dataparallel"]["versions"]
    assert ours == {"pytorch": v2["pytorch"], "tensorflow": v2["tensorflow"]}
