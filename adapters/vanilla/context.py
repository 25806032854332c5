"""The `run_context` channel (the run_context arena) in vanilla's terms: the system message of each request is
written from the leg's run context, so the context given on a resume is the one the model sees (the transcript kept
in the paused state holds the plain instructions, never a copy of the context)."""

from __future__ import annotations

from typing import Any

from arena.for_adapters import LegContext
from arena_builtins.arenas.run_context.channel import instructions_for, run_context_of


def written(messages: list[dict[str, Any]], ctx: LegContext) -> list[dict[str, Any]]:
    """The messages as sent: the first system message written from this leg's run context, if the run has one."""
    context = run_context_of(ctx)
    if context is None or not messages or messages[0].get("role") != "system":
        return messages
    return [{**messages[0], "content": instructions_for(context, messages[0]["content"])}, *messages[1:]]
