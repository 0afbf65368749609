"""Rich output when Rich is installed (the [cli] extra), plain prints otherwise."""

from __future__ import annotations

import contextlib
import sys


class _PlainStatus:
    def update(self, text: str) -> None:  # a live line needs a terminal library; plain mode skips it
        pass


class _PlainConsole:
    def print(self, text: str = "", **_: object) -> None:
        print(text, file=sys.stdout, flush=True)

    @contextlib.contextmanager
    def status(self, text: str, **_: object):
        yield _PlainStatus()


def make_console(stderr: bool = False):
    try:
        from rich.console import Console
    except ImportError:  # pragma: no cover - rich ships with every extra we test
        return _PlainConsole()
    return Console(stderr=stderr, highlight=False, soft_wrap=True)
