"""The conversation after the run (follow_up's `follow_up` channel) from the journal: the transcript journaled after
every step, the user's next message appended, the loop run on it (journaled as it goes), in any process."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from arena.for_adapters import LegContext, LegResult

from .store import Journal


class JournaledFollowUp:
    """VanillaDurableAdapter's follow-up: the conversation is the journal's, not the process's memory."""

    if TYPE_CHECKING:  # VanillaDurableAdapter's and VanillaAdapter's, for mypy only (nothing is defined at runtime)
        _journal: Journal | None

        async def _loop(self, messages: list[dict[str, Any]], ctx: LegContext, agent: str | None = None,
                        nested: bool = False) -> LegResult: ...

    async def follow_up(self, state: Any, text: str, ctx: LegContext) -> LegResult:
        journal = Journal(state["journal"], ctx.store)
        messages = journal.data.get("messages") or []
        if not messages:
            return LegResult.errored("the journal holds no conversation to follow up on")
        self._journal = journal
        return await self._loop([*messages, {"role": "user", "content": text}], ctx)
