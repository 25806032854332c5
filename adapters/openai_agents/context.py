"""The `run_context` channel (the run_context arena) in the SDK's terms: the application's context is the run's
`context=` on `Runner.run` / `Runner.run_streamed`, at the start and again on every resume with the RunState
(`Runner.run(agent, state, context=...)`, docs/running_agents.md), and the agent's instructions are a function of it
(`Agent(instructions=callable)`: the SDK calls it with the `RunContextWrapper` at each model call)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from arena.for_adapters import LegContext
from arena_builtins.arenas.run_context.channel import instructions_for, run_context_of


def instructions(ctx: LegContext) -> str | Callable[[Any, Any], str]:
    """The agent's instructions: the run's own, or, in a run with a context, written from the context the SDK hands
    each model call (`wrapper.context`: whatever the leg's `context=` became in the run)."""
    if run_context_of(ctx) is None:
        return ctx.instructions
    base = ctx.instructions

    def written(wrapper: Any, agent: Any) -> str:
        return instructions_for(wrapper.context, base)

    return written


def run_kwargs(ctx: LegContext) -> dict[str, Any]:
    """`context=` for this leg's run, where the run has one (nothing otherwise: other arenas' runs as before)."""
    context = run_context_of(ctx)
    return {} if context is None else {"context": context}
