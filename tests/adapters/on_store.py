"""What the adapters' store tests share: an item's leg context on its own store (as the runner builds it), and one
leg in a fresh adapter, closed after, so each test is only what it inspects between the legs."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from arena import stores
from arena.tools.box import LocalToolBox, ToolExecutor
from arena.trace import TraceRecorder
from arena.types import LegContext, LegResult


@contextlib.contextmanager
def item_on_store(server: Any, spec: Any, item: Any, kind: str, workdir: Path,
                  recorder: TraceRecorder | None = None) -> Iterator[tuple[LegContext, Any]]:
    """(the leg context, the item's store) for `item` of `spec` on `kind`'s server, its tools and model calls recorded
    in `recorder`; the item's database or key prefix is removed when the block ends."""
    recorder = recorder if recorder is not None else TraceRecorder()
    executor = ToolExecutor(spec.tools, spec.functions, recorder)
    model = server.open_item(recorder, "scripted").model
    with stores.item_store(kind, item.id) as own:
        yield LegContext(item=item, instructions=spec.instructions, model=model, tools=LocalToolBox(executor),
                         workdir=str(workdir), store=own.store), own


async def fresh_leg(cls: Any, ctx: LegContext, state: Any = None) -> LegResult:
    """One leg in a new adapter of `cls`, closed after: the start, or with `state` the resume with the item's first
    decision."""
    adapter = cls()
    try:
        return await (adapter.start(ctx) if state is None else adapter.resume(state, ctx.item.resume_with[0], ctx))
    finally:
        await adapter.aclose()
