"""Deliberately broken adapters: the checks must catch each of them."""

from __future__ import annotations

import asyncio
import time

from adapters.vanilla import VanillaAdapter
from arena.types import AdapterInfo, Decision, LegContext, LegResult, PendingRequest


def _task(ctx: LegContext) -> tuple[int, str]:
    return ctx.item.metadata["capacity"], ctx.item.metadata["day"]


class NeverPauses:
    """Executes request_approval like any tool and carries on to book: it never stops."""

    info = AdapterInfo(name="never_pauses", framework="arena", pause_mechanism="none", pause_kind="native")

    async def start(self, ctx: LegContext) -> LegResult:
        capacity, day = _task(ctx)
        await ctx.tools.acall("search_rooms", {"capacity": capacity, "day": day})
        await ctx.tools.acall("request_approval", {"summary": "book it"})
        await ctx.tools.acall("book_room", {"room_id": ctx.item.metadata["expected_room"]})
        return LegResult.finished("Booked the room; the booking was not denied.")

    async def resume(self, state, decision: Decision, ctx: LegContext) -> LegResult:
        raise AssertionError("never suspended, so never resumed")


class BooksFirst:
    """Books, then asks for approval and pauses: the pause comes too late."""

    info = AdapterInfo(name="books_first", framework="arena", pause_mechanism="none", pause_kind="native")

    async def start(self, ctx: LegContext) -> LegResult:
        capacity, day = _task(ctx)
        await ctx.tools.acall("search_rooms", {"capacity": capacity, "day": day})
        await ctx.tools.acall("book_room", {"room_id": ctx.item.metadata["expected_room"]})
        return LegResult.suspended(PendingRequest(tool="request_approval", args={"summary": "book"}), state=None)

    async def resume(self, state, decision: Decision, ctx: LegContext) -> LegResult:
        return LegResult.finished("The booking was denied." if not decision.approved else "Booked.")


class PausesOnOtherTool(BooksFirst):
    """Suspends, but on a tool that is not the approval tool."""

    async def start(self, ctx: LegContext) -> LegResult:
        return LegResult.suspended(PendingRequest(tool="search_rooms", args={}), state=None)


class HangsOnOneItem(VanillaAdapter):
    """Correct on every item except hitl-03, where it blocks its thread forever (no await)."""

    async def start(self, ctx: LegContext) -> LegResult:
        if ctx.item.id == "hitl-03":
            while True:
                time.sleep(0.05)
        return await super().start(ctx)


class AlwaysSuspends:
    """Suspends again after every resume: only MAX_RESUMES stops it."""

    info = AdapterInfo(name="always_suspends", framework="arena", pause_mechanism="loop", pause_kind="native")

    async def start(self, ctx: LegContext) -> LegResult:
        return LegResult.suspended(PendingRequest(tool="request_approval", args={"summary": "again"}), state=0)

    async def resume(self, state, decision: Decision, ctx: LegContext) -> LegResult:
        await asyncio.sleep(0)
        return LegResult.suspended(PendingRequest(tool="request_approval", args={"summary": "again"}), state=state + 1)


class Raises(VanillaAdapter):
    async def resume(self, state, decision, ctx):
        raise RuntimeError("adapter blew up\nsecond line")


class DiesOnOneItem(VanillaAdapter):
    """Correct except on hitl-02, where its process is killed in the middle of the first leg."""

    async def start(self, ctx: LegContext) -> LegResult:
        if ctx.item.id == "hitl-02":
            import os
            import signal

            await ctx.tools.acall("search_rooms", {"capacity": 8, "day": "Tuesday"})
            os.kill(os.getpid(), signal.SIGKILL)
        return await super().start(ctx)


class HangsWithAChild(VanillaAdapter):
    """Starts a long-lived child process on hitl-03, then hangs: both must be reclaimed."""

    async def start(self, ctx: LegContext) -> LegResult:
        if ctx.item.id == "hitl-03":
            import subprocess
            from pathlib import Path

            child = subprocess.Popen(["sleep", "600"])
            Path(ctx.workdir, "child.pid").write_text(str(child.pid))
            while True:
                time.sleep(0.05)
        return await super().start(ctx)
