"""The message and input channels: a new user message at a pause (a new run in the paused run's session), and input
added while paused (kept in the leg state, handed to agno's `acontinue_run(input=...)` at the resume)."""

from __future__ import annotations

from typing import Any

from arena.for_adapters import Decision, LegContext, LegResult

from .outcome import outcome
from .stream import STREAMED, streamed


async def new_message(agent: Any, state: dict[str, Any], message: Decision, ctx: LegContext) -> LegResult:
    """A new user message instead of a decision, delivered as agno's own chat interfaces deliver a user's next
    message in a thread: a new run in the paused run's session, `arun(text, session_id=...)` (AgentOS's AG-UI
    router, "Fresh run: new user input", and its Slack handler run every new message this way, whatever the
    thread holds paused), with the session's history in context (`add_history_to_context=True`, agno's switch
    for a multi-turn session). Nothing is done to the paused run or its requirement: agno leaves it PAUSED in
    its db and leaves paused runs out of a new run's history (`HISTORY_SKIP_STATUSES`), and a later
    `acontinue_run` of it (a late approval) is agno's to take or refuse."""
    run = {"session_id": state["session_id"], "add_history_to_context": True}
    if ctx.stream:
        result = await streamed(agent, agent.arun(message.text, **run, **STREAMED), ctx)
    else:
        result = await agent.arun(message.text, **run)
    return outcome(result, ctx)


def with_input(state: dict[str, Any], text: str) -> dict[str, Any]:
    """Input added while paused (the `input` channel), no decision. agno has no call that adds input to a PAUSED
    run on its own: a paused run moves only through `acontinue_run`, which must resolve its requirements. What
    it has is `acontinue_run(input=...)` ("new user-message text to append before resuming", documented for a
    COMPLETED or RUNNING/ERROR run), so the text is kept in the leg state (a copy: the pause's own state is
    unchanged) and handed to agno with the decision at the resume, where agno appends it as a user message to
    the run's messages before it answers the held call."""
    return {**state, "inputs": [*state.get("inputs", []), text]}
