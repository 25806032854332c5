"""delegation's director: a durable item's decision comes later, from a new process.

Where the paused state is data (the adapter's handle into what its framework persisted), the run is handed over to
an instance of the adapter in a worker process of its own (`Stage.elsewhere`, `Stage.hand_over`), which resumes that
state: only what the framework kept carries the nested pause there. A state that is a live object cannot leave the
process that paused (the in-memory reference, `vanilla`): it is resumed there, and `nested_durable` says so.
"""

from __future__ import annotations

from arena.for_arenas.directing import BaseDirector, Pause
from arena.for_arenas import Decision, DecisionSet, LegResult


class DelegationDirector(BaseDirector):
    async def resume(self, pause: Pause, decision: Decision | DecisionSet) -> LegResult:
        state = pause.state
        if self.stage.item.metadata.get("durable"):
            moved = self.stage.elsewhere(state)
            if moved is not None:
                second, state = moved
                await self.stage.hand_over(second)
        return await self.stage.adapter.resume(state, decision, self.stage.ctx)
