"""`--store postgres|redis` (issue 27): each item's own place on a real server, the restart during the pause, the
declared store channels, the scoped run names and the matrix's per-store columns."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

import arena
from arena import stores
from arena.report import compute_matrix
from arena.types import AdapterInfo, Channel
from arena_builtins.adapters.vanilla import VanillaAdapter
from tests.core.test_cli_friendly import arena as arena_cli

pytestmark = pytest.mark.usefixtures("store_servers")


def _peek(store) -> list[str]:
    """What an item sees of the server: the marks in its own database, or the keys under its own prefix."""
    if store.kind == "postgres":
        import psycopg

        with psycopg.connect(store.url, autocommit=True) as conn:
            conn.execute("CREATE TABLE IF NOT EXISTS marks (item text)")
            return [r[0] for r in conn.execute("SELECT item FROM marks").fetchall()]
    import redis

    client = redis.Redis.from_url(store.url)
    try:
        return sorted(k.decode() for k in client.scan_iter(match=f"{store.prefix}*"))
    finally:
        client.close()


def _mark(store, item: str) -> None:
    if store.kind == "postgres":
        import psycopg

        with psycopg.connect(store.url, autocommit=True) as conn:
            conn.execute("CREATE TABLE IF NOT EXISTS marks (item text)")
            conn.execute("INSERT INTO marks VALUES (%s)", (item,))
        return
    import redis

    client = redis.Redis.from_url(store.url)
    try:
        client.set(f"{store.prefix}mark", item)
    finally:
        client.close()


@pytest.mark.parametrize("kind", ["postgres", "redis"])
def test_two_concurrent_items_never_see_each_others_state(kind):
    """Both items write while both are open; each sees only its own writes, and nothing is left after them."""
    both = threading.Barrier(2)
    seen: dict[str, list[str]] = {}
    places: dict[str, stores.Store] = {}

    def item(name: str) -> None:
        with stores.item_store(kind, name) as own:
            places[name] = own.store
            _mark(own.store, name)
            both.wait(timeout=30)  # the other item has written too
            seen[name] = _peek(own.store)
            both.wait(timeout=30)

    threads = [threading.Thread(target=item, args=(n,)) for n in ("item-a", "item-b")]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    a, b = places["item-a"], places["item-b"]
    assert (a.url, a.prefix) != (b.url, b.prefix)
    if kind == "postgres":
        assert seen == {"item-a": ["item-a"], "item-b": ["item-b"]}
        import psycopg

        with psycopg.connect(stores.server_url("postgres"), autocommit=True) as conn:
            names = {r[0] for r in conn.execute("SELECT datname FROM pg_database").fetchall()}
        assert not {a.url.rsplit("/", 1)[1], b.url.rsplit("/", 1)[1]} & names  # dropped after the items
    else:
        assert seen == {"item-a": [f"{a.prefix}mark"], "item-b": [f"{b.prefix}mark"]}
        # the items' keys went with them (seen by the harness's connection: the items' ACL users went too)
        server = stores.server_url("redis")
        assert _peek(a.model_copy(update={"url": server})) == [] and _peek(b.model_copy(update={"url": server})) == []


@pytest.mark.parametrize("kind", ["postgres", "redis"])
def test_a_restart_item_gets_a_private_server_that_keeps_its_data(kind):
    with stores.item_store(kind, "restarted", restart=True) as own:
        assert own.restart is not None
        assert stores.where(own.store.url) != stores.where(stores.server_url(kind))  # not the shared server
        _mark(own.store, "before")
        own.restart()
        assert _peek(own.store) == (["before"] if kind == "postgres" else [f"{own.store.prefix}mark"])
    with stores.item_store(kind, "plain") as own:
        assert own.restart is None  # the shared server is never restarted


def test_an_adapter_without_a_store_is_not_measured_never_run_on_sqlite(tmp_path):
    runs = arena.evaluate("durable_state", ["vanilla"], store="postgres", out=tmp_path)
    assert list(runs) == []
    assert "vanilla keeps the paused turn in memory" in runs.declined["vanilla"]
    unlisted = AdapterInfo(name="x", framework="x", channels=(Channel(name="ask", kind="native"),))
    assert "no `redis` channel" in (stores.why_not_kept(unlisted, "redis") or "")
    assert stores.why_not_kept(unlisted, "sqlite") is None


def test_vanilla_durable_on_postgres_restarts_the_server_during_a_pause_and_passes(tmp_path):
    (run,) = arena.evaluate("durable_state", ["vanilla_durable"], store="postgres", out=tmp_path)
    assert run.summary is not None and run.summary.passed == 12, [r.checks for r in run.results if r.status != "passed"]
    assert run.meta["arena"] == "durable_state@postgres"
    assert run.meta["store"]["kind"] == "postgres" and run.meta["store"]["version"].startswith("PostgreSQL ")
    restarted = {r.item_id for r in run.results if any(e.type == "store" for e in r.trace)}
    assert restarted == {"durable-11"}
    matrix = compute_matrix([run])
    (row,) = matrix.rows
    assert row.cells["durable_postgres"].text == "12/12"
    assert row.cells["durable"].status == "notrun" and row.cells["durable_redis"].status == "notrun"


class ForgetsAtRestart(VanillaAdapter):
    """A faulty store: it declares Redis, but its paused turn lives in memory, so a new process finds nothing."""

    info = VanillaAdapter.info.model_copy(update={"name": "forgets", "channels": tuple(
        c if c.name != "redis" else Channel(name="redis", kind="native", mechanism="claims a Redis store")
        for c in VanillaAdapter.info.channels)})


def test_a_store_that_keeps_nothing_fails_the_durable_checks(tmp_path):
    (run,) = arena.evaluate("durable_state", [ForgetsAtRestart], store="redis", out=tmp_path, items=["durable-01"])
    assert run.results[0].status != "passed"
    assert not next(c for c in run.results[0].checks if c.name == "state_survived").passed


def test_store_names_scope_and_unscope():
    assert stores.scoped("durable_state", "postgres") == "durable_state@postgres"
    assert stores.scoped("durable_state", "sqlite") == "durable_state"
    assert stores.unscoped("durable_state@redis") == ("durable_state", "redis")
    assert stores.unscoped("durable_state") == ("durable_state", "sqlite")
    assert stores.where("postgresql://user:secret@db.example:5432/x") == "db.example:5432"


def test_bad_store_input_is_one_line(tmp_path):
    done = arena_cli("run", "durable_state", "-a", "vanilla_durable", "--store", "mysql", "--out", str(tmp_path))
    assert done.returncode != 0 and "choose from sqlite, postgres, redis" in done.stderr
    assert "Traceback" not in done.stderr
    done = arena_cli("run", "durable_state", "-a", "vanilla_durable", "--store", "postgres", "--out", str(tmp_path),
                     env={"ARENA_POSTGRES_URL": "postgresql://arena@127.0.0.1:1/postgres"})
    assert done.returncode != 0 and "no postgres server at 127.0.0.1:1" in done.stderr
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1


def test_the_matrix_runs_store_cells_only_for_arenas_measured_on_stores():
    from arena.evaluation import matrix_plan

    plan = matrix_plan([("vanilla_durable", VanillaAdapter)], ["durable_state", "human_in_the_loop"],
                       store_kinds=["postgres", "redis"])
    cells = {(cell.spec.name, cell.store) for cell in plan}
    assert cells == {("durable_state", "sqlite"), ("durable_state", "postgres"), ("durable_state", "redis"),
                     ("human_in_the_loop", "sqlite")}


def test_services_script_reports_status():
    import subprocess

    script = Path(__file__).resolve().parents[2] / "scripts" / "services"
    done = subprocess.run([str(script), "status"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "postgres: running on 127.0.0.1:" in done.stdout and "redis: running on 127.0.0.1:" in done.stdout
