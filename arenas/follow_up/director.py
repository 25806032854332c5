"""follow_up's director: once the run finished, the user's next message in the same conversation, in a leg of its
own the harness starts (a `resumed` event with `replay` "after_run" and the message as its text, ending in a
`replayed` event), through the adapter's `follow_up` hook. What the framework sends the model then is the gateway's
record; what becomes of the leg is the `replayed` event's."""

from __future__ import annotations

from typing import Any

from arena.for_arenas.directing import BaseDirector, Pause, record_replayed
from arena_builtins.arenas.follow_up.channel import FOLLOW_UP, FOLLOW_UP_TEXT

AFTER_RUN = "after_run"  # the replay mode of a leg the harness starts after the run (its checks know it)


class FollowUpDirector(BaseDirector):
    def __init__(self, stage: Any) -> None:
        super().__init__(stage)
        self.state: Any = None  # the run's last paused state: the conversation the follow-up goes on with

    async def paused(self, pause: Pause) -> None:
        self.state = pause.state

    async def after_run(self) -> None:
        stage = self.stage
        own = [e for e in stage.recorder.events if e.type in ("final", "error") and not e.late]
        if not own or own[-1].type != "final" or self.state is None:
            return  # the run did not finish after a pause: there is no conversation to go on with
        await stage.quiet()
        recorder, leg = stage.recorder, stage.next_leg()
        recorder.record("resumed", leg=leg, replay=AFTER_RUN, text=f"{FOLLOW_UP}: {FOLLOW_UP_TEXT}")
        await record_replayed(recorder, stage.adapter, leg, AFTER_RUN,
                              stage.adapter.run_hook(FOLLOW_UP, self.state, FOLLOW_UP_TEXT, ctx=stage.ctx))
