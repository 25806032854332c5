"""How soon activity left running after a pause shows up, and what watching the pause costs.

A framework that returns `suspended` but keeps running shows it within some latency of the
suspension; the harness's dwell (meta.json `pause_dwell_s`) must be longer than that for the
`suspended` check to see it. This measures that latency on this machine, idle and with every core
busy, for activity left in the item's event loop, in a thread, and in a worker process, and the cost
of the dwell and the end-of-item quiet wait per item (vanilla, with and without them).

The adapters are vanilla's, given to `arena.evaluate()` as classes; the worker-process case and the
unwatched run need internal knobs (bench/_internals.py).
Prints figures and ratios measured in one run; no thresholds, no assertions.
Run: uv run python bench/pause_dwell.py [--trials N]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import multiprocessing
import os
import statistics
import sys
import threading
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import all_results, timed_items  # noqa: E402
from _internals import items_in_worker_processes, unwatched  # noqa: E402

from arena import catalog  # noqa: E402

Vanilla = catalog.adapters()["vanilla"].load()
ARENA = "human_in_the_loop"
ITEMS = ["hitl-02", "hitl-04"]


class _RunsOnInTask(Vanilla):  # type: ignore[misc, valid-type]
    """Returns `suspended`, then a task it left in the event loop books at once."""

    async def start(self, ctx):
        result = await super().start(ctx)
        if result.status == "suspended":
            self._task = asyncio.get_running_loop().create_task(ctx.tools.acall("book_room", {"room_id": "R101"}))
        return result


class _RunsOnInThread(Vanilla):  # type: ignore[misc, valid-type]
    """Returns `suspended`, then a thread it started books at once."""

    async def start(self, ctx):
        result = await super().start(ctx)
        if result.status == "suspended":
            threading.Thread(target=ctx.tools.call, args=("book_room", {"room_id": "R101"})).start()
        return result


def _spin(stop) -> None:
    while not stop.is_set():
        pass


def _in_process(cls: type, trials: int) -> list:
    """The items, `trials` times each, one at a time, on adapter class `cls` (in this process)."""
    _, runs = timed_items(ARENA, [cls], model="scripted", items=ITEMS, epochs=trials, concurrency=1, timeout=120)
    return all_results(runs)


def _in_worker(trials: int) -> list:
    """The same on _RunsOnInTask in a worker process per item (imported there as pause_dwell:_RunsOnInTask)."""
    return items_in_worker_processes(f"{Path(__file__).stem}:_RunsOnInTask", Vanilla.info, ARENA, ITEMS, trials)


def _latencies(results: list) -> tuple[list[float], int]:
    """(seconds from each `suspended` event to the left-over booking after it, bookings that came before it)."""
    out, before = [], 0
    for result in results:
        pause = next((e for e in result.trace if e.type == "suspended"), None)
        booking = next((e for e in result.trace if e.type == "tool_call" and e.tool == "book_room"), None)
        if pause is None or booking is None:
            continue
        if booking.seq < pause.seq:
            before += 1  # it ran before the leg even returned: `suspended` fails on it anyway
        else:
            out.append(booking.ts - pause.ts)
    return out, before


def _describe(values: list[float]) -> str:
    if not values:
        return "no activity seen"
    ordered = sorted(values)
    p99 = ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))]
    return f"n={len(values)} median {statistics.median(values) * 1000:.1f} ms, p99 {p99 * 1000:.1f} ms, max {max(values) * 1000:.1f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=10)
    args = parser.parse_args()
    # a worker imports this module for pause_dwell:_RunsOnInTask
    os.environ["PYTHONPATH"] = os.pathsep.join([str(Path(__file__).parent), os.environ.get("PYTHONPATH", "")])
    worst = 0.0
    for load in ("idle", "all cores busy"):
        stop = multiprocessing.Event()
        spinners = [multiprocessing.Process(target=_spin, args=(stop,)) for _ in range(os.cpu_count() or 2)] \
            if load != "idle" else []
        for p in spinners:
            p.start()
        try:
            for label, run in (
                ("task in the item's loop", lambda: _in_process(_RunsOnInTask, args.trials)),
                ("thread", lambda: _in_process(_RunsOnInThread, args.trials)),
                ("task in a worker process", lambda: _in_worker(max(1, args.trials // 3))),
            ):
                values, before = _latencies(run())
                worst = max([worst, *values])
                print(f"{load:15s} {label:26s} {_describe(values)}"
                      + (f"; {before} ran before the suspension was recorded" if before else ""), flush=True)
        finally:
            stop.set()
            for p in spinners:
                p.join()
    timings, meta = {}, {}
    for label in ("watched", "unwatched"):
        with unwatched() if label == "unwatched" else contextlib.nullcontext():
            seconds, runs = timed_items(ARENA, ["vanilla"], model="scripted", concurrency=1)
        timings[label] = seconds / len(all_results(runs))
        meta = meta or runs[0].meta
    dwell, quiet = meta["pause_dwell_s"], meta["quiet_s"]
    print(f"dwell {dwell * 1000:.0f} ms = {dwell / worst if worst else float('inf'):.1f}x the slowest "
          f"run-on latency seen ({worst * 1000:.1f} ms); quiet wait {quiet * 1000:.0f} ms")
    print(f"vanilla per item: watched {timings['watched'] * 1000:.0f} ms, unwatched {timings['unwatched'] * 1000:.0f} ms "
          f"({timings['watched'] / timings['unwatched']:.1f}x)")


if __name__ == "__main__":
    main()
