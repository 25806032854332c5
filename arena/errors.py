"""arena's errors, and its warnings (one line on stderr; the command goes on).

Every error arena raises on purpose is an `ArenaError`. Two kinds matter to a caller:
- `UserError`: bad input (an unknown arena or adapter, a bad path, a broken plugin). The command line
  shows it as one line, exit code 2.
- `SetupError`: the harness could not measure (an adapter's environment could not be built). The
  command line shows it and exits 1; nothing about the framework is concluded from it.
What an adapter or its framework does wrong is never raised: it is measured, as the item's result
(failed checks, or `errored` when it could not be measured at all).
"""

from __future__ import annotations

import sys


def warn(message: str) -> None:
    print(f"arena: warning: {message}", file=sys.stderr)


class ArenaError(Exception):
    """The base of every error arena raises on purpose."""


class UserError(ArenaError):
    """A bad argument: one line, exit code 2, no traceback."""


class SetupError(ArenaError):
    """The harness's side could not be set up (an environment, a process): nothing was measured."""


class InvalidValue(ArenaError, ValueError):
    """A value arena cannot take (a malformed file, a misdeclared arena, check or channel), named in one line. Still a
    `ValueError`, as before it had a class of its own, for the callers (and pydantic's validators) that catch that."""


class NotFound(ArenaError, LookupError):
    """A name arena has nothing for (an arena, an item, a check, a leg's approval tool). Still a `LookupError`."""


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
