"""Text from the human: the `message` channel (a new message at a pause, a new invocation on the paused session)
and the `input` channel (`add_input`, emulated: a user text Event appended to the stored session)."""

from __future__ import annotations

from typing import Any

from arena.for_adapters import LegContext

from .client import adk
from .store import sessions


def user_message(text: str) -> Any:
    """The user's text as the session's next user turn (the item's input, or a new message at a pause)."""
    types = adk()["types"]
    return types.Content(role="user", parts=[types.Part(text=text)])


async def append_note(ctx: LegContext, state: dict[str, Any], text: str) -> dict[str, Any]:
    """The note appended to the paused session as a user-authored text Event stamped with the paused invocation_id
    (the session service's `append_event`); nothing runs, and the state to resume is unchanged."""
    adk_ = adk()
    types = adk_["types"]
    async with sessions(ctx, state) as service:
        session = await service.get_session(app_name=state["app"], user_id=state["user"],
                                            session_id=state["session"])
        if session is None:
            raise LookupError(f"no stored ADK session {state['session']!r} to add input to")
        note = adk_["Event"](author="user", invocation_id=state["invocation"],
                             content=types.Content(role="user", parts=[types.Part(text=text)]))
        await service.append_event(session, note)
    return state
