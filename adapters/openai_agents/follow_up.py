"""follow_up's channels in the SDK's terms. `follow_up`: the run's conversation is a `Session` (an in-memory
`SQLiteSession`, docs/sessions.md) given to `Runner.run` at the start, on every resume and for the user's next
message, which the SDK sends with the session's history. `output_guard`: the agent's answer passes an
`@output_guardrail` (it lets any non-empty answer through), and `tool_use_behavior` is the application's rule for a
tool's result as the answer (a `ToolsToFinalOutputFunction`: a room search that found nothing free is the answer; the
booking's result goes back to the model), docs/agents.md, docs/guardrails.md."""

from __future__ import annotations

import uuid
from typing import Any

from arena.for_adapters import LegContext
from arena_builtins.arenas.follow_up.channel import NO_ROOM, NO_ROOM_TOOL, follows_up, output_guarded


def session_for(ctx: LegContext, kept: Any) -> Any:
    """The run's session: the one this process keeps for it (`kept`), or a new one at the run's first leg; None in a
    run nobody follows up on (other arenas' runs as before)."""
    if not follows_up(ctx):
        return None
    if kept is not None:
        return kept
    from agents import SQLiteSession

    return SQLiteSession(uuid.uuid4().hex)  # in memory: the conversation lives in this process, as the run does


def agent_options(ctx: LegContext) -> dict[str, Any]:
    """The Agent's output guardrail and its rule for a tool's result as the answer on an `output_guard` item; nothing
    otherwise."""
    if not output_guarded(ctx):
        return {}
    from agents import GuardrailFunctionOutput, output_guardrail

    @output_guardrail
    async def answer_given(context: Any, agent: Any, output: Any) -> Any:
        """The application's check of the agent's answer: any non-empty answer passes."""
        return GuardrailFunctionOutput(output_info={"checked": True}, tripwire_triggered=not str(output or "").strip())

    def search_answers_when_nothing_is_free(context: Any, results: list[Any]) -> Any:
        """The application's rule for a tool's result as the run's answer: a room search that found no free room is
        the answer; any other result goes back to the model (the SDK's `ToolsToFinalOutputFunction`)."""
        from agents import ToolsToFinalOutputResult

        empty = next((r for r in results if r.tool.name == NO_ROOM_TOOL and NO_ROOM in str(r.output)), None)
        return ToolsToFinalOutputResult(is_final_output=empty is not None,
                                        final_output=str(empty.output) if empty is not None else None)

    return {"output_guardrails": [answer_given], "tool_use_behavior": search_answers_when_nothing_is_free}
