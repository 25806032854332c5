"""A DBOS workflow's recorded result read as pydantic_ai reads a run (its `outcome`), and the paused state as JSON
pointing at DBOS's store instead of holding the history."""

from __future__ import annotations

from typing import Any

from arena.for_adapters import LegContext, LegResult
from arena_builtins.adapters.pydantic_ai import outcome


class Ended:
    """A workflow's recorded result, as pydantic_ai's `outcome` reads an `AgentRunResult`."""

    def __init__(self, recorded: dict[str, Any]) -> None:
        self.output = recorded["output"]
        self._messages: str = recorded["messages"]

    def all_messages_json(self) -> bytes:
        return self._messages.encode()


def ended(recorded: dict[str, Any], workflow_id: str, db_path: str | None, ctx: LegContext) -> LegResult:
    """How the leg's workflow ended; paused, its state points at the workflow in DBOS's store."""
    result = outcome(Ended(recorded), ctx)
    if result.status == "suspended":
        # JSON pointing at DBOS's store: the history is the paused workflow's recorded result there (the SQLite
        # file's path; on PostgreSQL only the workflow id: the database is the leg's `ctx.store`).
        state = {k: v for k, v in result.state.items() if k != "messages"}
        where = {"db": db_path} if db_path is not None else {"system_database": ctx.store.kind}
        result.state = {**state, **where, "workflow_id": workflow_id}
    return result
