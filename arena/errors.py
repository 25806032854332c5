"""Errors the command line shows as one line with exit code 2 (bad input), wherever they are raised,
and warnings: one line on stderr, the command goes on."""

from __future__ import annotations

import sys


def warn(message: str) -> None:
    print(f"arena: warning: {message}", file=sys.stderr)


class UserError(Exception):
    """A bad argument: one line, exit code 2, no traceback."""


class PluginError(UserError, ValueError):
    """A plugin (an arena or an adapter from an entry point) that cannot be loaded."""


def exited_at_import(module: str, exc: SystemExit) -> str:
    """What to say of a module (a plugin) that called sys.exit while it was imported."""
    return f"importing {module!r} called sys.exit({exc.code!r})"


def importing(exc: BaseException) -> str | None:
    """The module whose import raised `exc`: the innermost module body on its traceback (None: no import did)."""
    tb, module = exc.__traceback__, None
    while tb is not None:
        if tb.tb_frame.f_code.co_name == "<module>":
            module = tb.tb_frame.f_globals.get("__name__")
        tb = tb.tb_next
    return module if isinstance(module, str) else None
