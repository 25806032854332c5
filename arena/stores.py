"""`--store postgres|redis`: each item's own place on a real server, made before its first leg, removed after it.

PostgreSQL: a database of the item's own (`CREATE DATABASE`), so a framework's tables (a checkpointer's, a session
service's) are the item's alone; Redis: a key prefix no other item uses. Concurrent items never see each other's
state. The servers are the project's (`arena/services.py`, `scripts/services up`) unless `ARENA_POSTGRES_URL` /
`ARENA_REDIS_URL` point elsewhere (your own servers: the role must be allowed to create databases).

An item with `metadata["restart_store"]` has its store's server stopped and restarted while its run is paused: it
gets a private server of its own (started here from the same packages), so the restart touches no other item.

Each item's place is its own by the server's rules, not by convention: a PostgreSQL role of the item's own owns its
database (which no other role may connect to), and a Redis ACL user of its own may touch only keys under its prefix.
`StoreWatch` is the harness's own eye on it (never the adapter's word): what the database or prefix holds, whether it
was read (PostgreSQL's table statistics, Redis's `MONITOR`), what the item's role or user did outside it, and what
was written in the item's work directory; the runner records each observation as a `store_seen` trace event.
"""

from __future__ import annotations

import hashlib
import os
import re
import secrets
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from arena import services
from arena.run_id import SERVER_STORES, ArenaLabel
from arena.types import AdapterInfo, Store, StoreKind
from arena.errors import ArenaError

STORES: tuple[StoreKind, ...] = ("sqlite", "postgres", "redis")
RESTART = "restart_store"  # the item metadata key: its store's server restarts during the pause


class StoreError(ArenaError, RuntimeError):
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
    return ArenaLabel(arena, kind).text


def unscoped(name: str) -> tuple[str, StoreKind]:
    """(arena, store) of a scoped name; a name without a store is the arena on SQLite."""
    label = ArenaLabel.parse(name)
    return (label.name, label.store) if label.store != "sqlite" else (name, "sqlite")


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
    """One item's store while it runs: what its legs are given, how to restart its server (a private one), and how
    the harness reaches it to observe it (`watching`)."""

    store: Store
    restart: Callable[[], None] | None = None
    admin_url: str = ""  # the harness's own connection to the server (never given to the adapter)
    name: str = ""  # the item's database (PostgreSQL) or its role / ACL user, and its prefix's stem

    @contextmanager
    def watching(self, workdir: str, marks: tuple[str, ...] = ()) -> Iterator[StoreWatch | None]:
        """The harness's observer of this store and of the item's work directory, for as long as the item runs (None
        on SQLite: the work directory is where that store is)."""
        if self.store.kind == "sqlite":
            yield None
            return
        watch = StoreWatch(self, workdir, marks)
        try:
            watch.start()
            yield watch
        finally:
            watch.stop()


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
        secret = secrets.token_hex(16)
        if kind == "postgres":
            _create_database(url, name, secret)
            store = Store(kind="postgres", url=with_database(_with_user(url, name, secret), name))
        else:
            store = Store(kind="redis", url=_with_user(url, name, secret), prefix=f"{name}:")
            _create_redis_user(url, name, secret, store.prefix)
        try:
            restarter = None
            if private is not None:
                restarter = _restarter(private, (lambda: _create_redis_user(url, name, secret, store.prefix))
                                       if kind == "redis" else None)
            yield ItemStore(store, restart=restarter, admin_url=url, name=name)
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


def _restarter(server: services.Server, then: Callable[[], None] | None = None) -> Callable[[], None]:
    def restart() -> None:
        server.stop()
        server.start()
        if then is not None:  # what the server does not keep across a restart (a Redis ACL user)
            then()
    return restart


def _with_user(url: str, user: str, secret: str) -> str:
    """The server's URL, signed in as the item's own role (PostgreSQL) or ACL user (Redis)."""
    parts = urlsplit(url)
    host = f"{parts.hostname}:{parts.port}" if parts.port else str(parts.hostname)
    return urlunsplit((parts.scheme, f"{user}:{secret}@{host}", parts.path, parts.query, parts.fragment))


def _create_database(url: str, name: str, secret: str) -> None:
    """The item's role, and its database owned by it: the role may create what it likes there (its framework's tables
    and schemas), may not create databases or roles, and no other role of the server's but the harness's may connect
    to the item's database."""
    try:
        import psycopg

        with psycopg.connect(url, connect_timeout=10, autocommit=True) as conn:
            conn.execute(f"CREATE ROLE \"{name}\" LOGIN PASSWORD '{secret}'")
            conn.execute(f'CREATE DATABASE "{name}" OWNER "{name}"')
            conn.execute(f'REVOKE CONNECT, TEMPORARY ON DATABASE "{name}" FROM PUBLIC')
            conn.execute(f'GRANT CONNECT, TEMPORARY ON DATABASE "{name}" TO "{name}"')
    except ImportError:
        raise StoreError("--store postgres needs psycopg: uv sync --extra stores") from None
    except Exception as exc:  # noqa: BLE001 - the server is not there, or the role may not create databases/roles
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise StoreError(f"cannot create the item's role and database on {where(url)} (the role needs CREATEDB and "
                         f"CREATEROLE): {first}") from None


def _create_redis_user(url: str, name: str, secret: str, prefix: str) -> None:
    """The item's ACL user: every command, every channel, and only the keys under the item's prefix (the server
    refuses any other key, and its ACL LOG says which)."""
    try:
        import redis

        client = redis.Redis.from_url(url, socket_timeout=10)
        try:
            client.execute_command(  # type: ignore[no-untyped-call]
                "ACL", "SETUSER", name, "reset", "on", f">{secret}", f"~{prefix}*", "&*", "+@all")
        finally:
            client.close()
    except ImportError:
        raise StoreError("--store redis needs redis-py: uv sync --extra stores") from None
    except Exception as exc:  # noqa: BLE001 - the server is not there, or the connection may not manage ACL users
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise StoreError(f"cannot create the item's ACL user on {where(url)} (ACL SETUSER): {first}") from None


def _remove(store: Store, name: str, url: str) -> None:
    """Best effort: what is left is the item's own and harms no other item."""
    try:
        if store.kind == "postgres":
            import psycopg

            with psycopg.connect(url, connect_timeout=10, autocommit=True) as conn:
                conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
                conn.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = %s", (name,))
                for attempt in range(5):  # a terminated session's temporary objects go as it exits
                    try:
                        conn.execute(f'DROP ROLE IF EXISTS "{name}"')
                        break
                    except psycopg.Error:
                        time.sleep(0.2 * (attempt + 1))
        else:
            import redis

            client = redis.Redis.from_url(url, socket_timeout=10)
            try:
                keys = list(client.scan_iter(match=f"{store.prefix}*", count=500))
                for start in range(0, len(keys), 500):
                    client.delete(*keys[start:start + 500])
                client.execute_command("ACL", "DELUSER", name)  # type: ignore[no-untyped-call]
            finally:
                client.close()
    except Exception:  # noqa: BLE001, S110
        pass


# -- what the harness observes of an item's store ------------------------------------------------------------------

READ_WAIT_S = 3.0  # how long an observation after a resume waits for the store's read counters to show a read
_FILE_SCAN_BYTES = 8 << 20  # how much of a file written in the work directory is searched for the run's own text
_PG_TABLES = """SELECT n.nspname, c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
 WHERE c.relkind IN ('r', 'p') AND n.nspname NOT IN ('pg_catalog', 'information_schema')
   AND n.nspname NOT LIKE 'pg_toast%%' AND n.nspname NOT LIKE 'pg_temp%%' ORDER BY 1, 2"""
_PG_READS = """SELECT schemaname, relname, coalesce(seq_scan, 0) + coalesce(idx_scan, 0) FROM pg_stat_user_tables
 WHERE schemaname NOT LIKE 'pg_temp%%'"""
_PG_OWNED_ELSEWHERE = """SELECT d.datname, count(*) FROM pg_shdepend s JOIN pg_database d ON d.oid = s.dbid
 JOIN pg_roles r ON r.oid = s.refobjid
 WHERE s.refclassid = 'pg_authid'::regclass AND r.rolname = %s AND d.datname <> %s GROUP BY 1 ORDER BY 1"""
_PG_CONNECTED_ELSEWHERE = """SELECT DISTINCT datname FROM pg_stat_activity
 WHERE usename = %s AND datname IS DISTINCT FROM %s ORDER BY 1"""


class StoreWatch:
    """The harness's own observations of one item's store and work directory, as JSON for a `store_seen` event.

    `observe(moment)` returns what it sees now: `holds`, what the item's database holds (a row count and a digest of
    every table's rows, read by the harness) or its prefix (a digest of each key's `DUMP`); `reads`, how often the
    item's tables were scanned (PostgreSQL's `pg_stat_user_tables`: seq_scan + idx_scan) or read commands were sent on
    the item's keys (Redis `MONITOR`, the harness's own commands left out) since the item began; `outside`, what the
    item's role did in another database (objects it owns there, connections to it) or which keys outside its prefix
    the item's ACL user was refused (`ACL LOG`); `written`, the files in the item's work directory created or changed
    since the first observation (`before`), each with whether it holds the run's own text (`marks`: the item's input).
    An observation after a `resume` one waits (at most READ_WAIT_S) for the read counters to move: PostgreSQL reports a
    backend's counts when it goes idle or exits, not at once."""

    def __init__(self, own: ItemStore, workdir: str, marks: tuple[str, ...] = ()) -> None:
        self.own, self.store, self.workdir = own, own.store, workdir
        self.marks = tuple(m for m in marks if m)
        self._files: dict[str, tuple[int, int]] | None = None
        self._last: dict[str, Any] | None = None
        self._stop = threading.Event()
        self._ready = threading.Event()
        self._lock = threading.Lock()
        self._reads = 0  # Redis: read commands on the item's keys that MONITOR showed, the harness's own left out
        self._harness: set[str] = set()  # Redis: the addresses of the harness's own observing connections
        self._monitor: Any = None
        self._thread: threading.Thread | None = None
        self._readonly: frozenset[str] = frozenset()

    # -- lifetime ----------------------------------------------------------------------------------------------

    def start(self) -> None:
        if self.store.kind != "redis":
            return
        import redis

        client = redis.Redis.from_url(self.own.admin_url, socket_timeout=10)
        try:
            table = client.command()
            self._readonly = frozenset(str(name).lower() for name, spec in table.items()
                                       if "readonly" in (spec.get("flags") or []))
        except Exception as exc:  # noqa: BLE001 - the server is not there
            raise StoreError(f"cannot observe the item's Redis prefix (COMMAND): {exc}") from None
        finally:
            client.close()
        self._thread = threading.Thread(target=self._listen, name="arena-store-monitor", daemon=True)
        self._thread.start()
        if not self._ready.wait(10):
            raise StoreError(f"cannot observe the item's Redis prefix: MONITOR did not start on "
                             f"{where(self.own.admin_url)}")

    def stop(self) -> None:
        self._stop.set()
        monitor = self._monitor
        if monitor is not None:
            try:
                monitor.connection.disconnect()
            except Exception:  # noqa: BLE001, S110 - it is going anyway
                pass
        if self._thread is not None:
            self._thread.join(5)

    def _listen(self) -> None:
        """Count the read commands on the item's keys, whoever sends them but the harness (a private server's restart
        drops the connection: it is made again)."""
        import redis

        prefix = self.store.prefix
        while not self._stop.is_set():
            client = redis.Redis.from_url(self.own.admin_url)
            try:
                with client.monitor() as monitor:  # type: ignore[no-untyped-call]
                    self._monitor = monitor
                    self._ready.set()
                    while not self._stop.is_set():
                        seen = monitor.next_command()
                        command = str(seen.get("command") or "")
                        if prefix not in command:
                            continue
                        sender = f"{seen.get('client_address')}:{seen.get('client_port')}"
                        name = command.split(" ", 1)[0].lower()
                        with self._lock:
                            if sender not in self._harness and name in self._readonly:
                                self._reads += 1
            except Exception:  # noqa: BLE001 - the server went away (a restart) or the watch stopped
                if not self._stop.is_set():
                    time.sleep(0.1)
            finally:
                self._monitor = None
                client.close()

    # -- observing ----------------------------------------------------------------------------------------------

    def observe(self, moment: str) -> dict[str, Any]:
        """What the item's store and work directory hold now (`moment`: before, pause, resume, end)."""
        after_resume = self._last is not None and self._last.get("moment") == "resume"
        since = int(self._last["reads"]) if after_resume and self._last is not None else None
        content = moment != "resume"  # the resume's observation only counts reads: the pause's said what it held
        try:
            seen = self._postgres(content, since) if self.store.kind == "postgres" else self._redis(content, since)
        except StoreError:
            raise
        except Exception as exc:  # noqa: BLE001 - the server failed the harness: the item cannot be measured
            first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            raise StoreError(f"the harness could not observe the item's {self.store.kind} store: {first}") from None
        if not content:
            seen.pop("holds", None)
        seen = {"moment": moment, "kind": self.store.kind, **seen, "written": self._written(moment)}
        self._last = seen
        return seen

    def _postgres(self, content: bool, since: int | None) -> dict[str, Any]:
        import psycopg
        from psycopg import sql

        name = self.own.name
        deadline = time.monotonic() + READ_WAIT_S
        with psycopg.connect(with_database(self.own.admin_url, name), autocommit=True, connect_timeout=10) as conn:
            while True:  # the counters first: the harness's own reads below are not in them
                per_table = {f"{s}.{t}": int(n) for s, t, n in conn.execute(_PG_READS).fetchall()}
                reads = sum(per_table.values())
                if since is None or reads > since or time.monotonic() >= deadline:
                    break
                time.sleep(0.2)
            holds: dict[str, Any] = {}
            if content:
                for setting in ("enable_indexscan", "enable_indexonlyscan", "enable_bitmapscan"):
                    conn.execute(f"SET {setting} = off")  # one sequential scan per table, the same every time
                for schema, table in conn.execute(_PG_TABLES).fetchall():
                    query = sql.SQL("SELECT count(*), md5(coalesce(string_agg(t::text, E'\\n' ORDER BY t::text), '')) "
                                    "FROM {}.{} AS t").format(sql.Identifier(schema), sql.Identifier(table))
                    row = conn.execute(query).fetchone()
                    rows, digest = (int(row[0]), str(row[1])) if row else (0, "")
                    holds[f"{schema}.{table}"] = {"rows": rows, "digest": digest[:16]}
                try:  # this connection's scans are counted now, before the next observation reads the counters
                    conn.execute("SELECT pg_stat_force_next_flush()")
                except psycopg.Error:
                    pass
        outside: list[str] = []
        with psycopg.connect(self.own.admin_url, autocommit=True, connect_timeout=10) as conn:
            for database, count in conn.execute(_PG_OWNED_ELSEWHERE, (name, name)).fetchall():
                outside.append(f"the item's role owns {count} object(s) in database {database!r}, not its own")
            for (database,) in conn.execute(_PG_CONNECTED_ELSEWHERE, (name, name)).fetchall():
                outside.append(f"the item's role is connected to database {database!r}, not its own")
        return {"holds": holds, "reads": reads, "read_tables": per_table, "outside": outside}

    def _redis(self, content: bool, since: int | None) -> dict[str, Any]:
        import redis

        prefix, name = self.store.prefix, self.own.name
        client = redis.Redis.from_url(self.own.admin_url, socket_timeout=10)
        try:
            info = client.client_info()
            with self._lock:
                self._harness.add(str(info.get("addr")))
            deadline = time.monotonic() + READ_WAIT_S
            while True:
                with self._lock:
                    reads = self._reads
                if since is None or reads > since or time.monotonic() >= deadline:
                    break
                time.sleep(0.1)
            holds: dict[str, Any] = {}
            if content:
                for key in sorted(client.scan_iter(match=f"{prefix}*", count=500)):
                    dumped = client.dump(key)
                    if dumped is not None:
                        holds[key.decode(errors="replace")[len(prefix):]] = hashlib.sha1(dumped).hexdigest()[:16]
            outside = [f"the item's ACL user was refused {entry.get('object')!r} ({entry.get('reason')} outside its "
                       f"prefix, {entry.get('context')}, {entry.get('count')}x)"
                       for entry in client.acl_log() if str(entry.get("username")) == name]
        finally:
            client.close()
        return {"holds": holds, "reads": reads, "outside": outside}

    def _written(self, moment: str) -> list[dict[str, Any]]:
        """The files in the work directory created or changed since the first observation (none at the first)."""
        now: dict[str, tuple[int, int]] = {}
        for root, _dirs, files in os.walk(self.workdir):
            for file in files:
                path = os.path.join(root, file)
                try:
                    st = os.stat(path)
                except OSError:
                    continue
                now[os.path.relpath(path, self.workdir)] = (st.st_size, st.st_mtime_ns)
        if self._files is None:
            self._files = now
            return []
        written = []
        for rel, (size, mtime) in sorted(now.items()):
            if self._files.get(rel) != (size, mtime):
                written.append({"path": rel, "bytes": size, "holds_run_text": self._holds_marks(rel)})
        return written

    def _holds_marks(self, rel: str) -> bool:
        if not self.marks:
            return False
        try:
            with open(os.path.join(self.workdir, rel), "rb") as fh:
                data = fh.read(_FILE_SCAN_BYTES)
        except OSError:
            return False
        return any(m.encode() in data for m in self.marks)


def marked(text: str) -> str:
    """The run's own text a local copy of its state would hold: the longest plain-ASCII stretch of the item's input
    (at most 40 characters), as a JSON or SQLite file keeps it verbatim."""
    runs = re.findall(r"[A-Za-z0-9 ,.$-]{12,}", text)
    return max(runs, key=len)[:40].strip() if runs else ""
