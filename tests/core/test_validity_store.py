"""Issue 50, section 1: a store that is declared but not used. The harness observes the item's PostgreSQL database or
Redis key prefix itself (`arena.stores.StoreWatch`, `store_seen` events) and the store checks (`arena/store_checks.py`)
fail an adapter that keeps its paused state elsewhere, each for its own reason; the reference passes them."""

from __future__ import annotations

import pytest

import arena
from arena import stores
from arena.catalog import load_arena
from arena.checks import STORE_CHECKS, run_checks
from arena.results import ItemResult
from arena.types import TraceEvent
from tests.store_faults import DecoyKeeper, FileKeeper, Outsider

pytestmark = pytest.mark.usefixtures("store_servers")

PLACE = {"postgres": "PostgreSQL database", "redis": "Redis key prefix"}


def _one(cls: type, kind: str, tmp_path, arena_name: str = "durable_state", item: str = "durable-01") -> ItemResult:
    (run,) = arena.evaluate(arena_name, [cls], store=kind, out=tmp_path, items=[item])
    (result,) = run.results
    return result


def _reason(result: ItemResult, name: str) -> str | None:
    """The check's reason if it failed, None if it passed."""
    found = next(c for c in result.checks if c.name == name)
    return None if found.passed else found.reason


@pytest.mark.parametrize("kind", ["postgres", "redis"])
def test_a_state_kept_in_a_file_beside_the_declared_store_fails_three_ways(kind, tmp_path):
    result = _one(FileKeeper, kind, tmp_path)
    assert result.status == "failed"
    assert _reason(result, "store_held_pause") == \
        f"at pause 1 the item's {PLACE[kind]} held nothing: the paused state is kept elsewhere"
    assert f"the resumed run never read the item's {PLACE[kind]}" in (_reason(result, "store_read_at_resume") or "")
    workdir = _reason(result, "no_state_in_workdir") or ""
    assert workdir.startswith("vanilla_durable.json (") and "holding the item's own input text" in workdir
    assert f"on a {kind} store run: a local copy of the paused state" in workdir
    assert _reason(result, "store_namespace_own") is None  # it wrote nothing on the server at all
    # everything else of the item passes: only the store checks see the fault
    assert {c.name for c in result.checks if not c.passed} == {"store_held_pause", "store_read_at_resume",
                                                               "no_state_in_workdir"}


@pytest.mark.parametrize("kind", ["postgres", "redis"])
def test_a_decoy_written_to_the_store_but_never_read_back_fails_the_read(kind, tmp_path):
    result = _one(DecoyKeeper, kind, tmp_path)
    assert _reason(result, "store_held_pause") is None  # what the store holds looks right
    read = _reason(result, "store_read_at_resume") or ""
    how = "no scan of its tables" if kind == "postgres" else "no read command on its keys"
    assert read == (f"after resume 1 the resumed run never read the item's {PLACE[kind]} ({how} until the end): "
                    "the paused state was loaded from elsewhere")
    assert "vanilla_durable.json" in (_reason(result, "no_state_in_workdir") or "")


def test_a_key_outside_the_items_prefix_is_refused_and_named(tmp_path):
    """On its own, with no other item beside it: the item's ACL user may touch only its prefix; the server's ACL LOG
    names the key it was refused."""
    result = _one(Outsider, "redis", tmp_path)
    assert result.status == "failed"
    assert _reason(result, "store_namespace_own") == (
        "at the end: the item's ACL user was refused 'vanilla_durable.json' (key outside its prefix, toplevel, 1x): "
        "state written outside the item's own Redis key prefix")
    assert "NoPermissionError" in (_reason(result, "completed") or "")


def test_a_table_outside_the_items_database_is_refused_by_the_server(tmp_path):
    """The item's role owns its database only: a table in the server's `postgres` database is refused (PostgreSQL 15
    gives no role but the owner CREATE in another database's public schema), and the store held nothing."""
    result = _one(Outsider, "postgres", tmp_path)
    assert "permission denied for schema public" in (_reason(result, "completed") or "")
    assert _reason(result, "store_held_pause") is not None


def test_the_watch_sees_what_the_items_role_holds_in_another_database():
    """Where the server lets the item's role keep something outside its database (here a temporary table, on a
    connection it holds), the observation names it, and `store_namespace_own` fails with it."""
    import psycopg

    with stores.item_store("postgres", "outside") as own, own.watching("/nonexistent") as watch:
        assert watch is not None
        before = watch.observe("before")
        assert before["outside"] == [] and before["holds"] == {}
        with psycopg.connect(stores.with_database(own.store.url, "postgres"), autocommit=True) as conn:
            conn.execute("CREATE TEMP TABLE journal (data text)")
            seen = watch.observe("pause")
        assert any(o.startswith("the item's role owns ") and o.endswith(" object(s) in database 'postgres', not its own")
                   for o in seen["outside"]), seen["outside"]
        assert "the item's role is connected to database 'postgres', not its own" in seen["outside"]
    trace = [TraceEvent(seq=0, leg=0, type="store_seen", text="before", data=before),
             TraceEvent(seq=1, leg=0, type="store_seen", text="pause", data=seen)]
    spec = load_arena("durable_state")
    checks = {c.name: c for c in run_checks(spec.items[0], trace, spec, store="postgres")}
    assert set(STORE_CHECKS) <= set(checks)
    assert not checks["store_namespace_own"].passed
    assert checks["store_namespace_own"].reason.startswith("at the pause: the item's role owns ")
    assert checks["store_namespace_own"].reason.endswith("state written outside the item's own PostgreSQL database")


def test_each_item_gets_its_own_role_and_user_no_other_item_may_use():
    """The item's place is its own by the server's rules: another item's role cannot connect to its database, and its
    ACL user cannot read another item's keys."""
    import psycopg
    import redis

    with stores.item_store("postgres", "a") as a, stores.item_store("postgres", "b") as b:
        other = stores.with_database(b.store.url, a.store.url.rsplit("/", 1)[1])
        with pytest.raises(psycopg.OperationalError, match="permission denied for database"):
            psycopg.connect(other, connect_timeout=5).close()
    with stores.item_store("redis", "a") as a, stores.item_store("redis", "b") as b:
        client = redis.Redis.from_url(b.store.url)
        try:
            with pytest.raises(redis.exceptions.NoPermissionError):
                client.get(f"{a.store.prefix}journal")
            client.set(f"{b.store.prefix}journal", "x")  # its own prefix: allowed
        finally:
            client.close()


@pytest.mark.parametrize("kind", ["postgres", "redis"])
def test_the_reference_passes_the_store_checks_on_crash_recovery(kind, tmp_path):
    """vanilla_durable keeps its journal in the item's store and reads it back at the resume and the recovery."""
    (run,) = arena.evaluate("crash_recovery", ["vanilla_durable"], store=kind, out=tmp_path,
                            items=["cr-01", "cr-12"])
    for result in run.results:
        failed = {c.name: c.reason for c in result.checks if not c.passed and c.name in STORE_CHECKS}
        assert failed == {}, (result.item_id, failed)


def test_the_reference_passes_every_durable_item_on_redis(tmp_path):
    (run,) = arena.evaluate("durable_state", ["vanilla_durable"], store="redis", out=tmp_path)
    assert run.summary is not None and run.summary.passed == 12, \
        [(r.item_id, [c.reason for c in r.checks if not c.passed]) for r in run.results if r.status != "passed"]
    for result in run.results:
        assert set(STORE_CHECKS) <= {c.name for c in result.checks}


def test_a_state_kept_in_a_file_fails_crash_recovery_too(tmp_path):
    """crash_recovery's recovery resumes from the same file: the store checks see it there too."""
    result = _one(FileKeeper, "redis", tmp_path, "crash_recovery", "cr-01")
    assert _reason(result, "store_held_pause") == \
        "at pause 1 the item's Redis key prefix held nothing: the paused state is kept elsewhere"
    assert "never read the item's Redis key prefix" in (_reason(result, "store_read_at_resume") or "")
    assert "vanilla_durable.json" in (_reason(result, "no_state_in_workdir") or "")
