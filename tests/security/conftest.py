"""A private SAGELAUNCH_HOME per module, as the local backend's tests have (local jobs register there), and a
fresh bucket on the session's moto server."""

import boto3
import pytest

from tests.local.conftest import sagelaunch_home, unique  # noqa: F401 - the autouse fixture, shared


@pytest.fixture
def bucket(moto_server):
    """(S3 client, name of a new bucket of this test's own)."""
    s3 = boto3.client("s3", region_name="us-west-2")
    name = unique("sec")
    s3.create_bucket(Bucket=name, CreateBucketConfiguration={"LocationConstraint": "us-west-2"})
    return s3, name
