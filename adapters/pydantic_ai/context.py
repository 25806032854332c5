"""The `run_context` channel (the run_context arena) in pydantic-ai's terms: the application's context is the run's
`deps` (`agent.run(..., deps=...)`, at the start and again on every resume with the paused history), and the agent's
instructions are a function of it (`Agent(instructions=callable)`: pydantic-ai calls it with the `RunContext`, whose
`deps` are the run's, at each model request)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from arena.for_adapters import LegContext
from arena_builtins.arenas.run_context.channel import instructions_for, run_context_of


def instructions(ctx: LegContext) -> str | Callable[[Any], str]:
    """The agent's instructions: the run's own, or, in a run with a context, written from the run's `deps`."""
    if run_context_of(ctx) is None:
        return ctx.instructions
    base = ctx.instructions

    def written(run: Any) -> str:  # pydantic_ai.RunContext: `deps` is what this run was given
        return instructions_for(run.deps, base)

    return written


def run_kwargs(ctx: LegContext) -> dict[str, Any]:
    """`deps=` for this leg's run, where the run has a context (nothing otherwise: other arenas' runs as before)."""
    context = run_context_of(ctx)
    return {} if context is None else {"deps": context}
