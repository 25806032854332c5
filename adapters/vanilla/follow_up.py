"""The conversation after the run (follow_up's `follow_up` channel): the loop's transcript is kept as it goes, and
the user's next message is the next turn of it."""

from __future__ import annotations

from typing import Any

from arena.for_adapters import LegContext, LegResult

from .parts import VanillaParts


class FollowUp(VanillaParts):
    """VanillaAdapter's conversation, kept after every step of the run's own loop (`_persist`)."""

    _conversation: list[dict[str, Any]] | None = None

    def _persist(self, messages: list[dict[str, Any]]) -> None:
        self._conversation = messages

    async def follow_up(self, state: Any, text: str, ctx: LegContext) -> LegResult:
        """The user's next message after the run: the whole transcript, the message appended, the loop run on."""
        if self._conversation is None:
            return LegResult.errored("no conversation was kept in this process to follow up on")
        messages = [*self._conversation, {"role": "user", "content": text}]
        return await self._loop(messages, ctx)
