"""PostgreSQL / Redis (`ctx.store.kind` postgres / redis): the run's Session of the SDK's own store class for that
server (`SQLAlchemySession` / `RedisSession`), and the paused RunState strings kept beside it on the same server; the
leg state is only their ids. Nothing of this runs on the default store, where the leg state is the RunState string."""

from __future__ import annotations

from typing import Any

from arena.for_adapters import KeptRecords, LegResult, Store

STATES_TABLE = "arena_run_states"  # in the item's own PostgreSQL database
STATES_KEY = "agents:run_state"  # after the item's Redis key prefix


class Kept:
    """One leg's hold on the item's own place on a PostgreSQL / Redis server (`ctx.store`): the run's Session of the
    SDK's own class for that server, and the paused RunState strings the adapter keeps beside it (the SDK documents
    storing `RunState.to_string()` in a database; it has no class for it). Opened per leg, closed at its end: nothing
    of it outlives the leg's process, and the next leg, in a new process, gets only the ids."""

    def __init__(self, store: Store, session_id: str) -> None:
        self.session_id = session_id
        self.kind = store.kind
        self.states = KeptRecords(store, STATES_TABLE, STATES_KEY)  # refuses the default store, which has no server
        if store.kind == "postgres":
            from sqlalchemy.ext.asyncio import create_async_engine

            from agents.extensions.memory import SQLAlchemySession

            self._engine = create_async_engine(store.sqlalchemy_url("asyncpg"))
            self.session: Any = SQLAlchemySession(session_id, engine=self._engine, create_tables=True)
        elif store.kind == "redis":
            import redis.asyncio as redis

            from agents.extensions.memory import RedisSession

            self._redis = redis.from_url(store.url)
            self.session = RedisSession(session_id, redis_client=self._redis,
                                        key_prefix=f"{store.prefix}agents:session")

    async def save(self, state: str) -> dict[str, str]:
        """Keep a paused RunState (a new row / hash, `KeptRecords`) and return the leg state: the ids only."""
        state_id = await self.states.add({"session_id": self.session_id, "state": state})
        return {"session_id": self.session_id, "state_id": state_id}

    async def load(self, handle: dict[str, str]) -> str:
        """The RunState string a leg state names; a missing one raises (nothing to resume)."""
        return (await self.states.get(handle["state_id"]))["state"]

    async def keep(self, result: LegResult) -> LegResult:
        """A suspended leg's RunState string moved to the server; the leg state becomes its ids."""
        if result.status == "suspended":
            result.state = await self.save(result.state)
        return result

    async def aclose(self) -> None:
        if self.kind == "postgres":
            await self._engine.dispose()
        else:
            await self.session.close()  # a no-op for an injected client
            await self._redis.aclose()


class LiveState:
    """A second live RunState of a paused run (resume_safety's `live_twin` channel), resumed as it is: never through
    `to_string()`, so whatever the SDK's live states of one result share, it shares."""

    def __init__(self, run_state: Any) -> None:
        self.run_state = run_state


class LiveStates:
    """The paused `RunResult`s of this process's legs, by the state string each pause handed back, and the first live
    state of a `live_twin` pair. The docs' way to resume in process is `state = result.to_state()`, then
    `state.approve(...)`, then `Runner.run(agent, state)`: a twin takes `result.to_state()` twice, hands out the second,
    and the run's own resume of that pause resumes the first (not `RunState.from_string`). Kept in memory only (a
    worker holds them as long as the item's adapter), for the default store, whose leg state is the string."""

    def __init__(self) -> None:
        self._results: dict[str, Any] = {}
        self._first: dict[str, Any] = {}

    def paused(self, state: str, result: Any) -> None:
        self._results[state] = result

    def twin(self, state: Any) -> LiveState:
        result = self._results.get(state) if isinstance(state, str) else None
        if result is None:
            raise RuntimeError("this process holds no live paused run for that state (only the default store's pauses "
                               "of this adapter's own legs have one)")
        first, second = result.to_state(), result.to_state()
        self._first[state] = first
        return LiveState(second)

    def restored(self, state: Any) -> Any:
        """The live RunState to resume for `state`, if it is one (a twin, or the first of a pair), else None."""
        if isinstance(state, LiveState):
            return state.run_state
        return self._first.pop(state, None) if isinstance(state, str) else None
