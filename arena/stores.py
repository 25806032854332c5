"""`--store postgres|redis`: each item's own place on a real server, made before its first leg, removed after it.

PostgreSQL: a database of the item's own (`CREATE DATABASE`), so a framework's tables (a checkpointer's, a session
service's) are the item's alone; Redis: a key prefix no other item uses. Concurrent items never see each other's
state. The servers are the project's (`arena/services.py`, `scripts/services up`) unless `ARENA_POSTGRES_URL` /
`ARENA_REDIS_URL` point elsewhere (your own servers: the role must be allowed to create databases).

An item with `metadata["restart_store"]` has its store's server stopped and restarted while its run is paused: it
gets a private server of its own (started here from the same packages), so the restart touches no other item.
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from arena import services
from arena.types import AdapterInfo, Store, StoreKind

STORES: tuple[StoreKind, ...] = ("sqlite", "postgres", "redis")
SERVER_STORES: tuple[StoreKind, ...] = ("postgres", "redis")
RESTART = "restart_store"  # the item metadata key: its store's server restarts during the pause


class StoreError(RuntimeError):
    """A store's server cannot be reached or prepared: one line (a harness failure, not the framework's)."""


def server_url(kind: StoreKind) -> str:
    """The server `--store kind` uses: ARENA_POSTGRES_URL / ARENA_REDIS_URL, else the project's own."""
    env = f"ARENA_{kind.upper()}_URL"
    return os.environ.get(env) or services.server(kind).url


def where(url: str) -> str:
    """host:port of a server URL, without its user or password (what meta.json records)."""
    parts = urlsplit(url)
    return f"{parts.hostname}:{parts.port}" if parts.port else str(parts.hostname)


def with_database(url: str, database: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, f"/{database}", parts.query, parts.fragment))


def server_version(kind: StoreKind, url: str | None = None) -> str:
    """What the server says it is ("PostgreSQL 15.18", "Redis 7.0.15"); raises StoreError when it does not answer."""
    url = url or server_url(kind)
    try:
        if kind == "postgres":
            import psycopg

            with psycopg.connect(url, connect_timeout=5, autocommit=True) as conn:
                row = conn.execute("SHOW server_version").fetchone()
            return f"PostgreSQL {str(row[0]).split()[0] if row else '?'}"
        import redis

        client = redis.Redis.from_url(url, socket_timeout=5)
        try:
            return f"Redis {client.info('server')['redis_version']}"
        finally:
            client.close()
    except ImportError as exc:
        raise StoreError(f"--store {kind} needs its driver: uv sync --extra stores ({exc.name} is missing)") from None
    except Exception as exc:  # noqa: BLE001 - any driver error: the server is not there
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise StoreError(f"no {kind} server at {where(url)} ({first}); start one with `scripts/services up`, "
                         f"or set ARENA_{kind.upper()}_URL") from None


def describe(kind: StoreKind) -> dict[str, Any]:
    """What a run's meta.json says about its store: its kind, server and version (no credentials)."""
    if kind == "sqlite":
        return {"kind": "sqlite"}
    url = server_url(kind)
    return {"kind": kind, "server": where(url), "version": server_version(kind, url)}


def scoped(arena: str, kind: StoreKind) -> str:
    """The name a run of `arena` on that store goes by in run directories and the matrix: `durable_state@postgres`
    (the arena itself on SQLite, its default store)."""
    return arena if kind == "sqlite" else f"{arena}@{kind}"


def unscoped(name: str) -> tuple[str, StoreKind]:
    """(arena, store) of a scoped name; a name without a store is the arena on SQLite."""
    arena, _, kind = name.partition("@")
    return (arena, kind) if kind in SERVER_STORES else (name, "sqlite")  # type: ignore[return-value]


def why_not_kept(info: AdapterInfo, kind: StoreKind) -> str | None:
    """Why this adapter is not measured on that store (None: it is): its framework has no store for that server, as
    its `postgres` / `redis` channel says. Never a silent fallback to SQLite."""
    if kind == "sqlite":
        return None
    channel = info.channel(kind)
    if channel is None:
        return f"{info.name} has no {kind} store (no `{kind}` channel in its AdapterInfo): nothing would be measured"
    if channel.kind == "unsupported":
        return f"{info.name} has no {kind} store: {channel.mechanism}"
    return None


@dataclass
class ItemStore:
    """One item's store while it runs: what its legs are given, and how to restart its server (a private one)."""

    store: Store
    restart: Callable[[], None] | None = None


def _name(item_id: str) -> str:
    return f"arena_{re.sub(r'[^a-z0-9]+', '_', item_id.lower())[:30]}_{secrets.token_hex(4)}"


@contextmanager
def item_store(kind: StoreKind, item_id: str, restart: bool = False) -> Iterator[ItemStore]:
    """The item's own place on a `kind` server for as long as it runs (nothing for SQLite). With `restart`, the server
    is a private one started for this item, and `ItemStore.restart` stops and restarts it."""
    if kind == "sqlite":
        yield ItemStore(Store())
        return
    private: services.Server | None = None
    scratch = None
    try:
        if restart:
            scratch = tempfile.mkdtemp(prefix=f"arena-{kind}-")
            private = services.server(kind, Path(scratch) / kind, services.free_port())
            try:
                private.start()
            except (services.ServiceError, OSError) as exc:
                raise StoreError(f"the item's private {kind} server did not start: {exc}") from None
        url = private.url if private is not None else server_url(kind)
        name = _name(item_id)
        if kind == "postgres":
            _create_database(url, name)
            store = Store(kind="postgres", url=with_database(url, name))
        else:
            store = Store(kind="redis", url=url, prefix=f"{name}:")
        try:
            yield ItemStore(store, restart=_restarter(private) if private is not None else None)
        finally:
            if private is None:  # a private server goes with its data; on the shared one, the item's part goes
                _remove(store, name, url)
    finally:
        if private is not None:
            try:
                private.stop()
            except services.ServiceError:
                pass
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)


def _restarter(server: services.Server) -> Callable[[], None]:
    def restart() -> None:
        server.stop()
        server.start()
    return restart


def _create_database(url: str, name: str) -> None:
    try:
        import psycopg

        with psycopg.connect(url, connect_timeout=10, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
    except ImportError:
        raise StoreError("--store postgres needs psycopg: uv sync --extra stores") from None
    except Exception as exc:  # noqa: BLE001 - the server is not there, or the role may not create databases
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise StoreError(f"cannot create the item's database on {where(url)}: {first}") from None


def _remove(store: Store, name: str, url: str) -> None:
    """Best effort: what is left is the item's own and harms no other item."""
    try:
        if store.kind == "postgres":
            import psycopg

            with psycopg.connect(url, connect_timeout=10, autocommit=True) as conn:
                conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        else:
            import redis

            client = redis.Redis.from_url(url, socket_timeout=10)
            try:
                keys = list(client.scan_iter(match=f"{store.prefix}*", count=500))
                for start in range(0, len(keys), 500):
                    client.delete(*keys[start:start + 500])
            finally:
                client.close()
    except Exception:  # noqa: BLE001, S110
        pass
