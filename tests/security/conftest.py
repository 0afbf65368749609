"""A private SAGELAUNCH_HOME per module, as the local backend's tests have (local jobs register there)."""

from tests.local.conftest import sagelaunch_home  # noqa: F401 - the autouse fixture, shared
