"""crash_recovery's director: it kills the leg's process tree at the item's crash point, then recovers the run.

The item says where (`metadata["crash"]`: `point`, the `pause` whose resume it happens after, the `tool`):

- `after_effect`: the approved call ran and its ledger row is committed; the worker is killed (SIGKILL, its
  whole process tree) as the tool log records the call, before the result goes back to the framework;
- `before_persist`: the call ran and returned; the worker is killed when the framework's next model request
  reaches the gateway, before it is answered (what the framework had not persisted by then is lost);
- `in_body`: after the resume, the worker is killed as `purchase_hold.commit` arrives, before it runs;
  where the adapter's framework cannot pause inside a tool's body, `purchase_hold` is a gated tool that
  prepares and commits in one call (`ArenaSpec.tools_for`), and the crash points take that call instead;
- `during_pause`: a control, what durable_state does but with SIGKILL: the paused worker is killed instead of
  closed, before the decision.

A kill ends every process the adapter's legs started, not only the worker's process group: each worker's cgroup
(`WorkerAdapter.crash`, `arena.worker.procs`); where there are no cgroups, the fallback's scope, and why, is in the
`crashed` event's text. Whatever a kill or an earlier leg's orderly close left alive is listed on the next `resumed`
event (`survivors`), the recovery's included, and fails `no_process_survived`.

The kill is synchronous: the tool's result or the model's answer is handed back only after the process is
gone. The recovery is the adapter's `recover` channel, the way its framework documents a crashed run's
recovery, in a new process (a `resumed` event with `replay="recover"`), one of the ways it lists (the item's
`crash.way`): `resume`, the paused state saved at the pause resumed again with the same decision; `continue`,
the run continued from what the framework persisted after the resume, without the decision
(`continue_run`). Should the recovered run ask the human again, the human gives the same decision again (at
most twice): whether it asks is measured, not judged.
"""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

from arena.for_arenas.directing import (
    BaseDirector,
    Pause,
    Stage,
    alive,
    leg_pid,
    record_pause,
    record_resume,
    survivors_of,
)
from arena.for_arenas import Decision, DecisionSet, LegResult, TraceEvent
from arena_builtins.arenas.crash_recovery.tools import CrashBackend

REASKS = 2  # re-asked pauses the human answers again in a recovery
KILL_WAIT_S = 5.0
# How long the tool's body has run when an `in_body` crash kills its process: a real body takes time, and a
# kill within milliseconds of the resume raced the framework's own background writes (LangGraph's default
# durability "async" had once not yet written the resume it was given 16 ms earlier): not reproducible.
BODY_S = 0.05


class CrashDirector(BaseDirector):
    def __init__(self, stage: Stage) -> None:
        super().__init__(stage)
        crash = stage.item.metadata["crash"]
        self.point: str = crash["point"]
        self.at: int = int(crash["pause"])
        self.tool: str = crash["tool"]
        self.way: str = crash.get("way", "resume")
        body = self.tool.removesuffix(".commit")
        if body != self.tool and not any(t.name == body and t.body_pause for t in stage.ctx.tools.specs):
            self.tool = body  # the adapter's framework cannot pause in a body: the tool is gated, one call
        self.armed_leg: int | None = None  # the resumed leg the crash point is armed in
        self.target_ran = False
        self.fired: TraceEvent | None = None
        self.killing = threading.Event()  # set before the kill: the leg's end may be seen before `fired` is set
        self._unwatch = stage.recorder.watch(self._on_event)
        if isinstance(stage.backend, CrashBackend):
            stage.backend.before = self._before_call

    # -- the crash points --------------------------------------------------------------------------

    def _kill(self, where: str) -> None:
        """Kill the armed leg's process tree, wait until it is gone, and record where (any thread)."""
        self.armed_leg = None
        self.killing.set()
        adapter = self.stage.adapter
        pid = adapter.leg_pid
        if adapter.in_process or pid is None:
            self.fired = self.stage.recorder.record(
                "crashed", tool=self.tool,
                text=f"{self.point}: {where}; not killed, the adapter runs in the harness's process")
            return
        killed = adapter.crash()  # every process the adapter's legs started: their cgroups, or a fallback that says so
        deadline = time.monotonic() + KILL_WAIT_S
        while alive(pid) and time.monotonic() < deadline:
            time.sleep(0.005)
        text = f"{self.point}: {where}; process {pid} killed (SIGKILL), with {killed}"
        self.fired = self.stage.recorder.record("crashed", tool=self.tool, pid=pid, text=text)

    def _on_event(self, event: TraceEvent) -> None:
        if self.armed_leg is None or event.leg != self.armed_leg or self.fired is not None:
            return
        if event.type == "tool_call" and event.tool == self.tool:
            self.target_ran = True
            if self.point == "after_effect":
                self._kill(f"after {self.tool} ran, before its result reached the framework")
        elif event.type == "model_call" and self.point == "before_persist" and self.target_ran:
            self._kill(f"after {self.tool} returned, as the framework's next model request arrived")

    def _before_call(self, name: str, args: dict[str, Any]) -> str | None:
        if self.armed_leg is None or self.point != "in_body" or name != self.tool or self.fired is not None:
            return None
        time.sleep(BODY_S)
        self._kill(f"inside the tool's body, {BODY_S * 1000:.0f} ms after {name} arrived after the resume")
        return f"ERROR: the process was killed as {name} arrived (crash point in_body); {name} was not executed"

    # -- the moments -------------------------------------------------------------------------------

    def _kill_at_pause(self, on: bool) -> None:
        self.stage.adapter.kill_at_pause = on  # a worker proxy's process is killed at the pause; in-process, nothing

    async def start(self) -> LegResult:
        if self.point == "during_pause" and self.at == 1:
            self._kill_at_pause(True)
        return await super().start()

    async def paused(self, pause: Pause) -> None:
        if self.point == "during_pause" and pause.number == self.at and self.fired is None:
            self._kill_at_pause(False)
            killed = self.stage.adapter.killed or "its process group"
            self.fired = self.stage.recorder.record(
                "crashed", tool=self.tool, pid=pause.event.pid,
                text=f"during_pause: process {pause.event.pid} killed (SIGKILL) during pause {pause.number}, "
                     f"before the decision, with {killed}")

    async def resume(self, pause: Pause, decision: Decision | DecisionSet) -> LegResult:
        if self.point == "during_pause" and pause.number + 1 == self.at:
            self._kill_at_pause(True)
        if self.point != "during_pause" and pause.number == self.at:
            self.armed_leg = self.stage.recorder.leg
        try:
            result = await super().resume(pause, decision)
        except Exception:
            if not self.killing.is_set() or self.point == "during_pause":
                raise
            return await self._recover(pause, decision)
        self.armed_leg = None
        if self.killing.is_set() and self.point != "during_pause":  # an adapter that outlived its kill
            return await self._recover(pause, decision)
        return result

    async def _recover(self, pause: Pause, decision: Decision | DecisionSet) -> LegResult:
        """Recover from the state saved at the pause, in a new process: resumed again with the same decision,
        or (way `continue`) continued from what the framework persisted, the decision not given again."""
        deadline = time.monotonic() + KILL_WAIT_S + 1
        while self.fired is None and time.monotonic() < deadline:  # the kill is recorded before the recovery
            await asyncio.sleep(0.005)
        state = pause.state
        for attempt in range(REASKS + 1):
            self.stage.next_leg()
            survivors = survivors_of(self.stage.adapter)  # what the kill left alive, or an earlier leg did
            if attempt == 0 and self.way == "continue":
                self.stage.recorder.record("resumed", replay="recover", survivors=survivors,
                                           text="continue: from what the framework persisted, no decision given")
                result = await self.stage.adapter.continue_run(state, self.stage.ctx)
            else:
                record_resume(self.stage.recorder, decision, replay="recover", survivors=survivors)
                result = await self.stage.adapter.resume(state, decision, self.stage.ctx)
            if not isinstance(result, LegResult) or result.status != "suspended":
                return result
            # the recovered run asks the human again: the same answer is given
            record_pause(self.stage.recorder, result, leg_pid(self.stage.adapter))
            state = result.state
        return result

    async def after_run(self) -> None:
        self._unwatch()
