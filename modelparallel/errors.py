"""Errors raised by modelparallel; both are ValueError/RuntimeError so callers can catch the usual types, and
members of sagelaunch's family (jobspec.errors)."""

from sagelaunch.jobspec.errors import SagelaunchError, SagelaunchRuntimeError



class SMPValidationError(SagelaunchError):
    """A configuration or usage mistake: the message names the setting, the value, what is allowed and a fix."""


class SMPRuntimeError(SagelaunchRuntimeError):
    """Something went wrong while running (another rank failed, a collective could not complete)."""
