"""How soon activity left running after a pause shows up, and what watching the pause costs.

A framework that returns `suspended` but keeps running shows it within some latency of the
suspension; the harness's dwell (arena.runner.PAUSE_DWELL_S) must be longer than that for the
`suspended` check to see it. This measures that latency on this machine, idle and with every core
busy, for activity left in the item's event loop, in a thread, and in a worker process, and the cost
of the dwell and the end-of-item quiet wait per item (vanilla, with and without them).

Prints figures and ratios measured in one run; no thresholds, no assertions.
Run: uv run python bench/pause_dwell.py [--trials N]
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import os
import statistics
import sys
import threading
import time
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import arenas  # noqa: E402
from adapters.vanilla import VanillaAdapter  # noqa: E402
from arena.runner import PAUSE_DWELL_S, QUIET_S, Watch, run_items  # noqa: E402
from arena.server import HarnessServer  # noqa: E402
from arena.worker.client import WorkerAdapter  # noqa: E402


class _RunsOnInTask(VanillaAdapter):
    """Returns `suspended`, then a task it left in the event loop books at once."""

    async def start(self, ctx):
        result = await super().start(ctx)
        if result.status == "suspended":
            self._task = asyncio.get_running_loop().create_task(ctx.tools.acall("book_room", {"room_id": "R101"}))
        return result


class _RunsOnInThread(VanillaAdapter):
    """Returns `suspended`, then a thread it started books at once."""

    async def start(self, ctx):
        result = await super().start(ctx)
        if result.status == "suspended":
            threading.Thread(target=ctx.tools.call, args=("book_room", {"room_id": "R101"})).start()
        return result


def _spin(stop) -> None:
    while not stop.is_set():
        pass


def _latencies(server, factory, items, trials: int) -> tuple[list[float], int]:
    """(seconds from each `suspended` event to the left-over booking after it, bookings that came before it)."""
    spec = arenas.load("human_in_the_loop")
    chosen = [spec.item(i) for i in items] * trials
    out, before = [], 0
    for result in run_items(factory, spec, chosen, server=server, model="scripted", timeout_s=120):
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
    worker_target = f"{Path(__file__).stem}:_RunsOnInTask"
    os.environ["PYTHONPATH"] = os.pathsep.join([str(Path(__file__).parent), os.environ.get("PYTHONPATH", "")])
    items = ["hitl-02", "hitl-04"]
    worst = 0.0
    with HarnessServer() as server:
        for load in ("idle", "all cores busy"):
            stop = multiprocessing.Event()
            spinners = [multiprocessing.Process(target=_spin, args=(stop,)) for _ in range(os.cpu_count() or 2)] \
                if load != "idle" else []
            for p in spinners:
                p.start()
            try:
                for label, factory, trials in (
                    ("task in the item's loop", _RunsOnInTask, args.trials),
                    ("thread", _RunsOnInThread, args.trials),
                    ("task in a worker process", partial(WorkerAdapter, worker_target, VanillaAdapter.info,
                                                         sys.executable, server), max(1, args.trials // 3)),
                ):
                    values, before = _latencies(server, factory, items, trials)
                    worst = max([worst, *values])
                    print(f"{load:15s} {label:26s} {_describe(values)}"
                          + (f"; {before} ran before the suspension was recorded" if before else ""), flush=True)
            finally:
                stop.set()
                for p in spinners:
                    p.join()
        spec = arenas.load("human_in_the_loop")
        chosen = spec.items
        timings = {}
        for label, watch in (("watched", Watch()), ("unwatched", Watch(dwell_s=0.0, quiet_s=0.0))):
            start = time.perf_counter()
            run_items(VanillaAdapter, spec, chosen, server=server, model="scripted", watch=watch)
            timings[label] = (time.perf_counter() - start) / len(chosen)
    print(f"dwell {PAUSE_DWELL_S * 1000:.0f} ms = {PAUSE_DWELL_S / worst if worst else float('inf'):.1f}x the slowest "
          f"run-on latency seen ({worst * 1000:.1f} ms); quiet wait {QUIET_S * 1000:.0f} ms")
    print(f"vanilla per item: watched {timings['watched'] * 1000:.0f} ms, unwatched {timings['unwatched'] * 1000:.0f} ms "
          f"({timings['watched'] / timings['unwatched']:.1f}x)")


if __name__ == "__main__":
    main()
