"""interruptions' director: input added while the run is paused, and the late approval.

Input (item metadata `inputs`: pause number -> text): once the human's dwell at that pause is over and before the
decision is delivered, the adapter's `add_input(state, text, ctx)` adds the text to the paused run (its `input`
channel) and returns the state the decision then resumes; recorded as an `input` event (`result`: `added`, or the
error it raised).

The late approval: the old prompt's approve button is clicked after the human already
sent a new message instead (a UI that still shows it, a second tab): the harness resumes the state the run handed
back at its first pause, with an approval routed to the call that pause held, and records what that does.

`late` (item metadata) says when: `at_next_pause`, while the human decides at the run's second pause (on the
call the message led to); `after_run`, once the run has ended. The state is resumed as the adapter handed it back
(a UI holds what it was given); whatever the resume does is recorded, a framework raising is a measured refusal.

The handoff's confirmation comes later, from a new process, where the paused state is data (the adapter's handle
into what its framework persisted): the run is handed over to an instance of the adapter in a worker process of its
own (`Stage.elsewhere`, `Stage.hand_over`), which resumes that state; a state that is a live object (the
in-memory reference, `vanilla`) is confirmed in the process that paused.
"""

from __future__ import annotations

from typing import Any

from arena.for_arenas.directing import BaseDirector, Pause, Stage, describe, leg_pid, replay, route
from arena.for_arenas import Decision, DecisionKind, DecisionSet, LegResult

BOOK = "book_room"


class LateApprovalDirector(BaseDirector):
    def __init__(self, stage: Stage) -> None:
        super().__init__(stage)
        self.late: str | None = stage.item.metadata.get("late")
        self.first: Pause | None = None
        self.states: dict[int, Any] = {}  # pause number -> the state add_input returned

    async def paused(self, pause: Pause) -> None:
        if pause.number == 1:
            self.first = pause

    async def decided(self, pause: Pause) -> None:
        text = (self.stage.item.metadata.get("inputs") or {}).get(str(pause.number))
        if text is None:
            return
        recorder = self.stage.recorder
        try:
            self.states[pause.number] = await self.stage.adapter.add_input(pause.state, text, self.stage.ctx)
        except Exception as exc:
            recorder.record("input", text=text, result=describe(exc), pid=leg_pid(self.stage.adapter))
            return
        recorder.record("input", text=text, result="added", pid=leg_pid(self.stage.adapter))

    async def resume(self, pause: Pause, decision: Decision | DecisionSet) -> LegResult:
        state = self.states.get(pause.number, pause.state)  # with the input added, where the adapter made a new one
        if self.stage.item.metadata["group"] == "handoff":
            moved = self.stage.elsewhere(state)
            if moved is not None:  # confirmed later, from a new process: only what the framework kept carries it
                second, state = moved
                await self.stage.hand_over(second)
        return await self.stage.adapter.resume(state, decision, self.stage.ctx)

    async def deciding(self, pause: Pause) -> None:
        if self.late == "at_next_pause" and pause.number == 2:
            await self._late_approval()

    async def after_run(self) -> None:
        if self.late == "after_run":
            await self.stage.quiet()
            await self._late_approval()

    async def _late_approval(self) -> None:
        first, stage = self.first, self.stage
        if first is None or self.late is None:
            return
        asked = Decision(kind=DecisionKind.approve, text="approved", match={"tool": BOOK})
        decision = route([asked], stage.recorder.events, first.event).decisions[0]
        await replay(stage, stage.adapter, first.state, decision, self.late)
