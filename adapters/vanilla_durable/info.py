"""What vanilla_durable declares: vanilla's channels with the paused turn journaled, recovery, and the two stores."""

from __future__ import annotations

from arena.for_adapters import Channel
from arena_builtins.adapters.vanilla import VanillaAdapter

INFO = VanillaAdapter.info.model_copy(update={
    "name": "vanilla_durable",
    "channels": tuple(c.model_copy(update={"mechanism": c.mechanism.replace(
        "transcript carried across legs", "paused turn journaled to a JSON file").replace(
        "the loop's transcript, kept after every step", "the journaled transcript (written after every step)")})
        for c in VanillaAdapter.info.channels if c.name not in ("postgres", "redis")) + (
        Channel(name="recover", kind="emulated", ways=("resume", "continue"),
                mechanism="resume again with the same decision, or continue with the decision the journal "
                          "holds: the journal (JSON, written after every tool answer) answers the calls that "
                          "returned; the others run again under the model's call id, which the tools get as an "
                          "idempotency key"),
        Channel(name="postgres", kind="emulated",
                mechanism="the journal (the same JSON) is a row of a table in the item's PostgreSQL database "
                          "(psycopg), upserted after every step; a PostgreSQL advisory lock decides who resumes"),
        Channel(name="redis", kind="emulated",
                mechanism="the journal (the same JSON) is a Redis key under the item's prefix (redis-py), set "
                          "after every step; a redis-py Lock decides who resumes"),
    ),
})
