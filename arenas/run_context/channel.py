"""The `run_context` channel: the application's own run context, handed to the framework at the start of a run and
again at every resume, as an application does when it serves the resume in a new request.

Frameworks carry an application's context into a run and its resumes (the OpenAI Agents SDK's
`Runner.run(agent, state, context=...)`, Pydantic AI's `deps`, LangGraph's `context`, ADK's session state). The
arena's application uses it the common way: the agent's instructions are written from it at each model call (the
framework's dynamic-instructions API), so the user the context names is in every request the model is sent, where
the harness's gateway records it. The context travels in `LegContext.extra[RUN_CONTEXT]` as JSON data, the same on
every leg; an adapter hands it to its framework on each leg (`mechanism` says how) and never keeps its own copy in
the paused state: a resume that loses the context, or whose context makes the framework forget the approval
(openai-agents-python #4244), shows in the trace.
"""

from __future__ import annotations

from typing import Any

from arena.for_adapters import LegContext
from arena.for_arenas import ChannelSpec, register_channel

RUN_CONTEXT = "run_context"  # the channel's name and its LegContext.extra key


def run_context_of(ctx: LegContext) -> dict[str, Any] | None:
    """The application's context for this leg (`{"user": ..., "team": ...}`), or None outside the arena."""
    value = ctx.extra.get(RUN_CONTEXT)
    return dict(value) if value is not None else None


def instructions_for(context: dict[str, Any], instructions: str) -> str:
    """The instructions the application writes from its context at each model call: the run's own, after whom
    the agent acts for (the user the `context_reached_model` check looks for in every request)."""
    return f"You act for {context['user']} of the {context['team']} team. {instructions}"


register_channel(ChannelSpec(RUN_CONTEXT, "the application's own run context is handed to the framework at the start "
                             "and at every resume, and reaches every model call",
                             context=(RUN_CONTEXT,), provider=__name__))
