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

from arena import scratch
from arena.model.script import Draw, bind
from arena.results import ItemResult
from arena.runner.director import BaseDirector, Stage
from arena.runner.legs import describe, run_and_close
from arena.runner.scoring import Scored, declared_of, infrastructure_failure, rescore
from arena.runner.watch import Watch
from arena.spec import ArenaSpec
from arena.stores import RESTART, StoreError, item_store
from arena.streaming import LocalStreamLog
from arena.tools.box import LocalToolBox, ToolExecutor
from arena.trace import TraceRecorder
from arena.types import EvalItem, LegContext, ResumableRunner, StoreKind, TraceEvent

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


def run_isolated(adapter_factory: Callable[[], ResumableRunner], arena: ArenaSpec, item: EvalItem, server: Any,
            model: Any, timeout_s: float, watch: Watch,
            on_late: Callable[[str, TraceEvent], None] | None,
            spare_factory: Callable[[], ResumableRunner] | None = None, epoch: int = 1,
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
    channel = server.open_item(recorder, model, bind(arena.all_policies, Draw(item.id, epoch, seed)))
    outcome: dict[str, Any] = {}
    started = time.monotonic()

    def target() -> None:
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
                adapter = outcome["adapter"] = adapter_factory()
                # the tools as this adapter's framework can take them (see ArenaSpec.tools_for)
                specs = arena.tools_for(adapter.info) if hasattr(adapter, "info") else list(arena.tools)
                ctx = LegContext(item=item, instructions=arena.instructions, model=channel.model,
                                 tools=LocalToolBox(executor, specs), workdir=workdir, stream=stream,
                                 agents=arena.agents(item) if arena.agents is not None else [],
                                 store=own.store, stream_log=LocalStreamLog(recorder) if stream else None)
                stage = outcome["stage"] = Stage(
                    item=item, ctx=ctx, adapter=adapter, recorder=recorder, watch=watch, backend=backend,
                    locked=executor.locked, make_adapter=adapter_factory, spare_factory=spare_factory,
                    restart_store=own.restart)
                director = (arena.director or BaseDirector)(stage)
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
    if state_dir is not None:
        shutil.rmtree(state_dir, ignore_errors=True)
    trace = recorder.events
    if hung:  # the item's adapter, and the one a director handed the run over to (Stage.hand_over)
        for adapter in {id(a): a for a in (outcome.get("adapter"), getattr(outcome.get("stage"), "adapter", None))
                        if a is not None}.values():
            terminate = getattr(adapter, "terminate", None)
            if terminate is not None:  # a worker process can be reclaimed; a thread cannot
                terminate()
    done = Scored(
        item=item, recorder=recorder, declared=declared_of(outcome.get("adapter") or adapter_factory, arena),
        fault=fault, infrastructure=infrastructure or infrastructure_failure(trace),
        duration_s=round(time.monotonic() - started, 3), channel=channel, epoch=epoch,
        traceback=None if hung else outcome.get("traceback"), stream=stream,
    )
    return rescore(arena, done, trace), done
