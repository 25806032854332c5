"""Where run time goes, and what fork servers and concurrent items save: ratios measured in one run.

Each figure runs the same items both ways in this one process — the old way (a spawned Python per
worker, items one after another) and the new one (workers forked from a fork server, items at once)
— and prints the two times and their ratio. No thresholds, no assertions; bench/README.md lists the
targets. Every run goes through the public API (`arena.evaluate()`, the `arena` command); the few
internal knobs a figure needs are in bench/_internals.py.
Run: uv run python bench/speed.py [--only NAME ...] [--matrix] [--keep DIR]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from _common import all_results, evaluate, timed_items  # noqa: E402
from _internals import forced, process_tree, slow_model, spawned_workers, unwatched  # noqa: E402

from arena import catalog  # noqa: E402

DURABLE_ADAPTERS = ("langgraph", "openai_agents", "pydantic_ai", "microsoft_af", "google_adk", "google_adk_confirm")


def _timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def marginal(arena: str, name: str, how: str) -> tuple[float, str]:
    """(seconds one more item costs: (three items - one item) / 2, items one at a time; how its workers started).

    `how`: "fork" (as evaluate() starts workers), "spawn" or "spawn, compiling" (see `spawned_workers`)."""
    ids = [i.id for i in catalog.load_arena(arena).items]
    knob = contextlib.nullcontext() if how == "fork" else spawned_workers(compiling=how == "spawn, compiling")
    with knob:
        if how == "fork":  # its fork server starts on the adapter's first run, once for all later ones: not timed
            evaluate(arena, [name], items=ids[:1], concurrency=1, timeout=300)
        one, runs = timed_items(arena, [name], items=ids[:1], concurrency=1, timeout=300)
        three, more = timed_items(arena, [name], items=ids[1:4], concurrency=1, timeout=300)
    if how != "fork":
        forced([*runs, *more])
    return max(0.0, (three - one) / 2), more[0].meta["worker_start"]


def bench_workers() -> None:
    print("\n## A new process per leg or per item: spawned (compiling every import, as before; byte-compiled) vs forked")
    print("## per-item marginal cost, items one at a time; ratios: forked / spawned-compiling, forked / spawned")
    rows = [("durable_state", n) for n in DURABLE_ADAPTERS] + [("human_in_the_loop", "crewai")]
    registry = catalog.adapters()
    for arena, name in rows:
        if name not in registry or not registry[name].available:
            print(f"{arena:18s} {name:20s} not installed")
            continue
        registry[name].load()  # the harness imports the adapter once, before any timed run
        uncompiled, _ = marginal(arena, name, "spawn, compiling")
        spawned, _ = marginal(arena, name, "spawn")
        forked, mode = marginal(arena, name, "fork")
        print(f"{arena:18s} {name:20s} spawn, compiling {uncompiled:6.2f}s  spawn {spawned:6.2f}s  fork {forked:5.2f}s"
              f"  = {forked / uncompiled:5.2f}x / {forked / spawned:5.2f}x ({mode})", flush=True)


def bench_hitl_all() -> None:
    print("\n## human_in_the_loop on every installed adapter (wall time)")
    names = [n for n, e in catalog.adapters().items() if e.available]

    def before() -> None:  # items one at a time, crewai's workers spawned and compiling every import
        with spawned_workers(compiling=True):
            forced(evaluate("human_in_the_loop", names, model="scripted", concurrency=1, timeout=300))

    def after() -> None:  # as `arena run` does it: the default concurrency, workers forked
        evaluate("human_in_the_loop", names, model="scripted", timeout=300)

    before_s, after_s = _timed(before), _timed(after)
    print(f"serial, spawned workers compiling every import {before_s:6.1f}s   concurrent items, forked workers "
          f"{after_s:6.1f}s  = {after_s / before_s:5.2f}x", flush=True)


def bench_overhead() -> None:
    print("\n## The harness's own cost per item (vanilla, scripted model)")
    epochs = 4  # 48 items: human_in_the_loop's 12, four times

    def per_item(watched: bool, concurrency: int) -> float:
        with contextlib.nullcontext() if watched else unwatched():
            seconds, runs = timed_items("human_in_the_loop", ["vanilla"], model="scripted", epochs=epochs,
                                        concurrency=concurrency)
        return seconds / len(all_results(runs))

    bare = per_item(False, 1)
    watched = per_item(True, 1)
    together = per_item(True, 8)
    print(f"unwatched, one at a time {bare * 1000:6.1f} ms/item; watched (pause dwell + quiet wait) {watched * 1000:6.1f} "
          f"ms/item; watched, 8 at a time {together * 1000:6.1f} ms/item (= {together / watched:4.2f}x)", flush=True)


def bench_latency() -> None:
    print("\n## 96 items against a model that takes 200 ms per request, 16 at a time")
    delay_s, concurrency = 0.2, 16
    with slow_model(delay_s):  # 96 items: human_in_the_loop's 12, eight times
        wall, runs = timed_items("human_in_the_loop", ["vanilla"], model="scripted", epochs=8, concurrency=concurrency)
    results = all_results(runs)
    requests = sum(e.type == "model_call" for r in results for e in r.trace)
    meta = runs[0].meta
    ideal = requests * delay_s / concurrency
    ideal_watched = (requests * delay_s + len(results) * (meta["pause_dwell_s"] + meta["quiet_s"])) / concurrency
    print(f"{len(results)} items, {requests} requests: {wall:5.2f}s; ideal (model latency / 16) {ideal:5.2f}s = "
          f"{wall / ideal:4.2f}x; counting the watched pause and quiet wait as latency too {ideal_watched:5.2f}s = "
          f"{wall / ideal_watched:4.2f}x", flush=True)


class PeakPss:
    """Samples the PSS of this process's whole tree every 0.2 s in a thread, while in the `with` block."""

    def __init__(self) -> None:
        import threading

        self.peak = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while not self._stop.wait(0.2):
            self.peak = max(self.peak, _tree_pss_mb(os.getpid()))

    def __enter__(self) -> PeakPss:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def bench_concurrency() -> None:
    print("\n## 64 items in flight against a model that takes 1 s per request")
    delay_s, concurrency = 1.0, 64
    cases = (("in-process items", "human_in_the_loop", "vanilla", 16),  # 192 items: the 12, sixteen times
             ("forked workers (a process per leg)", "durable_state", "vanilla_durable", 16))
    for label, arena_name, adapter, epochs in cases:
        # untimed, as main()'s first item is for the in-process case: what the first run pays once (for forked workers,
        # starting the adapter's fork server, which imports its framework) is not a cost of having items in flight
        evaluate(arena_name, [adapter], model="scripted", items=[catalog.load_arena(arena_name).items[0].id])
        with slow_model(delay_s), PeakPss() as memory:
            wall, runs = timed_items(arena_name, [adapter], model="scripted", epochs=epochs, concurrency=concurrency)
        results = all_results(runs)
        requests = sum(e.type == "model_call" for r in results for e in r.trace)
        meta = runs[0].meta
        watch = len(results) * (meta["pause_dwell_s"] + meta["quiet_s"])
        ideal = (requests * delay_s + watch) / concurrency
        print(f"{label}: {adapter} on {arena_name}, {len(results)} items ({meta['worker_start']}), {requests} requests, "
              f"concurrency {meta['concurrency']}: {wall:5.1f}s; ideal (model latency + watch) / {concurrency} "
              f"{ideal:5.1f}s = {wall / ideal:4.2f}x; peak PSS of the process tree {memory.peak:6.0f} MB", flush=True)


def _tree_pss_mb(root: int) -> float:
    """Proportional set size of a process and all its descendants now, in MB (from /proc).

    PSS, not RSS: forked workers share their fork server's pages, and RSS would count them once per worker."""
    tree = {root} | process_tree(root)
    total_kb = 0
    for pid in tree:
        try:
            with open(f"/proc/{pid}/smaps_rollup") as f:
                total_kb += sum(int(line.split()[1]) for line in f if line.startswith("Pss:"))
        except OSError:
            continue
    return total_kb / 1024


def bench_matrix(keep: Path | None = None) -> None:
    """With `keep`, the run directories stay there (to compare with the committed ones: no result may change)."""
    from arena.report.findings import DEFAULT_COMMAND

    print(f"\n## The full matrix, as findings.md regenerates it ({DEFAULT_COMMAND}), in a subprocess")
    out = keep or Path(tempfile.mkdtemp(prefix="arena-bench-matrix-"))
    start = time.perf_counter()
    args = [a for a in DEFAULT_COMMAND.split()[2:] if a not in ("--findings", "findings.md", "--out", "reports", "--archive", "evidence")]
    proc = subprocess.Popen([sys.executable, "-m", "arena", "matrix", *args, "--out", str(out)], cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    peak = 0.0
    while proc.poll() is None:
        peak = max(peak, _tree_pss_mb(proc.pid))
        time.sleep(0.5)
    wall = time.perf_counter() - start
    largest = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(f"wall {wall / 60:5.1f} min (exit {proc.returncode}); peak memory of the whole process tree "
          f"{peak:6.0f} MB (PSS, sampled every 0.5 s), of its largest process {largest:6.0f} MB", flush=True)
    if keep is None:
        shutil.rmtree(out, ignore_errors=True)


BENCHES = {"workers": bench_workers, "hitl": bench_hitl_all, "overhead": bench_overhead, "latency": bench_latency,
           "concurrency": bench_concurrency}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", action="append", choices=[*BENCHES, "matrix"],
                        help="run only these figures (matrix: only the full matrix)")
    parser.add_argument("--matrix", action="store_true", help="also time a full `arena matrix` (minutes)")
    parser.add_argument("--keep", type=Path, metavar="DIR", help="keep the full matrix's run directories in DIR")
    args = parser.parse_args()
    print(f"{os.cpu_count()} cores")
    # the harness imports what a run needs on its first run: one untimed item first
    evaluate("human_in_the_loop", ["vanilla"], model="scripted", items=["hitl-01"])
    for name in args.only or BENCHES:
        if name in BENCHES:
            BENCHES[name]()
    if args.matrix or "matrix" in (args.only or []):
        bench_matrix(args.keep)


if __name__ == "__main__":
    main()
