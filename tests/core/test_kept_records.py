"""`KeptRecords`: a paused state kept on the item's own server behind an id (what openai_agents and pydantic_ai use on
`--store postgres|redis`), against the project's real PostgreSQL and Redis servers."""

from __future__ import annotations

import asyncio

import pytest

from arena import stores
from arena.errors import InvalidValue, NotFound
from arena.for_adapters import KeptRecords, Store


@pytest.mark.usefixtures("store_servers")
@pytest.mark.parametrize("kind", ["postgres", "redis"])
def test_a_record_is_kept_in_the_items_own_place_and_read_back_by_its_id(kind):
    fields = {"state": '{"run": "paused"}', "session_id": "s-1", "note": "é ünïcode"}
    with stores.item_store(kind, "kept-records") as own:
        records = KeptRecords(own.store, "kept_test_states", "kept:state")
        first = asyncio.run(records.add(fields))
        second = asyncio.run(records.add({"state": "another"}))
        assert first != second and len(first) == 32
        assert asyncio.run(records.get(first)) == fields
        assert asyncio.run(records.get(second)) == {"state": "another"}
        with pytest.raises(NotFound, match=f"no record nope in .* of the item's {kind} store"):
            asyncio.run(records.get("nope"))
        if kind == "postgres":  # a row of the item's own database: the harness's observation sees the table
            import psycopg

            with psycopg.connect(own.store.url, autocommit=True) as conn:
                rows = conn.execute("SELECT id, fields->>'session_id' FROM kept_test_states ORDER BY id").fetchall()
            assert sorted(rows) == sorted([(first, "s-1"), (second, None)])
        else:  # a hash under the item's prefix, nothing outside it
            import redis

            client = redis.Redis.from_url(own.store.url, decode_responses=True)
            try:
                assert set(client.scan_iter(match="*kept:state*")) == {
                    f"{own.store.prefix}kept:state:{first}", f"{own.store.prefix}kept:state:{second}"}
                assert client.hgetall(f"{own.store.prefix}kept:state:{first}") == fields
            finally:
                client.close()


@pytest.mark.usefixtures("store_servers")
def test_a_record_read_before_any_was_kept_is_not_found():
    """A new item's database has no table yet: reading is NotFound, not an error of the missing table."""
    with stores.item_store("postgres", "kept-none") as own:
        with pytest.raises(NotFound, match="no record x in kept_test_states"):
            asyncio.run(KeptRecords(own.store, "kept_test_states", "kept:state").get("x"))


def test_the_default_store_and_an_unsafe_table_name_are_refused():
    with pytest.raises(InvalidValue, match="a sqlite store keeps no records on a server"):
        KeptRecords(Store(), "t", "k")
    with pytest.raises(InvalidValue, match="not a plain table name"):
        KeptRecords(Store(kind="postgres", url="postgresql://x/y"), "t; DROP TABLE x", "k")
