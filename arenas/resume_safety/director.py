"""resume_safety's director: the hostile resumes of a saved paused state (an item's `Replay`).

The paused state the run handed back at the item's `replay.state`-th pause is kept as it was (a copy)
and resumed once more with `replay.decision`, where `replay.when` says:

- `after_run`: once the item's own legs have ended (a retried webhook, a double click);
- `concurrent`: at that pause, while the item's own resume is inside its consequential tool call (held
  there until this one ends), from a second adapter (in a worker process of its own when the harness
  gives one, `Stage.spare_factory`);
- `at_next_pause`: while the run waits at its next pause (a newer state exists), before that pause's
  own decision.

With `replay.live` the state replayed is not that copy but a second live state the framework hands out for the same
paused run (the `live_twin` channel's hook, at the pause, before the run's own resume; `channel.py`).

A replay is a `resumed` event with `replay` set (its mode) and ends in a `replayed` event. Whatever it
does is recorded (a framework raising here is a measured refusal, never the item's fault), and nothing
it returns continues the run. See docs/adapters.md.
"""

from __future__ import annotations

import asyncio
import copy
import threading
from collections.abc import Callable
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from arena.for_arenas.directing import Adapter, BaseDirector, Pause, Stage, replay as replay_state, route, with_call_id
from arena.for_arenas import Decision, DecisionSet, LegContext, LegResult, ToolKind, TraceEvent
from arena_builtins.arenas.resume_safety.channel import LIVE_TWIN

ReplayWhen = Literal["after_run", "concurrent", "at_next_pause"]


class Replay(BaseModel):
    """A hostile resume: the paused state the run handed back at its `state`-th pause is resumed once
    more with `decision`, as a retried webhook, a double click or an old saved state would (the modes:
    see the module's docstring)."""

    model_config = ConfigDict(frozen=True)

    state: int = 1
    decision: Decision | list[Decision]
    when: ReplayWhen = "after_run"
    # the state replayed is a second live one the framework hands out for the same paused run (the `live_twin`
    # channel's hook, taken at the pause, before the run's own resume), not a copy of the state the run handed back
    live: bool = False


# How long the first of two concurrent resumes is held at its consequential call for the second to end.
CONCURRENT_HOLD_S = 10.0


class ReplayDirector(BaseDirector):
    """Keeps the chosen pause's state as it was handed back and resumes it once more where the replay says."""

    def __init__(self, stage: Stage) -> None:
        super().__init__(stage)
        replay = stage.item.replay  # the item's own (load_items), or one a test gives as data
        self.replay: Replay | None = None if replay is None else Replay.model_validate(replay)
        self.saved: dict[int, tuple[Any, TraceEvent]] = {}  # pause number -> (its paused state, kept; its event)
        self.spare = _spare(stage)

    async def paused(self, pause: Pause) -> None:
        if self.replay is not None and self.replay.state == pause.number:
            state = await self.stage.adapter.run_hook(LIVE_TWIN, pause.state, ctx=self.stage.ctx) \
                if self.replay.live else _keep(pause.state)
            self.saved[pause.number] = (state, pause.event)

    async def decided(self, pause: Pause) -> None:
        replay = self.replay  # at the next pause, before its own decision: the older state first
        if replay is not None and replay.when == "at_next_pause" and pause.number - 1 == replay.state \
                and replay.state in self.saved:
            await _replay(self.stage.adapter, *self.saved.pop(replay.state), replay, self.stage.ctx,
                          self.stage)

    async def resume(self, pause: Pause, decision: Decision | DecisionSet) -> LegResult:
        replay, stage = self.replay, self.stage
        if replay is None or replay.when != "concurrent" or replay.state != pause.number:
            return await super().resume(pause, decision)
        second, kept = self.spare(self.saved[pause.number][0])
        self.saved[pause.number] = (kept, self.saved[pause.number][1])
        arrived, released = asyncio.Event(), threading.Event()
        held = stage.ctx.model_copy(update={"tools": _HeldTools(stage.ctx.tools, arrived, released,
                                                                 _consequential(stage.ctx))})
        own = asyncio.ensure_future(stage.adapter.resume(pause.state, decision, held))
        reached = asyncio.ensure_future(arrived.wait())
        await asyncio.wait({own, reached}, return_when=asyncio.FIRST_COMPLETED)
        reached.cancel()
        try:  # the second resume arrives while the first is inside its consequential call (or has ended)
            await _replay(second, *self.saved.pop(pause.number), replay, stage.ctx, stage, same_leg=True)
        finally:
            released.set()
            await second.aclose()
        return await own

    async def after_run(self) -> None:
        replay = self.replay
        if replay is not None and replay.when == "after_run" and replay.state in self.saved:
            await self.stage.quiet()
            await _replay(self.stage.adapter, *self.saved.pop(replay.state), replay, self.stage.ctx, self.stage)


def _consequential(ctx: LegContext) -> set[str]:
    return {s.name for s in ctx.tools.specs if s.kind is ToolKind.write or s.requires_approval}


class _HeldTools:
    """The first resume's tools in a concurrent replay. When it reaches its consequential call, the call
    is held (`arrived`) until the second resume has ended (`released`): the second resume always runs
    while the first is inside that call, after whatever the first wrote before it, so the two overlap
    the same way in every run. An adapter in a worker calls the tools over the harness's server: its
    `executor` holds those calls the same way (`aexecute`, awaited by the server)."""

    def __init__(self, inner: Any, arrived: asyncio.Event, released: threading.Event, hold: set[str]):
        self.inner, self.arrived, self.released, self.hold = inner, arrived, released, hold
        self.loop = asyncio.get_running_loop()
        self.specs = inner.specs
        executor = getattr(inner, "executor", None)
        self.executor = _HeldExecutor(executor, self) if executor is not None else None

    async def held(self, name: str) -> None:
        """Wait here (in any thread's event loop) while the second resume runs, if `name` is held."""
        if name in self.hold and not self.released.is_set():
            self.loop.call_soon_threadsafe(self.arrived.set)
            # the second resume waits on the first past the hold: let the first go on
            await asyncio.to_thread(self.released.wait, CONCURRENT_HOLD_S)

    def call(self, name: str, args: dict[str, Any], call_id: str | None = None) -> str:
        return self.inner.call(name, args, **with_call_id(call_id))

    async def acall(self, name: str, args: dict[str, Any], call_id: str | None = None) -> str:
        await self.held(name)
        return await self.inner.acall(name, args, **with_call_id(call_id))


class _HeldExecutor:
    """The item's tool executor as the harness's server serves it to a worker, holding as `_HeldTools` does."""

    def __init__(self, inner: Any, tools: _HeldTools):
        self.inner, self.tools = inner, tools

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def execute(self, name: str, args: dict[str, Any], call_id: str | None = None) -> str:
        return self.inner.execute(name, args, **with_call_id(call_id))

    async def aexecute(self, name: str, args: dict[str, Any], call_id: str | None = None) -> str:
        await self.tools.held(name)
        return self.inner.execute(name, args, **with_call_id(call_id))


Spare = Callable[[Any], "tuple[Adapter, Any]"]


def _spare(stage: Stage) -> Spare:
    """The second adapter of a concurrent replay, and the paused state as it takes it: in a worker process of its
    own, handed the state as JSON where the state is data (`Stage.elsewhere`, the way a second process would read
    a durable state); else a second instance in this process."""

    def spare(state: Any) -> tuple[Adapter, Any]:
        moved = stage.elsewhere(state)
        return moved if moved is not None else (stage.make_adapter(), state)

    return spare


def _keep(state: Any) -> Any:
    """The paused state as it was handed back: a copy, so that resuming it once cannot change what is replayed."""
    try:
        return copy.deepcopy(state)
    except Exception:  # a live handle (a client, a lock) cannot be copied: it is replayed as it is
        return state


async def _replay(adapter: Adapter, state: Any, pause: TraceEvent, replay: Replay, ctx: LegContext,
                  stage: Stage, same_leg: bool = False) -> None:
    """One hostile resume (`arena.runner.replay`): its decision, or each of its decisions routed to its call."""
    decision = route(replay.decision, stage.recorder.events, pause) if isinstance(replay.decision, list) \
        else replay.decision
    await replay_state(stage, adapter, state, decision, replay.when, ctx=ctx, same_leg=same_leg)
