"""A user's words into the thread: a user turn (the first input, or a new message sent at a pause instead of a
decision), and input added while paused (`add_input`), kept with the paused state until the resume takes it."""

from __future__ import annotations

from typing import Any


def user_turn(text: str | None) -> dict[str, Any]:
    """A user turn as create_agent's graph takes it: a plain input dict whose message the `messages` reducer appends."""
    return {"messages": [{"role": "user", "content": text or ""}]}


def noted(state: dict[str, Any]) -> list[dict[str, str]]:
    """The input added while paused (`add_input`), each a user message, in the order it came."""
    return [{"role": "user", "content": text} for text in state.get("notes", ())]


def message_turn(state: dict[str, Any], text: str | None) -> dict[str, Any]:
    """A new message at a pause: the input added while paused first, then the message, as the thread's next user
    turn."""
    return {"messages": [*noted(state), *user_turn(text)["messages"]]}


def with_note(state: dict[str, Any], text: str) -> dict[str, Any]:
    """The paused state with `text` kept among its notes, after those already added."""
    return {**state, "notes": [*state.get("notes", ()), text]}
