"""Where agno keeps the paused run: its SqliteDb in the item's work directory, or its PostgresDb / RedisDb on the
run's store (`--store`)."""

from __future__ import annotations

import os
from typing import Any

from arena.for_adapters import LegContext

DB_FILE = "agno.db"
PG_SCHEMA = "ai"  # agno's default schema for PostgresDb, made in the item's own database


def db_for(ctx: LegContext) -> Any:
    """agno's own db for the run's store (`LegContext.store`), built per leg (a new process, a new connection):
    `SqliteDb` on the item's work directory (the default), `PostgresDb` on the item's own PostgreSQL database
    (SQLAlchemy with psycopg 3; agno creates its schema "ai" and its tables there itself, `create_schema=True`), or
    `RedisDb` whose `db_prefix` is the item's key prefix (agno writes every key as `<db_prefix>:<table>:<id>`, so the
    prefix's own trailing ":" is agno's separator; plain strings, sorted sets and sets, no Redis module)."""
    store = ctx.store
    if store.kind == "postgres":
        from agno.db.postgres import PostgresDb

        return PostgresDb(db_url=store.sqlalchemy_url("psycopg"), db_schema=PG_SCHEMA)
    if store.kind == "redis":
        from agno.db.redis import RedisDb

        return RedisDb(db_url=store.url, db_prefix=_redis_prefix(ctx))
    from agno.db.sqlite import SqliteDb

    return SqliteDb(db_file=os.path.join(ctx.workdir, DB_FILE))


def _redis_prefix(ctx: LegContext) -> str:
    prefix = ctx.store.prefix
    return prefix[:-1] if prefix.endswith(":") else prefix


def db_ref(ctx: LegContext) -> dict[str, str]:
    """Where agno keeps the run, as names only (the leg state is JSON; a new process connects again)."""
    if ctx.store.kind == "postgres":
        return {"db": "postgres", "db_schema": PG_SCHEMA}
    if ctx.store.kind == "redis":
        return {"db": "redis", "db_prefix": _redis_prefix(ctx)}
    return {"db_file": os.path.join(ctx.workdir, DB_FILE)}


def close_db(db: Any) -> None:
    """Release agno's db once the item ended: its SQLAlchemy engine (SqliteDb, PostgresDb) or its Redis client."""
    engine = getattr(db, "db_engine", None)  # SqliteDb, PostgresDb
    if engine is not None:
        engine.dispose()
    client = getattr(db, "redis_client", None)  # RedisDb
    if client is not None:
        client.close()
