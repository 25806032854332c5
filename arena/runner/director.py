"""The one hook an arena owns for its scenario: a director, told by the leg loop what happens around each pause.

The leg loop (`legs.py`) is the same for every arena: start, record each pause, hold the decision while
whatever still runs shows up, deliver the next decision, until a leg finishes or errors. What an arena
adds to that (resume_safety's hostile replays of a saved state, flight_booking's world that moves on
while the human decides, and next the crashes and interruptions to come) is its director's: the core
calls the director at fixed moments and knows nothing of what it does there. `ArenaSpec.director` makes
one per item; an arena without one gets `BaseDirector`, which only runs the legs.

Moments, in the order the loop reaches them (pause numbers count from 1):

- `start()`: the first leg (default: the adapter's `start`).
- `paused(pause)`: a pause was recorded; every pause, also one the run then ends at (too many pauses,
  no decision left).
- `deciding(pause)`: the human is about to decide: the decision is held from here (the dwell).
- `decided(pause)`: the hold is over; the decision is not yet delivered.
- `resume(pause, decision)`: deliver it, after the `resumed` event is recorded (default: the adapter
  resumes the paused state with it); returns the next leg's result.
- `after_run()`: the item's own legs have ended, before the item is watched until quiet and closed.

Whatever a director records goes into the item's one trace (`Stage.recorder`) and is judged by the
arena's checks; a director raising is that item's failure, as an adapter raising is. `start` and
`resume` own the calls into the adapter, so a scenario can give a leg other tools (resume_safety holds
a consequential call; a crash point inside a tool call would end the adapter there) or run a second
adapter beside it (`Stage.make_adapter`, `Stage.spare_factory`, `Stage.elsewhere`), or hand the run over to one
(`Stage.hand_over`: the legs after it are that adapter's), and start its own legs (`Stage.next_leg`) for what it
does besides the item's.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, Protocol

from arena.runner.watch import Watch, quiesce
from arena.spec import Backend
from arena.stores import StoreWatch
from arena.trace import TraceRecorder
from arena.adapter import Adapter
from arena.types import Decision, DecisionSet, EvalItem, LegContext, LegResult, TraceEvent


@dataclass
class Stage:
    """One item as its director sees it: what the legs run with, and what else a scenario may need."""

    item: EvalItem
    ctx: LegContext  # what every leg is given (the item's tools, model endpoint, workdir)
    adapter: Adapter  # the item's own adapter instance
    recorder: TraceRecorder  # the item's one trace: what a director does is recorded here
    watch: Watch
    backend: Backend | None  # the item's tool backend (ArenaSpec.backend), if the arena has one
    # the tools' lock: held, no tool call of another thread is in the middle of running (to change the backend)
    locked: Callable[[], AbstractContextManager[Any]]
    # another instance of the item's adapter, in this process
    make_adapter: Callable[[], Adapter]
    # another instance in a worker process of its own, when the caller gives one (the CLI does, for a
    # registered adapter that otherwise runs in this process); None: there is none
    spare_factory: Callable[[], Adapter] | None = None
    # stops and restarts the server that holds the item's store (`--store postgres|redis`, an item with
    # `restart_store`: a private server of its own); None: there is none to restart
    restart_store: Callable[[], None] | None = None
    # the harness's observer of the item's store and work directory (`--store postgres|redis`); None on SQLite
    store_watch: StoreWatch | None = None

    def elsewhere(self, state: Any) -> tuple[Adapter, Any] | None:
        """Another instance of the item's adapter in a process of its own, and the paused state as that process
        takes it: as data, the way a durable store hands it over. None where that cannot be: the state is not data
        (a live object cannot leave its process), or there is no other process to run this adapter in."""
        import json

        from arena.worker.client import WorkerAdapter, WorkerState

        if isinstance(state, WorkerState):  # the adapter runs in workers: any new instance is a new process
            return ((self.spare_factory or self.make_adapter)(), state) if state.is_json else None
        if self.spare_factory is None:
            return None
        try:
            value = json.loads(json.dumps(state))
        except (TypeError, ValueError):
            return None
        second = self.spare_factory()
        return second, (WorkerState(handle=None, value=value, is_json=True) if isinstance(second, WorkerAdapter)
                        else state)

    async def hand_over(self, adapter: Adapter) -> None:
        """The run goes on in `adapter` (from `elsewhere`: a human confirming later, from another process): the
        legs from now on are its, recorded with its process; the adapter it replaces is closed, as its process
        would be. Its worker's processes that outlive it (the harness lists them, `WorkerAdapter.survivors`) are
        added to the latest `resumed` event's `survivors`: the resume that follows is this hand-over's."""
        old, self.adapter = self.adapter, adapter
        if not old.in_process:  # a worker's process holds the paused run: closed as the process would be
            from arena.runner.processes import survivors_of

            await old.close_worker()
            found = survivors_of(old)
            resumed = next((e for e in reversed(self.recorder.events) if e.type == "resumed"), None)
            if found and resumed is not None:
                self.recorder.amend(resumed, survivors=[*(resumed.survivors or []), *found])
        await old.aclose()

    def next_leg(self) -> int:
        """Start a new leg: what is recorded from now on is in it (the harness's own legs are numbered alike)."""
        self.recorder.leg = max(e.leg for e in self.recorder.events) + 1
        return self.recorder.leg

    async def quiet(self) -> None:
        """Wait until the item has done nothing for the watch's quiet time (at most its maximum)."""
        await quiesce(self.recorder, self.watch.quiet_s, self.watch.quiet_max_s)


@dataclass(frozen=True)
class Pause:
    """One pause of the item's run, as the leg loop recorded it."""

    number: int  # the run's n-th pause, from 1
    result: LegResult  # the suspended leg as the adapter returned it (its `state`, what is pending)
    event: TraceEvent  # its `suspended` event

    @property
    def state(self) -> Any:
        """The paused state as the adapter handed it back (the harness never reads it)."""
        return self.result.state


class Director(Protocol):
    """An arena's scenario around the pauses of one item (see the module's docstring for the moments).

    Each hook is awaited by the leg loop at its moment, so what a director does there happens at the same
    point of every run. A hook that has nothing to do returns at once; `BaseDirector` is the one that
    does nothing, to subclass.
    """

    async def start(self) -> LegResult:
        """Run the first leg: a scenario may give the adapter other tools or watch the leg."""
        ...

    async def paused(self, pause: Pause) -> None:
        """A pause was recorded, before the harness decides whether the run goes on: e.g. keep its state."""
        ...

    async def deciding(self, pause: Pause) -> None:
        """The human decides from now on (the decision is held next): the world may move on meanwhile."""
        ...

    async def decided(self, pause: Pause) -> None:
        """The hold is over and the decision not yet delivered: e.g. resume an older state while this waits."""
        ...

    async def resume(self, pause: Pause, decision: Decision | DecisionSet) -> LegResult:
        """Deliver the decision (already recorded as `resumed`) and return the next leg's result."""
        ...

    async def after_run(self) -> None:
        """The item's own legs have ended (finished, errored, or the adapter's fault): e.g. replay a state."""
        ...


DirectorFactory = Callable[[Stage], Director]


class BaseDirector:
    """The core's director: it runs the legs and does nothing else. An arena's director subclasses it and
    overrides the moments its scenario needs."""

    def __init__(self, stage: Stage) -> None:
        self.stage = stage

    async def start(self) -> LegResult:
        return await self.stage.adapter.start(self.stage.ctx)

    async def paused(self, pause: Pause) -> None:
        return None

    async def deciding(self, pause: Pause) -> None:
        return None

    async def decided(self, pause: Pause) -> None:
        return None

    async def resume(self, pause: Pause, decision: Decision | DecisionSet) -> LegResult:
        return await self.stage.adapter.resume(pause.state, decision, self.stage.ctx)

    async def after_run(self) -> None:
        return None
