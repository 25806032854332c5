"""A paused run's state kept on the item's own server (`--store postgres|redis`), the leg's state only its id.

Frameworks with no store class for a paused run document keeping its serialized state "in a database" yourself
(OpenAI Agents' `RunState.to_string()`, Pydantic AI's message-history JSON). Their adapters do it through this, written
once: a record of text fields is a row of one table in the item's PostgreSQL database (asyncpg), or a hash under the
item's Redis key prefix (redis.asyncio). Each call opens its own connection and closes it: nothing outlives the leg's
process, and the next leg, in a new process, finds the record by its id."""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Mapping
from typing import Any

from arena.errors import InvalidValue, NotFound
from arena.types import Store

CONNECT_TIMEOUT_S = 10


class KeptRecords:
    """Records of text fields on the item's server: `table` names the PostgreSQL table (columns id, fields as JSON,
    created_at), `redis_key` the key stem after the item's prefix (a record is the hash `<prefix><stem>:<id>`)."""

    def __init__(self, store: Store, table: str, redis_key: str) -> None:
        if store.kind not in ("postgres", "redis"):
            raise InvalidValue(f"a {store.kind} store keeps no records on a server: the leg state holds the state")
        if not re.fullmatch(r"[a-z_][a-z0-9_]*", table):
            raise InvalidValue(f"{table!r} is not a plain table name (lower case letters, digits and _)")
        self.store, self.table, self.redis_key = store, table, redis_key

    def key(self, record_id: str) -> str:
        """The Redis key of a record."""
        return f"{self.store.prefix}{self.redis_key}:{record_id}"

    async def add(self, fields: Mapping[str, str]) -> str:
        """Keep a new record (a row, a hash) and return its id."""
        record_id = uuid.uuid4().hex
        if self.store.kind == "postgres":
            import asyncpg  # type: ignore[import-untyped]  # asyncpg ships no type information

            conn = await asyncpg.connect(self.store.url, timeout=CONNECT_TIMEOUT_S)
            try:
                await conn.execute(f"CREATE TABLE IF NOT EXISTS {self.table} (id text PRIMARY KEY, "
                                   "fields json NOT NULL, created_at timestamptz NOT NULL DEFAULT now())")
                await conn.execute(f"INSERT INTO {self.table} (id, fields) VALUES ($1, $2::json)", record_id,
                                   json.dumps(dict(fields)))
            finally:
                await conn.close()
        else:
            import redis.asyncio as aioredis

            client = aioredis.Redis.from_url(self.store.url, socket_timeout=CONNECT_TIMEOUT_S)
            try:
                mapping: dict[Any, Any] = dict(fields)  # one HSET: the record is there whole or not at all
                await client.hset(self.key(record_id), mapping=mapping)
            finally:
                await client.aclose()
        return record_id

    async def get(self, record_id: str) -> dict[str, str]:
        """The fields of the record with that id; `NotFound` when the server has none (nothing to resume)."""
        found: dict[str, str] | None = None
        if self.store.kind == "postgres":
            import asyncpg

            conn = await asyncpg.connect(self.store.url, timeout=CONNECT_TIMEOUT_S)
            try:
                text = await conn.fetchval(f"SELECT fields::text FROM {self.table} WHERE id = $1", record_id)
            except asyncpg.UndefinedTableError:  # nothing was kept in this database yet
                text = None
            finally:
                await conn.close()
            found = None if text is None else {str(k): str(v) for k, v in json.loads(text).items()}
        else:
            import redis.asyncio as aioredis

            client = aioredis.Redis.from_url(self.store.url, socket_timeout=CONNECT_TIMEOUT_S)
            try:
                raw = await client.hgetall(self.key(record_id))
            finally:
                await client.aclose()
            found = {_text(k): _text(v) for k, v in raw.items()} or None
        if found is None:
            raise NotFound(f"no record {record_id} in {self.table if self.store.kind == 'postgres' else self.redis_key}"
                           f" of the item's {self.store.kind} store")
        return found


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value
