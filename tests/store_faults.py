"""Faulty adapters that declare the PostgreSQL or Redis store and keep the paused run elsewhere (issue 50, section 1).

Each is the reference vanilla_durable with its journal moved: every one of them passed every durable_state and
crash_recovery item on both stores before the harness looked at the store itself.

- `FileKeeper`: the journal is a JSON file in the item's work directory; the declared store is never touched.
- `DecoyKeeper`: the journal is that file, and a copy of it is written to the declared store at each pause (so what
  the store holds looks right), but the resume reads the file.
- `Outsider`: the journal is in the declared server, outside the item's own place: a key without the item's prefix
  (Redis), a table in the server's `postgres` database (PostgreSQL): every item's run at one place, which only two
  items interleaving would expose.
"""

from __future__ import annotations

from typing import Any

from arena.stores import with_database
from arena.types import Decision, DecisionSet, LegContext, LegResult, Store
from arena_builtins.adapters.vanilla_durable import JOURNAL, Journal as _Journal, VanillaDurableAdapter


def _named(name: str) -> Any:
    return VanillaDurableAdapter.info.model_copy(update={"name": name})


class _Moved(VanillaDurableAdapter):
    """vanilla_durable with every leg given another store than the item's (`_store`)."""

    def _store(self, ctx: LegContext) -> Store:
        raise NotImplementedError

    def _moved(self, ctx: LegContext) -> LegContext:
        return ctx.model_copy(update={"store": self._store(ctx)})

    async def start(self, ctx: LegContext) -> LegResult:
        return await super().start(self._moved(ctx))

    async def resume(self, state: dict[str, Any], decision: Decision | DecisionSet, ctx: LegContext) -> LegResult:
        return await super().resume(state, decision, self._moved(ctx))

    async def continue_run(self, state: dict[str, Any], ctx: LegContext) -> LegResult:
        return await super().continue_run(state, self._moved(ctx))

    async def add_input(self, state: dict[str, Any], text: str, ctx: LegContext) -> dict[str, Any]:
        return await super().add_input(state, text, self._moved(ctx))


class FileKeeper(_Moved):
    """Declares the item's PostgreSQL and Redis stores; keeps the journal in a JSON file in the work directory."""

    info = _named("file_keeper")

    def _store(self, ctx: LegContext) -> Store:
        return Store()  # the default store: vanilla_durable's JSON file under ctx.workdir


class DecoyKeeper(FileKeeper):
    """As FileKeeper, and a copy of the journal is written to the declared store at each pause; the resume reads the
    file, never the store."""

    info = _named("decoy_keeper")

    async def start(self, ctx: LegContext) -> LegResult:
        result = await super().start(ctx)
        if result.status == "suspended" and self._journal is not None:
            copy = _Journal(f"{ctx.store.prefix}{JOURNAL}", ctx.store)
            copy.data = self._journal.data
            copy.save()
        return result


class Outsider(_Moved):
    """Keeps the journal on the declared server but outside the item's own place: at a key without the item's prefix,
    or in a table of the server's `postgres` database."""

    info = _named("outsider")

    def _store(self, ctx: LegContext) -> Store:
        if ctx.store.kind == "postgres":
            return Store(kind="postgres", url=with_database(ctx.store.url, "postgres"))
        return Store(kind=ctx.store.kind, url=ctx.store.url, prefix="")
