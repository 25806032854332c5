"""Where the paused thread is kept: the item's AsyncSqliteSaver file under ctx.workdir, or with `--store postgres`
LangGraph's AsyncPostgresSaver on the item's own database; the paused state is only how to reopen it."""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from arena.for_adapters import LegContext

DB_NAME = "langgraph-checkpoints.sqlite"

# Each step's checkpoint is written before the next step starts (LangGraph's durable-execution mode): with the default
# "async", a crash right after a model step may find that step unsaved, and what a recovery then does depends on timing.
DURABILITY = "sync"


def new_thread(ctx: LegContext) -> dict[str, str]:
    """A new item's thread: its id, and the SQLite file that will hold it when the store is SQLite."""
    state = {"thread_id": f"arena-{ctx.item.id}-{uuid.uuid4().hex}"}
    if ctx.store.kind == "sqlite":  # a server store keeps no file: the thread id is all a leg needs
        state = {"db": os.path.join(ctx.workdir, DB_NAME), **state}
    return state


@asynccontextmanager
async def checkpointer(ctx: LegContext, state: dict[str, Any], first: bool) -> AsyncIterator[Any]:
    """The leg's checkpointer, open for the leg: the item's AsyncSqliteSaver file (`state["db"]`), or with `--store
    postgres` LangGraph's AsyncPostgresSaver on the item's own database (its tables made by `setup()` on the first
    leg). A new connection each leg, as a new process makes it; nothing is cached across legs."""
    if ctx.store.kind == "postgres":
        from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

        async with AsyncPostgresSaver.from_conn_string(ctx.store.url) as saver:
            if first:
                await saver.setup()
            yield saver
        return
    if ctx.store.kind != "sqlite":  # the `redis` channel is unsupported: the harness declines such a run
        raise RuntimeError(f"LangGraph has no {ctx.store.kind} checkpointer here (see the adapter's "
                           f"{ctx.store.kind} channel)")
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

    async with AsyncSqliteSaver.from_conn_string(state["db"]) as saver:
        yield saver


def handle(state: dict[str, Any], pause: dict[str, Any]) -> dict[str, Any]:
    """The paused state: where the thread is (the SQLite file, when there is one, and the thread id) and its pause."""
    return {**{k: state[k] for k in ("db", "thread_id") if k in state}, "pause": pause}
