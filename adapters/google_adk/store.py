"""Where the paused session is kept: ADK's session service for the leg's store (SQLite file, postgres or redis).

Only the session service changes with `--store` (create the session, each leg's Runner, add_input); each leg opens
the service and closes it, so the state a leg hands back is only how to reopen it (db path or store kind, app/user/
session ids).
"""

from __future__ import annotations

import contextlib
import os
import uuid
from typing import Any, AsyncIterator

from arena.for_adapters import LegContext

from .client import APP_NAME, USER_ID, adk

DB_NAME = "adk-sessions.sqlite"
PG_DRIVER = "asyncpg"  # DatabaseSessionService's async PostgreSQL driver (its _ASYNC_DRIVER_BY_BACKEND)
REDIS_KEY_PREFIX = "adk:session:"  # RedisSessionServiceConfig.key_prefix's default, after the item's prefix


def where(state: dict[str, Any]) -> dict[str, Any]:
    """The part of a paused state that says where its session lives and which one it is (JSON ids only)."""
    return {k: state[k] for k in ("db", "store", "app", "user", "session") if k in state}


@contextlib.asynccontextmanager
async def sessions(ctx: LegContext, state: dict[str, Any]) -> AsyncIterator[Any]:
    """ADK's session service for this leg, opened here and closed when the leg is done (a new connection per leg).

    sqlite (default): `SqliteSessionService(<workdir>/adk-sessions.sqlite)`, as always. `--store postgres`: ADK's
    `DatabaseSessionService(db_url="postgresql+asyncpg://...")` on the item's own database (ADK creates its tables
    there on first use; asyncpg is the PostgreSQL driver ADK names for it). `--store redis`: ADK's
    `RedisSessionService` (google.adk.integrations.redis) with `key_prefix=<item prefix>adk:session:`, over a
    redis.asyncio client made as ADK makes its own (`from_url(uri, decode_responses=True)`) and closed here."""
    store = ctx.store
    kind = state.get("store", "sqlite")
    if kind != store.kind:
        raise RuntimeError(f"the paused ADK session is in the {kind} store, this leg was given {store.kind}")
    if store.kind == "sqlite":
        service = adk()["SqliteSessionService"](state["db"])
        try:
            yield service
        finally:
            # ADK 2.12 added close(); before it the service opened a connection per operation (_get_db_connection)
            if hasattr(service, "close"):
                await service.close()
    elif store.kind == "postgres":
        from google.adk.sessions.database_session_service import DatabaseSessionService

        service = DatabaseSessionService(db_url=store.sqlalchemy_url(PG_DRIVER))
        try:
            yield service
        finally:
            await service.close()
    elif store.kind == "redis":
        import redis.asyncio as redis_asyncio
        from google.adk.integrations.redis import RedisSessionService, RedisSessionServiceConfig

        client = redis_asyncio.from_url(store.url, decode_responses=True)
        config = RedisSessionServiceConfig(uri=store.url, key_prefix=store.prefix + REDIS_KEY_PREFIX)
        try:
            yield RedisSessionService(config=config, redis_client=client)
        finally:
            await client.aclose()
    else:
        raise ValueError(f"unknown store {store.kind!r}")


async def open_session(ctx: LegContext) -> dict[str, Any]:
    """A new session for the item in the leg's store; returns where it lives and which one it is."""
    adk()  # ADK and LiteLLM imported first, offline, as before any leg
    # where the session lives: the SQLite file under the workdir, or (`--store`) only which store holds it
    location = {"db": os.path.join(ctx.workdir, DB_NAME)} if ctx.store.kind == "sqlite" else {"store": ctx.store.kind}
    state: dict[str, Any] = {
        **location,
        "app": APP_NAME,
        "user": USER_ID,
        "session": f"arena-{ctx.item.id}-{uuid.uuid4().hex}",
    }
    async with sessions(ctx, state) as service:
        await service.create_session(app_name=state["app"], user_id=state["user"], session_id=state["session"])
    return state
