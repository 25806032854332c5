"""Where vanilla_durable keeps the paused run: its journal, a JSON file in the item's work directory (sqlite, the
default), a row in the item's PostgreSQL database or a key under its Redis prefix; and the lock on it."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from collections.abc import Iterator
from typing import Any

from arena.for_adapters import LegContext
from arena.for_adapters import Store

JOURNAL = "vanilla_durable.json"


class Journal:
    """The run's journal: {"pause": the paused turn, "decided": {decision, owner pid, ended}, "answers": {}}.

    Kept where the run's store says (`LegContext.store`): a JSON file in the work directory (sqlite, the default),
    a row of a table in the item's PostgreSQL database, or a key under the item's Redis prefix; `where` names it
    (the path, or the row's / key's name), and is all a paused state carries."""

    def __init__(self, where: str, store: Store) -> None:
        self.where, self.store = where, store
        raw = self._read()
        self.data: dict[str, Any] = json.loads(raw) if raw else {"answers": {}}

    @classmethod
    def new(cls, ctx: LegContext) -> Journal:
        where = os.path.join(ctx.workdir, JOURNAL) if ctx.store.kind == "sqlite" else f"{ctx.store.prefix}{JOURNAL}"
        return cls(where, ctx.store)

    def _read(self) -> str | None:
        if self.store.kind == "postgres":
            with _pg(self.store) as conn:
                row = conn.execute("SELECT data FROM vanilla_durable_journal WHERE name = %s", (self.where,)).fetchone()
            return None if row is None else str(row[0])
        if self.store.kind == "redis":
            with _redis(self.store) as client:
                value = client.get(self.where)
            return None if value is None else value.decode()
        return open(self.where).read() if os.path.exists(self.where) else None

    def save(self) -> None:
        """Whole or not at all, whenever the process dies: a file replaced, a row upserted, a key set."""
        text = json.dumps(self.data)
        if self.store.kind == "postgres":
            with _pg(self.store) as conn:
                conn.execute("INSERT INTO vanilla_durable_journal (name, data) VALUES (%s, %s) "
                             "ON CONFLICT (name) DO UPDATE SET data = EXCLUDED.data", (self.where, text))
            return
        if self.store.kind == "redis":
            with _redis(self.store) as client:
                client.set(self.where, text)
            return
        tmp = f"{self.where}.tmp"
        with open(tmp, "w") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self.where)

    @staticmethod
    @contextlib.contextmanager
    def locked(where: str, store: Store) -> Iterator[None]:
        """One process at a time decides whether a resume may go on: a file lock, a PostgreSQL advisory lock, or a
        Redis lock (redis-py's `Lock`), each on the journal's name."""
        if store.kind == "postgres":
            with _pg(store) as conn:
                conn.execute("SELECT pg_advisory_lock(hashtext(%s))", (where,))
                try:
                    yield
                finally:
                    conn.execute("SELECT pg_advisory_unlock(hashtext(%s))", (where,))
            return
        if store.kind == "redis":
            with _redis(store) as client, client.lock(f"{where}.lock", timeout=120, blocking_timeout=120):
                yield
            return
        with open(f"{where}.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)


@contextlib.contextmanager
def _pg(store: Store) -> Iterator[Any]:
    """A connection to the item's PostgreSQL database (autocommit: every statement stands alone), its table made."""
    import psycopg

    with psycopg.connect(store.url, autocommit=True, connect_timeout=10) as conn:
        conn.execute("CREATE TABLE IF NOT EXISTS vanilla_durable_journal (name text PRIMARY KEY, data text NOT NULL)")
        yield conn


@contextlib.contextmanager
def _redis(store: Store) -> Iterator[Any]:
    import redis

    client = redis.Redis.from_url(store.url, socket_timeout=10)
    try:
        yield client
    finally:
        client.close()
