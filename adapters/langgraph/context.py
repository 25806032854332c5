"""The `run_context` channel (the run_context arena) in LangGraph's terms: the application's context is the run's
`context=` on `ainvoke` / `astream` (LangGraph's runtime context, `Runtime.context`), at the start and again with
every `Command(resume=...)`, and the agent's prompt is written from it by langchain's `@dynamic_prompt` middleware
(`request.runtime.context`, at each model call)."""

from __future__ import annotations

from typing import Any

from arena.for_adapters import LegContext
from arena_builtins.arenas.run_context.channel import instructions_for, run_context_of


def prompt_middleware(ctx: LegContext) -> list[Any]:
    """The middleware that writes the prompt from the run's context, in a run with one (none otherwise)."""
    if run_context_of(ctx) is None:
        return []
    from langchain.agents.middleware import dynamic_prompt

    base = ctx.instructions

    @dynamic_prompt
    def written(request: Any) -> str:
        return instructions_for(request.runtime.context, base)

    return [written]


def run_kwargs(ctx: LegContext) -> dict[str, Any]:
    """`context=` for this leg's run, where the run has one (nothing otherwise: other arenas' runs as before)."""
    context = run_context_of(ctx)
    return {} if context is None else {"context": context}
