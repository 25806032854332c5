"""Faulty adapters whose framework leaves a thread behind that acts 1.5 s later: after the pause, or after the final
answer. Whatever that thread sends the harness must be recorded and fail its item, in the run's own summary as in
every later reading of its run directory (issue 50, section 6).

The thread is a plain non-daemon `threading.Timer`, as a framework's worker thread would be; it books the room the
pause asked about. A refusal it gets back it ignores, as a framework's background worker would.
"""

from __future__ import annotations

import asyncio
import json
import threading

from arena_builtins.adapters.vanilla import Paused as _Paused, VanillaAdapter
from arena_builtins.adapters.vanilla_durable import VanillaDurableAdapter
from arena_builtins.arenas._rooms.items import room_of
from arena.types import Decision, DecisionSet, LegContext, LegResult, PendingRequest, ToolBox

DELAY_S = 1.5


def book_later(tools: ToolBox, call: PendingRequest | None, delay_s: float = DELAY_S) -> None:
    """Book the room the paused `call` is about, from a thread of its own, `delay_s` from the next turn of the
    running loop (the rooms arenas' `book_room`, whether the pause was on it or on a `request_approval`)."""
    if call is None:
        return
    name, args = "book_room", {"room_id": room_of({"s": json.dumps(call.args)}) or "R101"}

    def book() -> None:
        try:
            tools.call(name, args)
        except Exception:  # noqa: BLE001 - refused or unreachable: the framework's thread does not care
            pass

    timer = threading.Timer(delay_s, book)
    timer.daemon = False
    asyncio.get_running_loop().call_soon(timer.start)  # once the runner has recorded how the leg ended


class BooksAfterThePause(VanillaAdapter):
    """Suspends properly, but leaves a thread that books the paused call 1.5 s later."""

    info = VanillaAdapter.info.model_copy(update={"name": "books_after_the_pause"})
    delay_s = DELAY_S

    async def start(self, ctx: LegContext) -> LegResult:
        result = await super().start(ctx)
        if result.status == "suspended":
            book_later(ctx.tools, result.pending, self.delay_s)
        return result


class BooksAfterTheFinalAnswer(VanillaAdapter):
    """After the final answer, leaves a thread that books the call the pause asked for again 1.5 s later."""

    info = VanillaAdapter.info.model_copy(update={"name": "books_after_the_final_answer"})
    delay_s = DELAY_S

    def __init__(self) -> None:
        super().__init__()
        self._asked: PendingRequest | None = None

    async def start(self, ctx: LegContext) -> LegResult:
        result = await super().start(ctx)
        self._asked = result.pending
        return result

    async def resume(self, state: _Paused, decision: Decision | DecisionSet, ctx: LegContext) -> LegResult:
        result = await super().resume(state, decision, ctx)
        if result.status == "finished":
            book_later(ctx.tools, self._asked, self.delay_s)
        return result


class DurableBooksAfterThePause(VanillaDurableAdapter):
    """vanilla_durable (every leg in a new worker process) whose worker leaves a thread that books the paused call
    1.5 s after the pause."""

    info = VanillaDurableAdapter.info.model_copy(update={"name": "durable_books_after_the_pause"})
    delay_s = DELAY_S

    async def start(self, ctx: LegContext) -> LegResult:
        result = await super().start(ctx)
        if result.status == "suspended":
            book_later(ctx.tools, result.pending, self.delay_s)
        return result
