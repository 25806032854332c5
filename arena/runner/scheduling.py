"""Scheduling: the items of a run (and their epochs), up to `concurrency` at once, each isolated; what arrives
late is scored again at the end, and the run's last quiet period (`settle`)."""

from __future__ import annotations

import heapq
import threading
import time
from collections import deque
from collections.abc import Callable, Collection
from concurrent.futures import ThreadPoolExecutor, as_completed
from typing import Any

from arena.results import ItemResult
from arena.runner.isolation import DEFAULT_TIMEOUT_S, guard_process_exit, run_isolated
from arena.runner.scoring import Scored, rescore
from arena.runner.watch import QUIET_MAX_S, QUIET_S, Watch, left_to_wait
from arena.spec import ArenaSpec
from arena.adapter import Adapter, as_adapter
from arena.types import EvalItem, StoreKind, TraceEvent


def settle(last_late: Callable[[], float], quiet_s: float = QUIET_S, max_s: float = QUIET_MAX_S) -> None:
    """The run's last quiet period: wait until no late event has arrived for `quiet_s` (at most `max_s`), so that
    what a framework left running after the last items were sealed is in the results the run writes.
    `last_late` gives the time.monotonic() of the latest late event."""
    start = time.monotonic()
    while (left := left_to_wait(last_late(), start, quiet_s, max_s)) > 0:
        time.sleep(left)


class LongestFirst:
    """The order a concurrent run starts its units in: in plan order while an item has not finished once, then the
    items whose last finished run took longest first.

    With epochs, an item's earlier runs foretell its later ones (its model requests, its pauses), and starting
    the long ones first keeps the run from ending on a few of them with every other slot idle (the rule of
    scheduling longest jobs first). An item not yet measured goes before any that was: it may be long, and the
    items that finish first are the short ones. Which units run, and each one's result, do not depend on it.
    """

    def __init__(self, keys: list[str]) -> None:
        self._queues: dict[str, deque[int]] = {}  # each item's units (indexes into keys), in plan order
        for index, key in enumerate(keys):
            self._queues.setdefault(key, deque()).append(index)
        self._took: dict[str, float] = {}
        self._unmeasured = [(queue[0], key) for key, queue in self._queues.items()]  # (next unit, item)
        heapq.heapify(self._unmeasured)
        self._measured: list[tuple[float, int, str]] = []  # (-seconds, next unit, item); stale entries skipped
        self._lock = threading.Lock()

    def pop(self) -> int:
        """The index of the unit to start next (called once per unit)."""
        with self._lock:
            while self._unmeasured:
                _, key = heapq.heappop(self._unmeasured)
                if key not in self._took:
                    return self._advance(key)
            while True:
                negative, head, key = heapq.heappop(self._measured)
                queue = self._queues[key]
                if queue and queue[0] == head and -negative == self._took[key]:
                    return self._advance(key)

    def _advance(self, key: str) -> int:
        """Take the item's next unit; its unit after that waits in the heap of its kind (measured or not)."""
        queue = self._queues[key]
        index = queue.popleft()
        if queue and key in self._took:
            heapq.heappush(self._measured, (-self._took[key], queue[0], key))
        elif queue:
            heapq.heappush(self._unmeasured, (queue[0], key))
        return index

    def took(self, key: str, seconds: float) -> None:
        """An item's unit finished after `seconds`."""
        with self._lock:
            self._took[key] = seconds
            if self._queues[key]:
                heapq.heappush(self._measured, (-seconds, self._queues[key][0], key))


def run_item(adapter_factory: Callable[[], Adapter], arena: ArenaSpec, item: EvalItem, *, server: Any,
             model: Any, timeout_s: float = DEFAULT_TIMEOUT_S, watch: Watch = Watch()) -> ItemResult:
    """One item on its own (see `run_items`)."""
    return run_items(adapter_factory, arena, [item], server=server, model=model, timeout_s=timeout_s, watch=watch)[0]


def _adopted(factory: Callable[[], Adapter]) -> Callable[[], Adapter]:
    """A class as an `Adapter` (arena.adapter.as_adapter: its channels checked against its hooks); any other
    factory as it is."""
    return as_adapter(factory) if isinstance(factory, type) else factory


def run_items(
    adapter_factory: Callable[[], Adapter],
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
    spare_factory: Callable[[], Adapter] | None = None,
    epochs: int = 1,
    seed: int = 0,
    skip: Collection[tuple[str, int]] = (),
    stream: bool = False,
    store: StoreKind = "sqlite",
) -> list[ItemResult]:
    """Run items, up to `concurrency` at once; each item's failure stays that item's.

    `server` is the harness's `HarnessServer`; `model` a `ModelTarget` or a scripted profile name.
    Each item gets its own model endpoint on the server, its own tool executor (and backend) and its
    own adapter instance, so items share no run state and a concurrent run gives the results of a
    serial one. `on_result` is called as items finish (in the order they finish); the returned list
    is in item order. An item that receives late events (after it was sealed, while other items ran)
    is scored again at the end, and the returned list holds that final result. `spare_factory` makes a
    second adapter in a process of its own, for an arena's director that resumes from another process
    (`Stage.spare_factory`; the CLI gives one when an item needs it); None: there is none.

    With `epochs` > 1 every item runs that many times, epoch by epoch (results in that order, each with
    its `epoch`; run at once, the items that took longest in an earlier epoch start first: `LongestFirst`); a
    sampled profile draws its deviations from (`seed`, item, epoch). `skip` holds the
    (item id, epoch) pairs not to run (a resumed run's finished ones). With `stream` every leg is streamed.
    An adapter class of the older protocol (no `Adapter` base) runs under the base class's defaults.
    """
    adapter_factory = _adopted(adapter_factory)
    guard_process_exit()
    done: dict[int, tuple[ItemResult, Scored]] = {}
    units = [(item, epoch) for epoch in range(1, epochs + 1) for item in items if (item.id, epoch) not in skip]

    def one(index: int) -> tuple[int, ItemResult, Scored]:
        item, epoch = units[index]
        result, state = run_isolated(adapter_factory, arena, item, server, model, timeout_s, watch, on_late,
                                spare_factory, epoch, seed, stream, store)
        return index, result, state

    try:
        if concurrency <= 1 or len(units) <= 1:
            finished = (one(i) for i in range(len(units)))
            for index, result, state in finished:
                done[index] = (result, state)
                if on_result is not None:
                    on_result(result)
        else:
            order = LongestFirst([item.id for item, _ in units])

            def next_one() -> tuple[int, ItemResult, Scored]:
                index = order.pop()
                start = time.monotonic()
                try:
                    return one(index)
                finally:
                    order.took(units[index][0].id, time.monotonic() - start)

            with ThreadPoolExecutor(max_workers=min(concurrency, len(units)), thread_name_prefix="arena-items") as pool:
                futures = [pool.submit(next_one) for _ in units]
                try:
                    for future in as_completed(futures):
                        index, result, state = future.result()
                        done[index] = (result, state)
                        if on_result is not None:
                            on_result(result)
                except BaseException:  # the run stops (its run directory cannot be written, a signal): none starts
                    for future in futures:
                        future.cancel()
                    raise
        results = []
        for index in range(len(units)):
            result, state = done[index]
            if state.recorder.late_events():
                result = rescore(arena, state, state.recorder.events)
            results.append(result)
    finally:
        for _, state in done.values():
            server.gateway.forget(state.channel)
    return results
