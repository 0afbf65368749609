"""The framework versions SageMaker's data-parallel library (smdistributed dataparallel) accepts are v2's own list
(`sagemaker.fw_utils.SM_DATAPARALLEL_SUPPORTED_FRAMEWORK_VERSIONS`, the source support_matrix.json names), read from
the real SDK v2: AWS's smddp MNIST notebook asks for PyTorch 1.11.0, which an older copy of the list refused."""

from __future__ import annotations

import pytest

from sagelaunch.jobspec import catalog

pytestmark = pytest.mark.slow  # asks the SDK v2 interpreter


def test_the_dataparallel_versions_are_v2s(sdk_v2_alone):
    v2 = sdk_v2_alone("from sagemaker.fw_utils import SM_DATAPARALLEL_SUPPORTED_FRAMEWORK_VERSIONS as RESULT")
    ours = catalog.matrix()["distribution"]["dataparallel"]["versions"]
    assert ours == {"pytorch": v2["pytorch"], "tensorflow": v2["tensorflow"]}
