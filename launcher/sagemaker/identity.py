"""Who is calling: the execution role SDK v2's `get_execution_role()` finds outside a notebook instance.

v2 (Session.get_caller_identity_arn): the caller's ARN from STS; an assumed role's session ARN
(arn:aws:sts::<account>:assumed-role/<name>/<session>) becomes the role's ARN, with its path from IAM GetRole
(kept without a path when IAM may not be read); a caller that is not a role is an error.
"""

from __future__ import annotations

import re

from sagelaunch.launcher.common.aws.clients import client
from sagelaunch.launcher.common.aws.errors import error_code
from sagelaunch.jobspec.errors import SagelaunchError

_ASSUMED_ROLE = re.compile(r"^(?P<partition>.+)sts::(?P<account>\d+):assumed-role/(?P<name>.+?)/.*$")


def caller_arn(region: str) -> str:
    return client("sts", region).get_caller_identity()["Arn"]


def execution_role(region: str) -> str:
    arn = caller_arn(region)
    assumed = _ASSUMED_ROLE.match(arn)
    if assumed:
        name = assumed["name"]
        try:
            return client("iam", region).get_role(RoleName=name)["Role"]["Arn"]
        except Exception as exc:
            if not error_code(exc):
                raise
            path = "service-role/" if "AmazonSageMaker-ExecutionRole" in name else ""  # v2's console-role guess
            return f"{assumed['partition']}iam::{assumed['account']}:role/{path}{name}"
    if ":role/" in arn:
        return arn
    raise SagelaunchError(
        f"get_execution_role(): the current AWS identity is not a role: {arn}, so it cannot be a SageMaker "
        "execution role; allowed: credentials of an assumed role — or pass role='arn:aws:iam::<account>:role/<name>' "
        "to the estimator yourself",
        field="role", value=arn, allowed="credentials of an assumed role",
        fix="pass role='arn:aws:iam::<account>:role/<name>' to the estimator yourself",
    )
