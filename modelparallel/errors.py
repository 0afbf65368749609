"""Errors raised by modelparallel; both are ValueError/RuntimeError so callers can catch the usual types."""


class SMPValidationError(ValueError):
    """A configuration or usage mistake: the message names the setting, the value, what is allowed and a fix."""


class SMPRuntimeError(RuntimeError):
    """Something went wrong while running (another rank failed, a collective could not complete)."""
