"""The rule the Chat Completions API holds a request's messages to: each tool call answered, each tool result asked.

The real API refuses (HTTP 400, `invalid_request_error`) a message list in which an assistant message's tool calls
are not followed by a tool message for each of them, or in which a tool message answers no call of the assistant
message it follows. A framework sends one when a session limit cuts a call from its result, or a replayed or resumed
history loses half of a pair. The scripted model would answer any list; the gateway refuses these as the API does
(arena/gateway.py), so a framework that sends one meets the error it would meet in production, and the trace
records the refusal (the core check `requests_well_formed`).

The wording is the API's own, as users report it (for instance openai-agents-python #4322); `param` names the
message the API names.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Refusal:
    """Why the API would refuse a request's messages: its message, and the message it names (`messages.[i].role`)."""

    message: str
    param: str


def _ids(message: dict[str, Any]) -> list[str]:
    calls = message.get("tool_calls") or []
    return [str(c.get("id")) for c in calls if isinstance(c, dict)]


def refusal(messages: list[Any]) -> Refusal | None:
    """The first break of the rule in `messages`, as the API reports it, or None when every call and result pair."""
    asked: list[str] = []  # the calls of the assistant message the tool messages that follow it answer
    owner = -1  # that assistant message's index, -1 when the previous non-tool message asked nothing
    for i, message in enumerate(messages):
        role = message.get("role") if isinstance(message, dict) else None
        if role == "tool":
            call_id = str(message.get("tool_call_id"))
            if owner < 0:
                return Refusal("Invalid parameter: messages with role 'tool' must be a response to a preceeding "
                               "message with 'tool_calls'.", f"messages.[{i}].role")
            if call_id not in _ids(messages[owner]):
                return Refusal(f"Invalid parameter: 'tool_call_id' of '{call_id}' not found in 'tool_calls' of "
                               "previous message.", f"messages.[{i}].tool_call_id")
            if call_id in asked:
                asked.remove(call_id)
            continue
        if asked:
            return _unanswered(owner, asked)
        owner = i if role == "assistant" and _ids(message) else -1
        asked = _ids(message) if owner >= 0 else []
    return _unanswered(owner, asked) if asked else None


def _unanswered(owner: int, asked: list[str]) -> Refusal:
    return Refusal("An assistant message with 'tool_calls' must be followed by tool messages responding to each "
                   f"'tool_call_id'. The following tool_call_ids did not have response messages: {', '.join(asked)}",
                   f"messages.[{owner}].role")
