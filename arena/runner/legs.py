"""The leg loop: one call into the adapter per leg, each pause recorded and watched, one trace for all of it.

A leg is one call into the adapter: `start`, or `resume` with the next decision from the item's
`resume_with`. Each suspension (a leg returning a paused state) is recorded, then *watched*: the decision
is held for a short dwell while anything the item still does (a model request, a tool call) lands in
the trace between `suspended` and `resumed`, where the `suspended` check sees it. `MAX_RESUMES` caps the
cycle so a broken adapter fails loudly instead of looping. What the arena adds around the pauses is its
director's (`director.py`): the loop calls it at each moment and does the same for every arena.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import Any

from arena.runner.director import Director, Pause, Stage
from arena.runner.processes import leg_pid, survivors_of
from arena.stores import StoreError
from arena.trace import ACTIVITY, TraceRecorder
from arena.adapter import Adapter
from arena.types import Decision, DecisionSet, LegContext, LegResult, TraceEvent

MAX_RESUMES = 3


def describe(exc: BaseException) -> str:
    """An exception as one line of a trace: its type and the first line of its message."""
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}".rstrip(": ")


def record_pause(recorder: TraceRecorder, result: LegResult, pid: int) -> TraceEvent:
    """A suspended leg as the trace shows it: the first pending call, and all of them at a pause with several."""
    pending = result.pending
    # all of them at a pause with several, or where the adapter says more about the call (a channel's own fields:
    # delegation's `agent`, whose call it is)
    said = any(v is not None for p in result.all_pending for v in (p.model_extra or {}).values())
    several = result.all_pending if len(result.all_pending) > 1 or said else None
    return recorder.record(
        "suspended", tool=pending.tool if pending else None, args=pending.args if pending else None, pid=pid,
        pending=[p.model_dump(exclude_none=True) for p in several] if several else None,
    )


def record_resume(recorder: TraceRecorder, decision: Decision | DecisionSet, **fields: Any) -> TraceEvent:
    """The decision a resume delivers: one decision, or each of a set's (routed to its call)."""
    if isinstance(decision, DecisionSet):
        return recorder.record("resumed", decisions=decision.decisions, **fields)
    return recorder.record("resumed", decision=decision, **fields)


def route(decisions: list[Decision], trace: list[TraceEvent], pause: TraceEvent) -> DecisionSet:
    """Give each of an item's decisions the id of the call it is for, from what the model asked.

    The ids come from the model's own answers in the paused leg, as the harness's gateway recorded
    them, not from the adapter's account of what is pending: each decision goes to the latest call
    its `match` selects. A decision that selects no call keeps `call_id` None (the adapter gets it,
    and a check reports it).
    """
    asked = [c for e in trace if e.type == "model_call" and e.leg == pause.leg and e.seq < pause.seq
             for c in (e.response or {}).get("tool_calls") or []]
    routed = []
    for decision in decisions:
        if decision.call_id is not None:  # the item names the call itself (a hostile resume): passed on as it is
            routed.append(decision)
            continue
        call = next((c for c in reversed(asked) if decision.matches(str(c.get("name")), c.get("args"))), None)
        routed.append(decision.model_copy(update={"call_id": call.get("id") if call else None}))
    return DecisionSet(decisions=routed)


async def replay(stage: Stage, adapter: Adapter, state: Any, decision: Decision | DecisionSet, mode: str,
                 ctx: LegContext | None = None, same_leg: bool = False) -> None:
    """Resume a saved paused state once more, as an arena's director does (a hostile replay, a late approval): a
    `resumed` event with `replay` set to `mode`, in a leg of its own (or the current one), ending in a `replayed`
    event (`result`: finished, suspended, errored or raised; `text`: its final text, error or pending tools).
    Whatever it does is recorded (a framework raising here is a measured refusal, never the item's fault), and
    nothing it returns continues the run."""
    recorder = stage.recorder
    leg = recorder.leg if same_leg else stage.next_leg()
    record_resume(recorder, decision, leg=leg, replay=mode)
    await record_replayed(recorder, adapter, leg, mode, adapter.resume(state, decision, ctx or stage.ctx))


async def record_replayed(recorder: TraceRecorder, adapter: Adapter, leg: int, mode: str,
                          leg_run: Awaitable[Any]) -> None:
    """Run a leg the harness started itself (a replay, or an arena's own leg after the run) and record how it ended:
    a `replayed` event (`result`: finished, suspended, errored or raised; `text`: its final text, error or pending
    tools). A framework raising here is recorded, never the item's fault, and nothing it returns continues the run."""
    try:
        result = await leg_run
    except Exception as exc:
        recorder.record("replayed", leg=leg, result="raised", text=describe(exc), replay=mode, pid=leg_pid(adapter))
        return
    if not isinstance(result, LegResult):
        recorder.record("replayed", leg=leg, result="raised", replay=mode,
                        text=f"the adapter returned {type(result).__name__}, not a LegResult")
        return
    text = result.final_text if result.status == "finished" else result.error if result.status == "errored" else \
        ", ".join(p.tool for p in result.all_pending)
    recorder.record("replayed", leg=leg, result=result.status, text=text or "", replay=mode,
                    pid=leg_pid(adapter), tool=result.pending.tool if result.pending else None)


async def restart_store(stage: Stage) -> None:
    """Stop and restart the server that holds the item's paused state (its private one), recorded as a `store` event;
    what the resume then finds is the framework's store handling, measured by the arena's checks."""
    kind = stage.ctx.store.kind
    try:
        assert stage.restart_store is not None
        await asyncio.to_thread(stage.restart_store)
    except Exception as exc:  # the harness could not restart it: the item cannot be measured
        raise StoreError(f"the harness could not restart the item's {kind} server: {describe(exc)}") from None
    stage.recorder.record("store", text=f"{kind} server stopped and restarted during the pause")


async def observe_store(stage: Stage, moment: str) -> None:
    """What the harness sees of the item's store and work directory now, as a `store_seen` event (store runs only):
    before the first leg, at each pause once the item is quiet, as each decision is delivered, and at the end."""
    if stage.store_watch is not None:
        seen = await asyncio.to_thread(stage.store_watch.observe, moment)
        stage.recorder.record("store_seen", text=moment, data=seen)


async def drive(stage: Stage, director: Director) -> str | None:
    """Drive the legs; returns the adapter's fault as a message, or None when the run finished."""
    item, recorder, watch = stage.item, stage.recorder, stage.watch  # stage.adapter: a director may hand it over
    recorder.leg = 0
    await observe_store(stage, "before")
    result = await director.start()
    resumes = 0
    fault: str | None = None
    while True:
        if not isinstance(result, LegResult):
            fault = f"the adapter returned {type(result).__name__}; a leg must return an arena.types.LegResult"
            recorder.record("error", text=fault)
            break
        pid = leg_pid(stage.adapter)
        if result.status == "finished":
            recorder.record("final", text=result.final_text or "", pid=pid)
            break
        if result.status == "errored":
            fault = result.error or "the adapter reported an error"
            recorder.record("error", text=fault, pid=pid)
            break
        event = record_pause(recorder, result, pid)
        pause = Pause(number=resumes + 1, result=result, event=event)
        await director.paused(pause)
        if resumes >= MAX_RESUMES:
            fault = f"still suspended after MAX_RESUMES={MAX_RESUMES} resumes"
            recorder.record("error", text=fault)
            break
        if resumes >= len(item.resume_with):
            fault = f"suspended a {resumes + 1}. time but the item has only {len(item.resume_with)} decision(s)"
            recorder.record("error", text=fault)
            break
        await director.deciding(pause)
        # The pause is watched: the decision is held while whatever still runs shows up in the trace.
        await asyncio.sleep(watch.dwell_s)
        if any(e.type in ACTIVITY and e.seq > event.seq for e in recorder.events):  # it ran on: see how far
            await stage.quiet()
        await director.decided(pause)
        await observe_store(stage, "pause")
        if stage.restart_store is not None and resumes == 0:  # the store's server goes down and up during the pause
            await restart_store(stage)
        entry = item.resume_with[resumes]
        survivors = survivors_of(stage.adapter)
        resumes += 1
        stage.next_leg()
        decision = route(entry, recorder.events, event) if isinstance(entry, list) else entry
        await observe_store(stage, "resume")
        record_resume(recorder, decision, survivors=survivors)
        result = await director.resume(pause, decision)
    await director.after_run()
    return fault


async def run_and_close(stage: Stage, director: Director) -> str | None:
    """Adapters may define `async aclose()` to release clients inside the item's own event loop.

    The item is watched until it goes quiet *before* the adapter closes its clients, so a task the
    framework left running can still reach the harness and be seen.
    """
    raised = True
    try:
        fault = await drive(stage, director)
        await stage.quiet()
        raised = False
    finally:
        await stage.adapter.aclose()
        try:  # its processes closed: what they read is counted; and a leg that raised may have written elsewhere
            await observe_store(stage, "end")
        except StoreError:
            if not raised:  # else the adapter's own failure stands
                raise
    return fault
