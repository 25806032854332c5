"""The paused state on a server (`--store postgres|redis`, the `postgres` / `redis` channels).

Pydantic AI has no store class; what it documents is persisting the run's message history yourself (JSON from
`ModelMessagesTypeAdapter`). On a server that JSON and the rest of the paused state go into a table of the item's
database (psycopg 3) or a Redis hash under the item's key prefix (redis-py), and the leg's state is only the row's
id / the key. With SQLite (the default) nothing changes: the JSON is the state itself."""

from __future__ import annotations

import json
import uuid
from typing import Any

from arena.for_adapters import LegResult
from arena.for_adapters import Store

PAUSED_TABLE = "pydantic_ai_paused_runs"  # in the item's own PostgreSQL database
PAUSED_KEY = "pydantic_ai:paused_run:"  # after the item's Redis key prefix
PAUSED_ID = "paused_run"  # the state's key for the row id / key id (the state then holds nothing else of the pause)
_CREATE = (f"CREATE TABLE IF NOT EXISTS {PAUSED_TABLE} (id text PRIMARY KEY, messages json NOT NULL, "
           "state json NOT NULL, created_at timestamptz NOT NULL DEFAULT now())")


async def kept(result: LegResult, store: Store) -> LegResult:
    """A paused leg's state on the item's server: the message history (pydantic-ai's own JSON, `all_messages_json()`)
    and the rest of the pause (held call ids, their kind, a delegate's metadata) written there; the state handed back
    is the id only. With SQLite (the default) the JSON is the state itself, as it always was."""
    if store.kind == "sqlite" or result.status != "suspended" or not result.state:
        return result
    state = dict(result.state)
    messages = state.pop("messages")
    paused_id = uuid.uuid4().hex
    rest = json.dumps(state)
    if store.kind == "postgres":
        import psycopg

        async with await psycopg.AsyncConnection.connect(store.url, autocommit=True) as conn:
            await conn.execute(_CREATE)
            await conn.execute(f"INSERT INTO {PAUSED_TABLE} (id, messages, state) VALUES (%s, %s, %s)",
                               (paused_id, messages, rest))
    elif store.kind == "redis":
        import redis.asyncio as aioredis

        client = aioredis.Redis.from_url(store.url)
        try:
            await client.hset(f"{store.prefix}{PAUSED_KEY}{paused_id}", mapping={"messages": messages, "state": rest})
        finally:
            await client.aclose()
    else:
        raise ValueError(f"no paused-state store for {store.kind!r}")
    result.state = {PAUSED_ID: paused_id, "store": store.kind}
    return result


async def load_paused(store: Store, handle: dict[str, Any]) -> dict[str, Any]:
    """The paused state `kept` wrote, read back from the item's server; what the handle gained since the pause (the
    input `add_input` staged) goes with it."""
    paused_id = handle[PAUSED_ID]
    if store.kind == "postgres":
        import psycopg

        async with await psycopg.AsyncConnection.connect(store.url, autocommit=True) as conn:
            cursor = await conn.execute(f"SELECT messages::text, state::text FROM {PAUSED_TABLE} WHERE id = %s",
                                        (paused_id,))
            row = await cursor.fetchone()
    elif store.kind == "redis":
        import redis.asyncio as aioredis

        client = aioredis.Redis.from_url(store.url)
        try:
            found = await client.hmget(f"{store.prefix}{PAUSED_KEY}{paused_id}", ["messages", "state"])
        finally:
            await client.aclose()
        row = tuple(v.decode() for v in found) if all(v is not None for v in found) else None
    else:
        raise ValueError(f"the paused run {paused_id} is kept in {handle.get('store')!r}, and this leg's store is "
                         f"{store.kind!r}")
    if row is None:
        raise LookupError(f"no paused run {paused_id} in the item's {store.kind} store")
    extra = {k: v for k, v in handle.items() if k not in (PAUSED_ID, "store")}
    return {**json.loads(row[1]), "messages": row[0], **extra}
