"""A new message instead of a decision (the `message` channel) and input while paused (the `input` channel).

pydantic-ai keeps no paused run (the history is the caller's): a new message is a new run with it as the prompt on
the paused history, closed out first with `repair_messages`; input added while paused waits in the state and goes
to the resume as its `user_prompt`, alongside the deferred results."""

from __future__ import annotations

from typing import Any

from arena.for_adapters import Decision, DecisionKind, DecisionSet


def with_input(state: dict[str, Any], text: str) -> dict[str, Any]:
    """The paused state with `text` staged for the resume (`add_input`): a copy, the state handed back at the pause
    stays as it was."""
    return {**state, "inputs": [*state.get("inputs", []), text]}


def is_message(decision: Decision | DecisionSet) -> bool:
    """The human sent a new message instead of a decision (interruptions' `DecisionKind.message`)."""
    return isinstance(decision, Decision) and decision.kind is DecisionKind.message


def user_prompt(state: dict[str, Any], decision: Decision | DecisionSet) -> str | None:
    """The new user prompt the resume sends, if any: the input added while paused (`add_input`), then a new
    message sent instead of a decision; None when there is neither."""
    message = decision.text if isinstance(decision, Decision) and is_message(decision) else None
    texts = [*state.get("inputs", []), *([message] if message else [])]
    return "\n\n".join(texts) if texts else None


def for_new_prompt(history: list[Any]) -> list[Any]:
    """The paused history as pydantic-ai documents it for a new user prompt: `repair_messages(history)`.

    `Agent.run(prompt, message_history=...)` refuses a history whose last response has unanswered tool calls
    (UserError "Cannot provide a new user prompt when the message history contains unprocessed tool calls. ...
    or call `pydantic_ai.messages.repair_messages()` on the history first to close them out."); repair_messages'
    docstring: "Use this before adding a new user prompt to history whose final response has unanswered tool
    calls, which `Agent.run` refuses". pydantic-ai itself then answers each open call with a synthesized
    ToolReturnPart (outcome='interrupted', "The tool call was interrupted before a result was produced.").
    Before repair_messages existed (`-a pydantic_ai@2.66.0`) the history goes as it is, and the run refuses it."""
    try:
        from pydantic_ai.messages import repair_messages
    except ImportError:
        return history
    return repair_messages(history)
