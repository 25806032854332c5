"""Where the paused run is kept: DBOS's system database, a SQLite file under the item's work directory, or with
`--store postgres` the item's own PostgreSQL database (DBOS has no Redis system database)."""

from __future__ import annotations

import os
from typing import Any

from arena.for_adapters import LegContext

STORE_DIR = "pydantic_ai_dbos"
STORE_FILE = "dbos.sqlite"


def system_database_url(ctx: LegContext) -> str | None:
    """DBOS's PostgreSQL system database with `--store postgres` (the item's own database); None: the SQLite file under
    the work directory, as always. DBOS has no Redis system database (the `redis` channel is unsupported)."""
    if ctx.store.kind == "postgres":
        return ctx.store.url
    if ctx.store.kind != "sqlite":
        raise RuntimeError(f"DBOS has no {ctx.store.kind} system database")
    return None


def db_path_for(ctx: LegContext, state: dict[str, Any] | None = None) -> str | None:
    """The SQLite file of the item's system database: a new leg's under the work directory, a paused one's where its
    state says; None on PostgreSQL (`system_database_url`)."""
    if system_database_url(ctx):
        return None
    return os.path.join(ctx.workdir, STORE_DIR, STORE_FILE) if state is None else state["db"]
