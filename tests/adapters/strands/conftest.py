"""strands adapter tests' shared helpers: a leg's context on an arena item, the adapter's class, and one leg run in a
fresh adapter (closed after it)."""

from __future__ import annotations

from pathlib import Path

from arena import catalog
from arena.tools.box import LocalToolBox, ToolExecutor
from arena.trace import TraceRecorder
from arena.types import LegContext

NAME = "strands"


def _ctx(server, arena: str, item_id: str, workdir: Path, profile: str | None = None):
    spec = catalog.load_arena(arena)
    item = spec.item(item_id)
    recorder = TraceRecorder()
    ctx = LegContext(
        item=item,
        instructions=spec.instructions,
        model=server.open_item(recorder, profile or spec.profiles[0]).model,
        tools=LocalToolBox(ToolExecutor(spec.tools, spec.functions, recorder)),
        workdir=str(workdir),
    )
    return item, recorder, ctx


def _cls():
    return catalog.builtin_adapters()[NAME].load()


async def _leg(coro_factory):
    adapter = _cls()()
    try:
        return await coro_factory(adapter)
    finally:
        await adapter.aclose()
