"""Errors the command line shows as one line with exit code 2 (bad input), wherever they are raised."""

from __future__ import annotations


class UserError(Exception):
    """A bad argument: one line, exit code 2, no traceback."""


class PluginError(UserError, ValueError):
    """A plugin (an arena or an adapter from an entry point) that cannot be loaded."""
