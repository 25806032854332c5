"""The paused state on a server (`--store postgres|redis`, the `postgres` / `redis` channels).

Pydantic AI has no store class; what it documents is persisting the run's message history yourself (JSON from
`ModelMessagesTypeAdapter`). On a server that JSON and the rest of the paused state are a record (`KeptRecords`): a
row of a table of the item's database, or a Redis hash under the item's key prefix, and the leg's state is only its
id. With SQLite (the default) nothing changes: the JSON is the state itself."""

from __future__ import annotations

import json
from typing import Any

from arena.for_adapters import KeptRecords, LegResult, Store

PAUSED_TABLE = "pydantic_ai_paused_runs"  # in the item's own PostgreSQL database
PAUSED_KEY = "pydantic_ai:paused_run"  # after the item's Redis key prefix
PAUSED_ID = "paused_run"  # the state's key for the record's id (the state then holds nothing else of the pause)


def _records(store: Store) -> KeptRecords:
    return KeptRecords(store, PAUSED_TABLE, PAUSED_KEY)


async def kept(result: LegResult, store: Store) -> LegResult:
    """A paused leg's state on the item's server: the message history (pydantic-ai's own JSON, `all_messages_json()`)
    and the rest of the pause (held call ids, their kind, a delegate's metadata) written there; the state handed back
    is the id only. With SQLite (the default) the JSON is the state itself, as it always was."""
    if store.kind == "sqlite" or result.status != "suspended" or not result.state:
        return result
    state = dict(result.state)
    messages = state.pop("messages")
    paused_id = await _records(store).add({"messages": messages, "state": json.dumps(state)})
    result.state = {PAUSED_ID: paused_id, "store": store.kind}
    return result


async def load_paused(store: Store, handle: dict[str, Any]) -> dict[str, Any]:
    """The paused state `kept` wrote, read back from the item's server; what the handle gained since the pause (the
    input `add_input` staged) goes with it."""
    paused_id = handle[PAUSED_ID]
    if handle.get("store") != store.kind:
        raise ValueError(f"the paused run {paused_id} is kept in {handle.get('store')!r}, and this leg's store is "
                         f"{store.kind!r}")
    record = await _records(store).get(paused_id)
    extra = {k: v for k, v in handle.items() if k not in (PAUSED_ID, "store")}
    return {**json.loads(record["state"]), "messages": record["messages"], **extra}
