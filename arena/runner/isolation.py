"""One item, isolated: its own work directory, tool backend and executor, model endpoint and adapter instance,
run in a thread of its own under a timeout, sealed, then closed.

Items share no run state, so a concurrent run gives the results of a serial one; an item's crash, hang or
`os._exit` is that item's failure, never the run's. The item's thread runs its legs (`legs.py`) in an
event loop of its own, with the arena's director (`director.py`).
"""

from __future__ import annotations

import asyncio
import os
import shutil
import tempfile
import threading
import time
import traceback
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from arena import scratch, store_health
from arena.model.script import Draw, bind
from arena.results import ItemResult
from arena.runner.director import BaseDirector, Stage
from arena.runner.legs import describe, run_and_close
from arena.runner.scoring import Scored, declared_of, infrastructure_failure, rescore
from arena.runner.watch import Watch
from arena.spec import ArenaSpec
from arena.stores import RESTART, StoreError, item_store, marked
from arena.streaming import LocalStreamLog
from arena.tools.box import LocalToolBox, ToolExecutor
from arena.trace import TraceRecorder
from arena.adapter import Adapter
from arena.types import EvalItem, LegContext, StoreKind, TraceEvent
from arena.worker.procs import LegChildren

DEFAULT_TIMEOUT_S = 60.0


class AdapterExit(BaseException):
    """An in-process adapter called os._exit: that item's crash, not the end of the harness."""


_REAL_EXIT = os._exit


def _guarded_exit(code: int) -> None:
    if threading.current_thread() is not threading.main_thread():  # an item's thread: its adapter's doing
        raise AdapterExit(f"the adapter called os._exit({code})")
    _REAL_EXIT(code)


def guard_process_exit() -> None:
    """Items run in threads of the harness's own process; one calling os._exit would end every run."""
    if os._exit is not _guarded_exit:
        os._exit = _guarded_exit  # type: ignore[assignment]


DEFAULT_STARTUP_TIMEOUT_S = 300.0  # the adapter's start-up before its first leg: ARENA_STARTUP_TIMEOUT overrides it


def startup_timeout_s() -> float:
    """How long an item's start-up (its store made, its adapter built: a framework's import) may take before the item
    is abandoned as not measured: $ARENA_STARTUP_TIMEOUT seconds, else DEFAULT_STARTUP_TIMEOUT_S."""
    try:
        value = float(os.environ.get("ARENA_STARTUP_TIMEOUT") or DEFAULT_STARTUP_TIMEOUT_S)
    except ValueError:
        return DEFAULT_STARTUP_TIMEOUT_S
    return value if value > 0 else DEFAULT_STARTUP_TIMEOUT_S


def import_framework(adapter: Any) -> None:
    """Import what an in-process adapter's framework needs (its class's `preload` modules, as a fork server does)
    before the item's clock starts: a framework's first import in the process is start-up, not the framework's time
    at the pause. Once imported, nothing is done again; a module it cannot import is left to the adapter."""
    import importlib
    import sys

    from arena.worker.client import QUIET_ENV

    cls = type(adapter)
    with _WARM_LOCK:
        if cls in _WARMED:
            return
        _WARMED.add(cls)
        for key, value in QUIET_ENV.items():  # offline as a worker is: no telemetry, no hub or cost-map fetch
            os.environ.setdefault(key, value)
        try:
            for module in cls.preload:
                if isinstance(module, str) and module not in sys.modules:
                    importlib.import_module(module)
            if "openai" in sys.modules and "openai" not in _WARMED:  # what a process's first chat request loads
                from arena import http

                _WARMED.add("openai")
                http.warm()
            cls.warm()  # what the adapter's framework builds once per process (nothing, by default)
        except Exception:  # noqa: BLE001, S110 - the adapter meets it itself, in its leg, as it would have
            pass


_WARM_LOCK = threading.Lock()
_WARMED: set[Any] = set()  # the adapter classes (and "openai") whose framework this process has imported


def wait_framework_time(thread: threading.Thread, timeout_s: float, outcome: dict[str, Any],
                        recorder: TraceRecorder) -> str | None:
    """Wait for the item's thread while the framework has time left; None once it ended, else what ran over:
    "start-up" (the adapter never reached its first leg) or "timeout".

    The timeout's clock counts the framework's time only: it starts when the first leg begins (`outcome["clock"]`,
    after the store is made and the adapter built), and the time while any of the item's model requests is in flight
    at the gateway (`recorder.model_clock`: the endpoint's latency) is not counted."""
    begun_at = time.monotonic()
    while thread.is_alive():
        now = time.monotonic()
        clock = outcome.get("clock")
        if clock is None:
            left = begun_at + startup_timeout_s() - now
            if left <= 0:
                return "start-up"
            thread.join(min(left, 0.05))
            continue
        left = timeout_s - (now - clock - recorder.model_clock.waited())
        if left <= 0:
            return "timeout"
        thread.join(left)
    return None


def run_isolated(adapter_factory: Callable[[], Adapter], arena: ArenaSpec, item: EvalItem, server: Any,
            model: Any, timeout_s: float, watch: Watch,
            on_late: Callable[[str, TraceEvent], None] | None,
            spare_factory: Callable[[], Adapter] | None = None, epoch: int = 1,
            seed: int = 0, stream: bool = False, store: StoreKind = "sqlite") -> tuple[ItemResult, Scored]:
    """Run one item (one epoch of it) and score it; also returns what rescoring it later needs. `stream`: every
    leg is streamed (`LegContext.stream`), and what the stream tells is recorded and checked. `store`: where the
    adapter keeps the paused state (`LegContext.store`: the item's own database or key prefix on that server)."""
    recorder = TraceRecorder()
    if on_late is not None:  # a later epoch's late event says which epoch it belongs to
        recorder.on_late = (lambda event: on_late(item.id, event)) if epoch == 1 else \
            (lambda event: on_late(item.id, event, epoch=epoch))  # type: ignore[call-arg]
    state_dir = tempfile.mkdtemp(prefix=scratch.prefix(f"{item.id}-state")) if arena.backend is not None else None
    unready: str | None = None  # the arena's backend could not be built: the harness's failure, that item's only
    try:
        backend = arena.backend(item, Path(state_dir)) if arena.backend is not None and state_dir else None
    except Exception as exc:  # noqa: BLE001 - reported as the item's infrastructure failure
        backend, unready = None, f"the arena's tool backend for this item could not be built: {describe(exc)}"
    executor = ToolExecutor(arena.tools, arena.functions, recorder, backend)
    # the item's endpoint serves its arena's profiles, a sampled one bound to this run of the item
    channel = server.open_item(recorder, model, bind(arena.all_policies, Draw(item.id, epoch, seed)),
                               name=f"{arena.name}/{item.id}/epoch {epoch}")
    outcome: dict[str, Any] = {}
    started = time.monotonic()

    def target() -> None:
        try:
            run_item()
        finally:  # what the thread started, taken in before it ends (its children then pass to another thread)
            if outcome.get("children") is not None:
                outcome["children"].scan()

    def run_item() -> None:
        with tempfile.TemporaryDirectory(prefix=scratch.prefix(item.id)) as workdir, ExitStack() as held:
            if unready is not None:
                recorder.record("error", text=unready)
                outcome["infrastructure"] = unready
                return
            try:
                try:
                    own = held.enter_context(item_store(store, item.id, restart=bool(item.metadata.get(RESTART))))
                except StoreError as exc:  # the harness's server, not the framework: not the adapter's failure
                    recorder.record("error", text=str(exc))
                    outcome["infrastructure"] = str(exc)
                    return
                # is its server up, the same one, all along (its death is the world's failure, not the framework's)
                health = outcome["store_health"] = held.enter_context(store_health.watching(own))
                # the harness's own eye on that store and the work directory (a store run only)
                store_watch = held.enter_context(own.watching(workdir, marks=(marked(item.input),)))
                adapter = outcome["adapter"] = adapter_factory()
                if adapter.in_process:  # what its thread starts is the item's
                    outcome["children"] = LegChildren()
                    outcome["children"].watch(threading.current_thread())
                # the tools as this adapter's framework can take them (see ArenaSpec.tools_for)
                specs = arena.tools_for(adapter.info)
                ctx = LegContext(item=item, instructions=arena.instructions, model=channel.model,
                                 tools=LocalToolBox(executor, specs), workdir=workdir, stream=stream,
                                 store=own.store, stream_log=LocalStreamLog(recorder) if stream else None,
                                 extra=arena.leg_context(item) if arena.leg_context is not None else {})
                stage = outcome["stage"] = Stage(
                    item=item, ctx=ctx, adapter=adapter, recorder=recorder, watch=watch, backend=backend,
                    locked=executor.locked, make_adapter=adapter_factory, spare_factory=spare_factory,
                    restart_store=health.planned(own.restart) if health is not None else own.restart,
                    store_watch=store_watch)
                director = (arena.director or BaseDirector)(stage)
                import_framework(adapter)  # the framework's first import is the harness's start-up, not its time
                outcome["clock"] = time.monotonic()  # the timeout's clock starts with the first leg (not the start-up)
                outcome["fault"] = asyncio.run(run_and_close(stage, director))
            except StoreError as exc:  # the harness's own server failed it: not the adapter's failure
                recorder.record("error", text=str(exc))
                outcome["infrastructure"] = str(exc)
            except BaseException as exc:  # an adapter's crash is that item's failure, never the run's
                message = describe(exc)
                recorder.record("error", text=message)
                outcome["fault"] = message
                # an adapter in a worker: the traceback the worker formatted, where the adapter raised
                outcome["traceback"] = getattr(exc, "remote_traceback", None) or traceback.format_exc()

    thread = threading.Thread(target=target, name=f"arena-item-{item.id}", daemon=True)
    thread.start()
    overrun = wait_framework_time(thread, timeout_s, outcome, recorder)
    fault, infrastructure = outcome.get("fault"), outcome.get("infrastructure")
    hung = overrun is not None
    if overrun == "start-up":  # the harness could not get the adapter going: nothing of the framework was measured
        message = f"the adapter did not start within {startup_timeout_s():g}s (its import, store or worker start)"
        recorder.record("error", text=message)
        fault, infrastructure = None, message
    elif hung:  # the abandoned thread may still write to `outcome`: what it writes from now on is ignored
        pending = any(e.type == "model_call" and (e.response or {}).get("pending") for e in recorder.events)
        message = f"timed out after {timeout_s:g}s" + (" waiting for the model endpoint" if pending else "")
        recorder.record("error", text=message)
        fault, infrastructure = (None, message) if pending else (message, None)
    died = outcome["store_health"].finish() if outcome.get("store_health") is not None else None
    if died is not None:  # the item's store server died under it: whatever the adapter did, nothing was measured
        recorder.record("error", text=died)
        fault, infrastructure = None, died
    children = outcome.get("children")
    if children is not None:  # an in-process adapter's processes end with its item (a worker's: its tree, below)
        ended = children.end()
        if ended:
            recorder.record("reclaimed", data={"processes": [p.to_json() for p in ended]},
                            text=f"{len(ended)} process(es) the item started were still running at its end "
                                 f"({'timed out' if hung else 'finished'}); the harness ended {children.scope}")
    if backend is not None:  # what the run left in the backend, for the checks (before the seal: not late)
        with executor.locked():
            recorder.record("state", data=backend.dump())
    recorder.seal()  # from here on, anything for this item is late
    if backend is not None:
        with executor.locked():
            backend.close()
    if state_dir is not None:
        shutil.rmtree(state_dir, ignore_errors=True)
    trace = recorder.events
    if hung:  # the item's adapter, and the one a director handed the run over to (Stage.hand_over)
        stage_adapter = outcome["stage"].adapter if outcome.get("stage") is not None else None
        for adapter in {id(a): a for a in (outcome.get("adapter"), stage_adapter) if a is not None}.values():
            adapter.terminate()  # a worker process can be reclaimed; a thread cannot (Adapter.terminate: nothing)
    done = Scored(
        item=item, recorder=recorder, declared=declared_of(outcome.get("adapter") or adapter_factory, arena),
        fault=fault, infrastructure=infrastructure or infrastructure_failure(trace),
        duration_s=round(time.monotonic() - started, 3), channel=channel, epoch=epoch,
        traceback=None if hung else outcome.get("traceback"), stream=stream, store=store,
    )
    return rescore(arena, done, trace), done
