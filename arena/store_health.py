"""Whether an item's store server stayed up, one and the same server, for the whole item (`--store postgres|redis`).

A store that died under an item spoils its measurement whatever the framework did: the item is `errored` (could not
measure) with the cause, never `failed`. The harness does not take anyone's word for it: it asks the server for its
identity when the item's store is made and again when the item is over — PostgreSQL's `pg_postmaster_start_time()`,
Redis's `INFO server` run_id, both new after any restart — and an unreachable server or a new identity is a death.
The harness's own planned restart (an item with `restart_store`, `ItemStore.restart`) is not: the identity is checked
right before it (a death before it still counts) and taken again right after it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from arena.stores import ItemStore, where

NAMES = {"postgres": "PostgreSQL", "redis": "Redis"}
PROBE_TIMEOUT_S = 5.0


def identity(kind: str, url: str) -> str | None:
    """The server's identity now (it changes when the server restarts), or None when it does not answer."""
    try:
        if kind == "postgres":
            import psycopg

            with psycopg.connect(url, connect_timeout=int(PROBE_TIMEOUT_S), autocommit=True) as conn:
                row = conn.execute("SELECT pg_postmaster_start_time()::text").fetchone()
            return str(row[0]) if row else None
        import redis

        client = redis.Redis.from_url(url, socket_timeout=PROBE_TIMEOUT_S, socket_connect_timeout=PROBE_TIMEOUT_S)
        try:
            info: Any = client.info("server")
            return str(info["run_id"])
        finally:
            client.close()
    except Exception:  # noqa: BLE001 - any driver error: the server does not answer
        return None


class StoreHealth:
    """One item's store server, watched from the item's start to its end (`finish`)."""

    def __init__(self, kind: str, url: str) -> None:
        self.kind, self.url = kind, url
        self.name = NAMES.get(kind, kind)
        self._lock = threading.Lock()
        self._baseline = identity(kind, url) if kind in NAMES else None
        self._cause: str | None = None
        self._done = False
        self.planned_restarts = 0

    def _check(self, when: str) -> None:
        """Compare the server's identity with the baseline; the first difference is the item's cause."""
        if self._cause is not None or self.kind not in NAMES:
            return
        now = identity(self.kind, self.url)
        if now is None:
            self._cause = (f"the {self.name} server died during the item: it did not answer at {where(self.url)} "
                           f"{when} (not measured)")
        elif self._baseline is not None and now != self._baseline:
            self._cause = (f"the {self.name} server died during the item: it restarted unplanned (a new "
                           f"{'start time' if self.kind == 'postgres' else 'run_id'} {when}; not measured)")

    def planned(self, restart: Callable[[], None] | None) -> Callable[[], None] | None:
        """The harness's own restart of the server, so that the new identity it gives the server is not a death."""
        if restart is None:
            return None

        def planned_restart() -> None:
            with self._lock:
                self._check("before the harness's planned restart")
            restart()
            with self._lock:
                self.planned_restarts += 1
                self._baseline = identity(self.kind, self.url)
        return planned_restart

    def finish(self) -> str | None:
        """Why the item could not be measured because of its store server (None: it stayed up), checked once at the
        item's end; later calls say the same."""
        with self._lock:
            if not self._done:
                self._done = True
                self._check("at the item's end")
            return self._cause


@contextmanager
def watching(own: ItemStore) -> Iterator[StoreHealth | None]:
    """The item's store server watched while the block runs (None on SQLite: no server); checked when it ends, before
    the item's store is removed (a private server is stopped after it)."""
    if own.store.kind not in NAMES or not own.admin_url:
        yield None
        return
    health = StoreHealth(own.store.kind, own.admin_url)
    try:
        yield health
    finally:
        health.finish()
