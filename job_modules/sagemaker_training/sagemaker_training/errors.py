"""The toolkit's exception names (`sagemaker_training.errors`), so a script's `except errors.ExecuteUserScriptError`
catches what the stand-in's entry_point raises."""

from __future__ import annotations

from typing import Any


class ClientError(Exception):
    """A user error, as the toolkit separates them from its own."""


class _CalledProcessError(ClientError):
    """A command that exited non-zero: its command line, exit code and (when captured) its stderr."""

    def __init__(self, cmd: Any, return_code: Any = None, output: Any = None, info: Any = None):
        super().__init__()
        self.cmd, self.return_code, self.output, self.extra_info = cmd, str(return_code), output, info

    def __str__(self) -> str:
        output = self.output.decode("utf-8") if isinstance(self.output, bytes) else (self.output or "")
        extra = f'\nExtraInfo "{self.extra_info}"' if self.extra_info is not None else ""
        return (f'{type(self).__name__}:\nExitCode {self.return_code}\nErrorMessage "{output}"{extra}\n'
                f'Command "{self.cmd}"').strip()


class InstallModuleError(_CalledProcessError):
    """The entry point's package failed to install."""


class InstallRequirementsError(_CalledProcessError):
    """requirements.txt failed to install."""


class ImportModuleError(ClientError):
    """The entry point's module failed to import."""


class ExecuteUserScriptError(_CalledProcessError):
    """The user's entry point exited non-zero."""


class ChannelDoesNotExistError(Exception):
    def __init__(self, channel_name: str):
        super().__init__(f"Channel {channel_name} is not a valid channel")
