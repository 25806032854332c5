"""Runs items through an adapter leg by leg, watches the pauses, and merges everything into one trace.

A leg is one call into the adapter: `start`, or `resume` with the next decision from the item's
`resume_with`. Each suspension the runner observes (a leg returning a paused state) is recorded,
then *watched*: the decision is held for a short dwell while anything the item still does (a model
request, a tool call) lands in the trace between `suspended` and `resumed`, where the `suspended`
check sees it. After the last leg the runner waits for the item to go quiet, then seals it: what
arrives later is a late event. All legs, tool calls and model requests write into one recorder, so
the merged trace is a single ordered log. `MAX_RESUMES` caps the cycle so a broken adapter fails
loudly instead of looping, and each item runs under a timeout in its own thread so a hung adapter
cannot stall the run.

Item status: `passed`; `failed` when a check fails, including `completed` when the adapter raised,
crashed, hung or broke the pause protocol (a measured fault of the adapter or its framework); and
`errored` only when the harness could not measure the item (the model endpoint failed).
"""

from __future__ import annotations

import asyncio
import copy
import json
import os
import shutil
import tempfile
import threading
import time
import traceback
from collections.abc import Callable, Collection
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena import scratch
from arena.checks import run_checks
from arena.model.script import Draw, bind
from arena.results import ItemResult
from arena.spec import ArenaSpec
from arena.tools.box import LocalToolBox, ToolExecutor
from arena.trace import ACTIVITY, TraceRecorder
from arena.types import (
    Capabilities, Decision, DecisionSet, EvalItem, LegContext, LegResult, Replay, ResumableRunner, ToolKind,
    TraceEvent,
)

MAX_RESUMES = 3
DEFAULT_TIMEOUT_S = 60.0
# How long a decision is held after a suspension, and how long an item must stay quiet before it is
# sealed. Measured in bench/pause_dwell.py: on a loaded 2-core machine activity that a framework
# leaves running shows within a few ms; see docs/methodology.md.
PAUSE_DWELL_S = 0.1
QUIET_S = 0.1
QUIET_MAX_S = 2.0


@dataclass(frozen=True)
class Watch:
    """How the runner watches a pause and the end of an item."""

    dwell_s: float = PAUSE_DWELL_S
    quiet_s: float = QUIET_S
    quiet_max_s: float = QUIET_MAX_S


class AdapterExit(BaseException):
    """An in-process adapter called os._exit: that item's crash, not the end of the harness."""


_REAL_EXIT = os._exit


def _guarded_exit(code: int) -> None:
    if threading.current_thread() is not threading.main_thread():  # an item's thread: its adapter's doing
        raise AdapterExit(f"the adapter called os._exit({code})")
    _REAL_EXIT(code)


def _guard_process_exit() -> None:
    """Items run in threads of the harness's own process; one calling os._exit would end every run."""
    if os._exit is not _guarded_exit:
        os._exit = _guarded_exit  # type: ignore[assignment]


def _describe(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}".rstrip(": ")


def _leg_pid(adapter: ResumableRunner) -> int:
    """The process that ran the leg, as the harness knows it: a worker it spawned, or itself."""
    from arena.worker.client import WorkerAdapter

    if isinstance(adapter, WorkerAdapter) and adapter.leg_pid is not None:
        return adapter.leg_pid
    return os.getpid()


def _survivors(adapter: ResumableRunner) -> list[dict[str, Any]] | None:
    from arena.worker.client import WorkerAdapter

    if isinstance(adapter, WorkerAdapter):
        return [p.to_json() for p in adapter.survivors()] or None
    return None


def _left_to_wait(last_activity: float, start: float, quiet_s: float, max_s: float) -> float:
    """Seconds still to wait for `quiet_s` without activity since `start` (time.monotonic()); 0: quiet, or
    `max_s` is up."""
    now = time.monotonic()
    idle = now - max(last_activity, start)
    return 0.0 if idle >= quiet_s or now - start >= max_s else quiet_s - idle


async def _quiesce(recorder: TraceRecorder, quiet_s: float, max_s: float) -> None:
    """Wait until the item has done nothing for `quiet_s` (at most `max_s`), letting its tasks run."""
    start = time.monotonic()
    while (left := _left_to_wait(recorder.last_activity, start, quiet_s, max_s)) > 0:
        await asyncio.sleep(left)


def settle(last_late: Callable[[], float], quiet_s: float = QUIET_S, max_s: float = QUIET_MAX_S) -> None:
    """The run's last quiet period: wait until no late event has arrived for `quiet_s` (at most `max_s`), so that
    what a framework left running after the last items were sealed is in the results the run writes.
    `last_late` gives the time.monotonic() of the latest late event."""
    start = time.monotonic()
    while (left := _left_to_wait(last_late(), start, quiet_s, max_s)) > 0:
        time.sleep(left)


async def _legs(adapter: ResumableRunner, ctx: LegContext, recorder: TraceRecorder, watch: Watch,
                on_pause: Callable[[int], None] | None = None,
                spare: Spare | None = None) -> str | None:
    """Drive the legs; returns the adapter's fault as a message, or None when the run finished.

    With an item `replay` (a hostile resume), the paused state of the chosen pause is kept as it was
    handed back and resumed once more where the replay says (see `_replay`); `spare` gives the second
    adapter (and the state as it takes it) a concurrent replay resumes from.
    """
    item = ctx.item
    replay = item.replay
    saved: dict[int, tuple[Any, TraceEvent]] = {}  # pause number -> (its paused state, as handed back; its event)
    recorder.leg = 0
    result = await adapter.start(ctx)
    resumes = 0
    fault: str | None = None
    while True:
        if not isinstance(result, LegResult):
            fault = f"the adapter returned {type(result).__name__}; a leg must return an arena.types.LegResult"
            recorder.record("error", text=fault)
            break
        pid = _leg_pid(adapter)
        if result.status == "finished":
            recorder.record("final", text=result.final_text or "", pid=pid)
            break
        if result.status == "errored":
            fault = result.error or "the adapter reported an error"
            recorder.record("error", text=fault, pid=pid)
            break
        pending = result.pending
        several = result.all_pending if len(result.all_pending) > 1 else None
        pause = recorder.record(
            "suspended", tool=pending.tool if pending else None, args=pending.args if pending else None, pid=pid,
            pending=[p.model_dump(exclude_none=True) for p in several] if several else None,
        )
        if replay is not None and replay.state == resumes + 1:
            saved[replay.state] = (_keep(result.state), pause)
        if resumes >= MAX_RESUMES:
            fault = f"still suspended after MAX_RESUMES={MAX_RESUMES} resumes"
            recorder.record("error", text=fault)
            break
        if resumes >= len(item.resume_with):
            fault = f"suspended a {resumes + 1}. time but the item has only {len(item.resume_with)} decision(s)"
            recorder.record("error", text=fault)
            break
        if on_pause is not None:  # the world may move on while the human decides (an arena's backend)
            on_pause(resumes + 1)
        # The pause is watched: the decision is held while whatever still runs shows up in the trace.
        await asyncio.sleep(watch.dwell_s)
        if any(e.type in ACTIVITY and e.seq > pause.seq for e in recorder.events):  # it ran on: see how far
            await _quiesce(recorder, watch.quiet_s, watch.quiet_max_s)
        if replay is not None and replay.when == "at_next_pause" and resumes == replay.state and replay.state in saved:
            await _replay(adapter, *saved.pop(replay.state), replay, ctx, recorder)
        entry = item.resume_with[resumes]
        survivors = _survivors(adapter)
        resumes += 1
        recorder.leg = max(e.leg for e in recorder.events) + 1
        decision = route(entry, recorder.events, pause) if isinstance(entry, list) else entry
        if isinstance(decision, DecisionSet):
            recorder.record("resumed", decisions=decision.decisions, survivors=survivors)
        else:
            recorder.record("resumed", decision=decision, survivors=survivors)
        if replay is not None and replay.when == "concurrent" and replay.state == resumes and spare is not None:
            second, kept = spare(saved[resumes][0])
            saved[resumes] = (kept, saved[resumes][1])
            arrived, released = asyncio.Event(), threading.Event()
            held = ctx.model_copy(update={"tools": _HeldTools(ctx.tools, arrived, released, _consequential(ctx))})
            own = asyncio.ensure_future(adapter.resume(result.state, decision, held))
            reached = asyncio.ensure_future(arrived.wait())
            await asyncio.wait({own, reached}, return_when=asyncio.FIRST_COMPLETED)
            reached.cancel()
            try:  # the second resume arrives while the first is inside its consequential call (or has ended)
                await _replay(second, *saved.pop(resumes), replay, ctx, recorder, same_leg=True)
            finally:
                released.set()
                close = getattr(second, "aclose", None)
                if close is not None:
                    await close()
            result = await own
        else:
            result = await adapter.resume(result.state, decision, ctx)
    if replay is not None and replay.when == "after_run" and replay.state in saved:
        await _quiesce(recorder, watch.quiet_s, watch.quiet_max_s)
        await _replay(adapter, *saved.pop(replay.state), replay, ctx, recorder)
    return fault


# How long the first of two concurrent resumes is held at its consequential call for the second to end.
CONCURRENT_HOLD_S = 10.0


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

    def call(self, name: str, args: dict[str, Any]) -> str:
        return self.inner.call(name, args)

    async def acall(self, name: str, args: dict[str, Any]) -> str:
        await self.held(name)
        return await self.inner.acall(name, args)


class _HeldExecutor:
    """The item's tool executor as the harness's server serves it to a worker, holding as `_HeldTools` does."""

    def __init__(self, inner: Any, tools: _HeldTools):
        self.inner, self.tools = inner, tools

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def execute(self, name: str, args: dict[str, Any]) -> str:
        return self.inner.execute(name, args)

    async def aexecute(self, name: str, args: dict[str, Any]) -> str:
        await self.tools.held(name)
        return self.inner.execute(name, args)


Spare = Callable[[Any], "tuple[ResumableRunner, Any]"]


def _spare(spare_factory: Callable[[], ResumableRunner] | None,
           adapter_factory: Callable[[], ResumableRunner]) -> Spare:
    """The second adapter of a concurrent replay, and the paused state as it takes it.

    A second adapter in a worker process of its own (the CLI's `spare_factory`) is handed the paused state
    as JSON, the way a second process would read a durable state; a state that is not data (a live
    object) cannot leave its process, so that replay comes from a second instance in this process.
    """
    from arena.worker.client import WorkerAdapter, WorkerState

    def spare(state: Any) -> tuple[ResumableRunner, Any]:
        if spare_factory is None:
            return adapter_factory(), state
        if isinstance(state, WorkerState):
            return spare_factory(), state
        try:
            value = json.loads(json.dumps(state))
        except (TypeError, ValueError):
            return adapter_factory(), state
        second = spare_factory()
        return second, (WorkerState(handle=None, value=value, is_json=True) if isinstance(second, WorkerAdapter)
                        else state)

    return spare


def _keep(state: Any) -> Any:
    """The paused state as it was handed back: a copy, so that resuming it once cannot change what is replayed."""
    try:
        return copy.deepcopy(state)
    except Exception:  # a live handle (a client, a lock) cannot be copied: it is replayed as it is
        return state


async def _replay(adapter: ResumableRunner, state: Any, pause: TraceEvent, replay: Replay, ctx: LegContext,
                  recorder: TraceRecorder, same_leg: bool = False) -> None:
    """One hostile resume. Whatever it does is recorded (a framework raising here is a measured refusal,
    never the item's fault), and nothing it returns continues the run."""
    if not same_leg:
        recorder.leg = max(e.leg for e in recorder.events) + 1
    leg = recorder.leg
    decision: Decision | DecisionSet = replay.decision
    if isinstance(replay.decision, list):
        decision = route(replay.decision, recorder.events, pause)
        recorder.record("resumed", leg=leg, decisions=decision.decisions, replay=replay.when)
    else:
        recorder.record("resumed", leg=leg, decision=replay.decision, replay=replay.when)
    try:
        result = await adapter.resume(state, decision, ctx)
    except Exception as exc:
        recorder.record("replayed", leg=leg, result="raised", text=_describe(exc), replay=replay.when,
                        pid=_leg_pid(adapter))
        return
    if not isinstance(result, LegResult):
        recorder.record("replayed", leg=leg, result="raised", replay=replay.when,
                        text=f"the adapter returned {type(result).__name__}, not a LegResult")
        return
    text = result.final_text if result.status == "finished" else result.error if result.status == "errored" else \
        ", ".join(p.tool for p in result.all_pending)
    recorder.record("replayed", leg=leg, result=result.status, text=text or "", replay=replay.when, pid=_leg_pid(adapter),
                    tool=result.pending.tool if result.pending else None)


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


async def _run_and_close(adapter: ResumableRunner, ctx: LegContext, recorder: TraceRecorder, watch: Watch,
                         on_pause: Callable[[int], None] | None = None,
                         spare: Spare | None = None) -> str | None:
    """Adapters may define `async aclose()` to release clients inside the item's own event loop.

    The item is watched until it goes quiet *before* the adapter closes its clients, so a task the
    framework left running can still reach the harness and be seen.
    """
    try:
        fault = await _legs(adapter, ctx, recorder, watch, on_pause, spare)
        await _quiesce(recorder, watch.quiet_s, watch.quiet_max_s)
        return fault
    finally:
        close = getattr(adapter, "aclose", None)
        if close is not None:
            await close()


def _infrastructure_failure(trace: list[TraceEvent]) -> str | None:
    """A model request the endpoint (not the framework) failed, or one still unanswered."""
    for e in trace:
        if e.type != "model_call" or e.late or not e.response:
            continue
        if e.response.get("infrastructure") or e.response.get("injected"):
            return f"the model endpoint failed: {e.response.get('error') or e.response.get('status')}"
        if e.response.get("pending"):
            return "a model request was still unanswered"
    return None


def _declared(adapter: Any, arena: ArenaSpec) -> Capabilities:
    info = getattr(adapter, "info", None)
    return arena.capabilities_of(info) if info is not None else Capabilities()


def score(item: EvalItem, trace: list[TraceEvent], arena: ArenaSpec, declared: Capabilities, *,
          fault: str | None, infrastructure: str | None, duration_s: float) -> ItemResult:
    checks = run_checks(item, trace, arena, declared)
    if infrastructure:
        status, error = "errored", infrastructure
    else:
        status, error = ("passed" if all(c.passed for c in checks) else "failed"), fault
    return ItemResult(
        item_id=item.id,
        status=status,
        checks=checks,
        error=error,
        legs=max((e.leg for e in trace if not e.late), default=0) + 1,
        duration_s=duration_s,
        trace=trace,
    )


@dataclass
class _Item:
    """An item in flight or done: what rescoring it after a late event needs."""

    item: EvalItem
    recorder: TraceRecorder
    declared: Capabilities
    fault: str | None
    infrastructure: str | None
    duration_s: float
    channel: Any
    epoch: int = 1
    traceback: str | None = None  # the adapter's exception, formatted (ItemResult.traceback)


def _run_item(adapter_factory: Callable[[], ResumableRunner], arena: ArenaSpec, item: EvalItem, server: Any,
              model: Any, timeout_s: float, watch: Watch,
              on_late: Callable[[str, TraceEvent], None] | None,
              spare_factory: Callable[[], ResumableRunner] | None = None, epoch: int = 1,
              seed: int = 0) -> tuple[ItemResult, _Item]:
    recorder = TraceRecorder()
    if on_late is not None:  # a later epoch's late event says which epoch it belongs to
        recorder.on_late = (lambda event: on_late(item.id, event)) if epoch == 1 else \
            (lambda event: on_late(item.id, event, epoch=epoch))  # type: ignore[call-arg]
    state_dir = tempfile.mkdtemp(prefix=scratch.prefix(f"{item.id}-state")) if arena.backend is not None else None
    backend = arena.backend(item, Path(state_dir)) if arena.backend is not None and state_dir else None
    executor = ToolExecutor(arena.tools, arena.functions, recorder, backend)
    # the item's endpoint serves its arena's profiles, a sampled one bound to this run of the item
    channel = server.open_item(recorder, model, bind(arena.all_policies, Draw(item.id, epoch, seed)))
    outcome: dict[str, Any] = {}
    started = time.monotonic()

    def on_pause(pause: int) -> None:
        if backend is not None:
            with executor.locked():  # never in the middle of a tool call another thread is making
                backend.on_pause(pause)

    def target() -> None:
        with tempfile.TemporaryDirectory(prefix=scratch.prefix(item.id)) as workdir:
            try:
                adapter = outcome["adapter"] = adapter_factory()
                # the tools as this adapter's framework can take them (see ArenaSpec.tools_for)
                specs = arena.tools_for(adapter.info) if hasattr(adapter, "info") else list(arena.tools)
                ctx = LegContext(item=item, instructions=arena.instructions, model=channel.model,
                                 tools=LocalToolBox(executor, specs), workdir=workdir)
                outcome["fault"] = asyncio.run(_run_and_close(adapter, ctx, recorder, watch, on_pause,
                                                           _spare(spare_factory, adapter_factory)))
            except BaseException as exc:  # an adapter's crash is that item's failure, never the run's
                message = _describe(exc)
                recorder.record("error", text=message)
                outcome["fault"] = message
                # an adapter in a worker: the traceback the worker formatted, where the adapter raised
                outcome["traceback"] = getattr(exc, "remote_traceback", None) or traceback.format_exc()

    thread = threading.Thread(target=target, name=f"arena-item-{item.id}", daemon=True)
    thread.start()
    thread.join(timeout_s)
    fault, infrastructure = outcome.get("fault"), outcome.get("infrastructure")
    hung = thread.is_alive()
    if hung:  # the abandoned thread may still write to `outcome`: what it writes from now on is ignored
        pending = any(e.type == "model_call" and (e.response or {}).get("pending") for e in recorder.events)
        message = f"timed out after {timeout_s:g}s" + (" waiting for the model endpoint" if pending else "")
        recorder.record("error", text=message)
        fault, infrastructure = (None, message) if pending else (message, None)
    if backend is not None:  # what the run left in the backend, for the checks (before the seal: not late)
        with executor.locked():
            recorder.record("state", data=backend.dump())
    recorder.seal()  # from here on, anything for this item is late
    if backend is not None:
        with executor.locked():
            backend.close()
        shutil.rmtree(state_dir, ignore_errors=True)
    trace = recorder.events
    if hung:
        terminate = getattr(outcome.get("adapter"), "terminate", None)
        if terminate is not None:  # a worker process can be reclaimed; a thread cannot
            terminate()
    done = _Item(
        item=item, recorder=recorder, declared=_declared(outcome.get("adapter") or adapter_factory, arena),
        fault=fault, infrastructure=infrastructure or _infrastructure_failure(trace),
        duration_s=round(time.monotonic() - started, 3), channel=channel, epoch=epoch,
        traceback=None if hung else outcome.get("traceback"),
    )
    return _rescore(arena, done, trace), done


def _rescore(arena: ArenaSpec, done: _Item, trace: list[TraceEvent]) -> ItemResult:
    result = score(done.item, trace, arena, done.declared, fault=done.fault, infrastructure=done.infrastructure,
                   duration_s=done.duration_s)
    result.epoch = done.epoch
    result.traceback = done.traceback
    return result


def run_item(adapter_factory: Callable[[], ResumableRunner], arena: ArenaSpec, item: EvalItem, *, server: Any,
             model: Any, timeout_s: float = DEFAULT_TIMEOUT_S, watch: Watch = Watch()) -> ItemResult:
    """One item on its own (see `run_items`)."""
    return run_items(adapter_factory, arena, [item], server=server, model=model, timeout_s=timeout_s, watch=watch)[0]


def run_items(
    adapter_factory: Callable[[], ResumableRunner],
    arena: ArenaSpec,
    items: list[EvalItem],
    *,
    server: Any,
    model: Any,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    on_result: Callable[[ItemResult], None] | None = None,
    on_late: Callable[[str, TraceEvent], None] | None = None,
    watch: Watch = Watch(),
    concurrency: int = 1,
    spare_factory: Callable[[], ResumableRunner] | None = None,
    epochs: int = 1,
    seed: int = 0,
    skip: Collection[tuple[str, int]] = (),
) -> list[ItemResult]:
    """Run items, up to `concurrency` at once; each item's failure stays that item's.

    `server` is the harness's `HarnessServer`; `model` a `ModelTarget` or a scripted profile name.
    Each item gets its own model endpoint on the server, its own tool executor (and backend) and its
    own adapter instance, so items share no run state and a concurrent run gives the results of a
    serial one. `on_result` is called as items finish (in the order they finish); the returned list
    is in item order. An item that receives late events (after it was sealed, while other items ran)
    is scored again at the end, and the returned list holds that final result. `spare_factory` makes the
    second adapter of a concurrent replay (default: `adapter_factory`; the CLI gives one in another process).

    With `epochs` > 1 every item runs that many times, epoch by epoch (results in that order, each with
    its `epoch`); a sampled profile draws its deviations from (`seed`, item, epoch). `skip` holds the
    (item id, epoch) pairs not to run (a resumed run's finished ones).
    """
    _guard_process_exit()
    done: dict[int, tuple[ItemResult, _Item]] = {}
    units = [(item, epoch) for epoch in range(1, epochs + 1) for item in items if (item.id, epoch) not in skip]

    def one(index: int) -> tuple[int, ItemResult, _Item]:
        item, epoch = units[index]
        result, state = _run_item(adapter_factory, arena, item, server, model, timeout_s, watch, on_late,
                                  spare_factory, epoch, seed)
        return index, result, state

    try:
        if concurrency <= 1 or len(units) <= 1:
            finished = (one(i) for i in range(len(units)))
            for index, result, state in finished:
                done[index] = (result, state)
                if on_result is not None:
                    on_result(result)
        else:
            with ThreadPoolExecutor(max_workers=min(concurrency, len(units)), thread_name_prefix="arena-items") as pool:
                futures = [pool.submit(one, i) for i in range(len(units))]
                for future in as_completed(futures):
                    index, result, state = future.result()
                    done[index] = (result, state)
                    if on_result is not None:
                        on_result(result)
        results = []
        for index in range(len(units)):
            result, state = done[index]
            if state.recorder.late_events():
                result = _rescore(arena, state, state.recorder.events)
            results.append(result)
    finally:
        for _, state in done.values():
            server.gateway.forget(state.channel)
    return results
