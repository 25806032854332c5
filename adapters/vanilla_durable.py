"""The reference for crash_recovery: vanilla's tool-calling loop, made durable the way a careful hand-written
loop is in production.

It journals the run to a JSON file in the item's work directory (with `--store`, a row in the item's PostgreSQL
database or a key under its Redis prefix, the same JSON): the transcript after every step, the paused
turn at each pause, the decision with the process that is carrying it out, and every tool's answer by the
model's call id as soon as it returns. Its tools get that call id (`ToolBox.call(..., call_id=)`), an
idempotency key a tool can de-duplicate by. A paused run resumes in any process from the journal alone; a
resume whose process died before the leg ended is recovered by resuming again with the same decision, or by
continuing with the decision the journal holds (`continue_run`): from the latest journaled transcript (or the paused turn, if it died there), each call of the last turn answered
from the journal if it returned, else run again under the same id (the tool answers a repeated id without
acting twice). A second resume of a pause whose leg ended, or that a live
process is carrying out, or with another decision, is refused before anything runs.
"""

from __future__ import annotations

import contextlib
import copy
import fcntl
import json
import os
from collections.abc import Iterator
from dataclasses import asdict
from typing import Any

from arena.types import Channel, Decision, DecisionSet, LegContext, LegResult, Store, ToolKind
from arena.worker.procs import alive, start_time
from arena_builtins.adapters.vanilla import VanillaAdapter, _check, _Paused

JOURNAL = "vanilla_durable.json"


class _Journal:
    """The run's journal: {"pause": the paused turn, "decided": {decision, owner pid, ended}, "answers": {}}.

    Kept where the run's store says (`LegContext.store`): a JSON file in the work directory (sqlite, the default),
    a row of a table in the item's PostgreSQL database, or a key under the item's Redis prefix; `where` names it
    (the path, or the row's / key's name), and is all a paused state carries."""

    def __init__(self, where: str, store: Store) -> None:
        self.where, self.store = where, store
        raw = self._read()
        self.data: dict[str, Any] = json.loads(raw) if raw else {"answers": {}}

    @classmethod
    def new(cls, ctx: LegContext) -> _Journal:
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


class _JournaledTools:
    """One model call's tools: answered from the journal if it already returned, else run under its call id."""

    def __init__(self, tools: Any, call_id: str, journal: _Journal) -> None:
        self.tools, self.call_id, self.journal, self.specs = tools, call_id, journal, tools.specs

    def _answered(self, name: str) -> str | None:
        answer = self.journal.data["answers"].get(f"{self.call_id}/{name}")
        return None if answer is None else str(answer)

    def _keep(self, name: str, answer: str) -> str:
        self.journal.data["answers"][f"{self.call_id}/{name}"] = answer
        self.journal.save()
        return answer

    def call(self, name: str, args: dict[str, Any], call_id: str | None = None) -> str:
        answered = self._answered(name)
        if answered is not None:
            return answered
        return self._keep(name, self.tools.call(name, args, call_id=self.call_id))

    async def acall(self, name: str, args: dict[str, Any], call_id: str | None = None) -> str:
        answered = self._answered(name)
        if answered is not None:
            return answered
        return self._keep(name, await self.tools.acall(name, args, call_id=self.call_id))


def _decision_json(decision: Decision | DecisionSet) -> str:
    return decision.model_dump_json()


class VanillaDurableAdapter(VanillaAdapter):
    order = 11

    info = VanillaAdapter.info.model_copy(update={
        "name": "vanilla_durable",
        "channels": tuple(c.model_copy(update={"mechanism": c.mechanism.replace(
            "transcript carried across legs", "paused turn journaled to a JSON file")})
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

    def __init__(self) -> None:
        super().__init__()
        self._journal: _Journal | None = None

    def _tools(self, ctx: LegContext, call_id: str) -> Any:
        assert self._journal is not None
        return _JournaledTools(ctx.tools, call_id, self._journal)

    async def start(self, ctx: LegContext) -> LegResult:
        self._journal = _Journal.new(ctx)
        self._journal.save()
        return self._ended(await super().start(ctx))

    def _ended(self, result: LegResult) -> LegResult:
        """Journal how the leg ended; a pause's state is the journal's path and the pause's id (JSON)."""
        journal = self._journal
        assert journal is not None
        if journal.data.get("decided"):
            journal.data["decided"]["ended"] = True
        if result.status == "suspended" and isinstance(result.state, _Paused):
            journal.data["pause"] = asdict(result.state)
            journal.data["decided"] = None
            result.state = {"journal": journal.where, "pause_id": result.state.pause_id}
        journal.save()
        return result

    def _admit(self, state: _Paused, decision: Decision | DecisionSet, ctx: LegContext) -> None:
        _check(state, decision, set(ctx.gated_tools))  # who may resume is the journal's (see `resume`)

    async def resume(self, state: dict[str, Any], decision: Decision | DecisionSet, ctx: LegContext) -> LegResult:
        path = state["journal"]
        with _Journal.locked(path, ctx.store):
            journal = _Journal(path, ctx.store)
            pause = journal.data.get("pause") or {}
            if pause.get("pause_id") != state["pause_id"]:
                raise RuntimeError("this is an older pause's state: the run has moved on since")
            decided = journal.data.get("decided")
            if decided:
                if decided["ended"]:
                    raise RuntimeError("this pause was already resumed; a paused run resumes once")
                pid, started = decided["owner"]
                if alive(pid) and start_time(pid) == started:  # this process too: a second resume during the first
                    raise RuntimeError(f"this pause is being resumed by process {pid}")
                if decided["decision"] != _decision_json(decision):
                    raise RuntimeError("this pause was resumed with another decision before its process died")
            paused = _Paused(**copy.deepcopy(pause))  # the journal keeps the pause as it was
            _check(paused, decision, set(ctx.gated_tools))
            journal.data["decided"] = {"decision": _decision_json(decision), "ended": False,
                                       "owner": [os.getpid(), start_time(os.getpid())]}
            journal.save()
        self._journal = journal
        messages = journal.data.get("messages") or []
        if not decided or len(messages) <= len(paused.messages):  # from the pause (a recovery of its own turn too)
            return self._ended(await super().resume(paused, decision, ctx))
        return self._ended(await self._recover(messages, ctx))

    async def add_input(self, state: dict[str, Any], text: str, ctx: LegContext) -> dict[str, Any]:
        """New input while paused: journaled with the paused turn, so a resume in any process sends it."""
        with _Journal.locked(state["journal"], ctx.store):
            journal = _Journal(state["journal"], ctx.store)
            pause = journal.data.get("pause") or {}
            if pause.get("pause_id") != state["pause_id"] or journal.data.get("decided"):
                raise RuntimeError("this pause is no longer waiting: input cannot be added to it")
            pause.setdefault("notes", []).append(text)
            journal.save()
        return state

    async def continue_run(self, state: dict[str, Any], ctx: LegContext) -> LegResult:
        """Recovery way `continue`: the decision is the one the journal holds, not given again."""
        decided = (_Journal(state["journal"], ctx.store).data.get("decided") or {}).get("decision")
        if decided is None:
            raise RuntimeError("no decision was journaled before the process died: there is nothing to continue")
        data = json.loads(decided)
        decision = DecisionSet.model_validate(data) if "decisions" in data else Decision.model_validate(data)
        return await self.resume(state, decision, ctx)

    def _persist(self, messages: list[dict[str, Any]]) -> None:
        if self._journal is not None:
            self._journal.data["messages"] = messages
            self._journal.save()

    async def _recover(self, messages: list[dict[str, Any]], ctx: LegContext) -> LegResult:
        """Go on from the latest journaled transcript: the calls of its last turn that have no result yet are
        answered from the journal, or run again under their ids; then the model is asked as before."""
        last = messages[-1]
        calls = last.get("tool_calls") or [] if last.get("role") == "assistant" else []
        pause_names = {s.name for s in ctx.tools.specs
                       if s.kind is ToolKind.approval or s.requires_approval or s.body_pause}
        if any(c["function"]["name"] in pause_names for c in calls):
            raise RuntimeError("the process died in a turn that was pausing; it cannot be recovered from the journal")
        answered = {m.get("tool_call_id") for m in messages if m.get("role") == "tool"}
        for call in calls:
            if call["id"] not in answered:
                messages.append({"role": "tool", "tool_call_id": call["id"], "content": await self._run(ctx, call)})
        return await self._loop(messages, ctx)
