"""Runs items through an adapter leg by leg and merges the legs into one trace.

A leg is one call into the adapter: `start`, or `resume` with the next decision from the item's
`resume_with`. Each suspension the runner observes (a leg returning a paused state) is recorded,
then answered. All legs and all tool calls write into one recorder, so the merged trace is a single
ordered log. `MAX_RESUMES` caps the cycle so a broken adapter fails loudly instead of looping, and
each item runs under a timeout in its own thread so a hung adapter cannot stall the run.
"""

from __future__ import annotations

import asyncio
import tempfile
import threading
import time
import traceback
from collections.abc import Callable
from typing import Any

from arena.checks import run_checks
from arena.results import ItemResult
from arena.spec import ArenaSpec
from arena.tools.box import LocalToolBox, ToolExecutor
from arena.trace import TraceRecorder
from arena.types import EvalItem, LegContext, LegResult, ModelConfig, ResumableRunner

MAX_RESUMES = 3
DEFAULT_TIMEOUT_S = 60.0


def _describe(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}".rstrip(": ")


async def _legs(adapter: ResumableRunner, ctx: LegContext, recorder: TraceRecorder) -> str | None:
    """Drive the legs; returns an error message, or None when the run finished."""
    item = ctx.item
    recorder.leg = 0
    result: LegResult = await adapter.start(ctx)
    resumes = 0
    while True:
        if result.status == "finished":
            recorder.record("final", text=result.final_text or "", pid=result.pid)
            return None
        if result.status == "errored":
            recorder.record("error", text=result.error or "adapter reported an error", pid=result.pid)
            return result.error or "adapter reported an error"
        pending = result.pending
        recorder.record(
            "suspended", tool=pending.tool if pending else None, args=pending.args if pending else None, pid=result.pid
        )
        if resumes >= MAX_RESUMES:
            message = f"still suspended after MAX_RESUMES={MAX_RESUMES} resumes"
            recorder.record("error", text=message)
            return message
        if resumes >= len(item.resume_with):
            message = f"suspended a {resumes + 1}. time but the item has only {len(item.resume_with)} decision(s)"
            recorder.record("error", text=message)
            return message
        decision = item.resume_with[resumes]
        resumes += 1
        recorder.leg = resumes
        recorder.record("resumed", decision=decision)
        result = await adapter.resume(result.state, decision, ctx)


async def _run_and_close(adapter: ResumableRunner, ctx: LegContext, recorder: TraceRecorder) -> str | None:
    """Adapters may define `async aclose()` to release clients inside the item's own event loop."""
    try:
        return await _legs(adapter, ctx, recorder)
    finally:
        close = getattr(adapter, "aclose", None)
        if close is not None:
            await close()


def run_item(
    adapter_factory: Callable[[], ResumableRunner],
    arena: ArenaSpec,
    item: EvalItem,
    model: ModelConfig,
    timeout_s: float = DEFAULT_TIMEOUT_S,
) -> ItemResult:
    recorder = TraceRecorder()
    executor = ToolExecutor(arena.tools, arena.functions, recorder)
    outcome: dict[str, Any] = {}
    started = time.monotonic()

    def target() -> None:
        with tempfile.TemporaryDirectory(prefix=f"arena-{item.id}-") as workdir:
            ctx = LegContext(
                item=item, instructions=arena.instructions, model=model, tools=LocalToolBox(executor), workdir=workdir
            )
            try:
                adapter = outcome["adapter"] = adapter_factory()
                outcome["error"] = asyncio.run(_run_and_close(adapter, ctx, recorder))
            except BaseException as exc:  # an adapter's crash is that item's error, never the run's
                message = _describe(exc)
                recorder.record("error", text=message)
                outcome["error"] = message
                outcome["traceback"] = traceback.format_exc()

    thread = threading.Thread(target=target, name=f"arena-item-{item.id}", daemon=True)
    thread.start()
    thread.join(timeout_s)
    if thread.is_alive():
        message = f"timed out after {timeout_s:g}s"
        recorder.record("error", text=message)
        outcome["error"] = message
    trace = recorder.events
    if thread.is_alive():
        terminate = getattr(outcome.get("adapter"), "terminate", None)
        if terminate is not None:  # a worker process can be reclaimed; a thread cannot
            terminate()
    checks = run_checks(item, trace, arena)
    error = outcome.get("error")
    status = "errored" if error else ("passed" if all(c.passed for c in checks) else "failed")
    return ItemResult(
        item_id=item.id,
        status=status,
        checks=checks,
        error=error,
        legs=max((e.leg for e in trace), default=0) + 1,
        duration_s=round(time.monotonic() - started, 3),
        trace=trace,
    )


def run_items(
    adapter_factory: Callable[[], ResumableRunner],
    arena: ArenaSpec,
    items: list[EvalItem],
    model: ModelConfig,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    on_result: Callable[[ItemResult], None] | None = None,
) -> list[ItemResult]:
    """Run items one after another; each item's failure stays that item's."""
    results = []
    for item in items:
        result = run_item(adapter_factory, arena, item, model, timeout_s)
        results.append(result)
        if on_result is not None:
            on_result(result)
    return results
