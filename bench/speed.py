"""Where run time goes, and what fork servers and concurrent items save: ratios measured in one run.

Each figure runs the same items both ways in this one process — the old way (a spawned Python per
worker, items one after another) and the new one (workers forked from a fork server, items at once)
— and prints the two times and their ratio. No thresholds, no assertions; bench/README.md lists the
targets. Run: uv run python bench/speed.py [--only NAME ...] [--matrix]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from functools import partial
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import arenas  # noqa: E402
from adapters import REGISTRY  # noqa: E402
from arena.runner import Watch, run_items  # noqa: E402
from arena.server import HarnessServer  # noqa: E402
from arena.worker import envs, procs  # noqa: E402
from arena.worker.client import WorkerAdapter, start_mode  # noqa: E402

DURABLE_ADAPTERS = ("langgraph", "openai_agents", "pydantic_ai", "microsoft_af", "google_adk", "google_adk_confirm")


def _timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def _worker_factory(server, name: str, restart: bool, fork: bool, compiled: bool = True):
    """(factory, how workers start); the fork server starts here, once, not inside the timed items.

    `compiled=False` points spawned workers at an empty bytecode cache, so that they compile every
    module they import from source: how workers started before installs were byte-compiled, on a
    machine with PYTHONDONTWRITEBYTECODE set (this one)."""
    entry = REGISTRY[name]
    python = str(envs.ensure_env(entry.env_name)) if entry.isolated else sys.executable
    mode = start_mode(python, entry.target) if fork else "spawn"
    extra = {} if compiled else {"PYTHONPYCACHEPREFIX": tempfile.mkdtemp(prefix="arena-bench-nocache-"),
                                 "PYTHONDONTWRITEBYTECODE": "1"}
    return partial(WorkerAdapter, entry.target, entry.load().info, python, server, restart, extra,
                   fork=mode == "fork"), mode


def marginal(server, arena: str, name: str, fork: bool, concurrency: int = 1, compiled: bool = True) -> float:
    """Seconds one more item costs: (three items - one item) / 2."""
    spec = arenas.load(arena)
    restart = spec.restart_between_legs
    factory, _ = _worker_factory(server, name, restart, fork, compiled)
    one = _timed(lambda: run_items(factory, spec, spec.items[:1], server=server, model=spec.profiles[0], timeout_s=300,
                                   concurrency=concurrency))
    three = _timed(lambda: run_items(factory, spec, spec.items[1:4], server=server, model=spec.profiles[0],
                                     timeout_s=300, concurrency=concurrency))
    return max(0.0, (three - one) / 2)


def bench_workers(server) -> None:
    print("\n## A new process per leg or per item: spawned (compiling every import, as before; byte-compiled) vs forked")
    print("## per-item marginal cost, items one at a time; ratios: forked / spawned-compiling, forked / spawned")
    rows = [("durable_state", n) for n in DURABLE_ADAPTERS] + [("human_in_the_loop", "crewai")]
    for arena, name in rows:
        if not REGISTRY[name].available:
            print(f"{arena:18s} {name:20s} not installed")
            continue
        uncompiled = marginal(server, arena, name, fork=False, compiled=False)
        spawned = marginal(server, arena, name, fork=False)
        forked = marginal(server, arena, name, fork=True)
        mode = _worker_factory(server, name, False, True)[1]
        print(f"{arena:18s} {name:20s} spawn, compiling {uncompiled:6.2f}s  spawn {spawned:6.2f}s  fork {forked:5.2f}s"
              f"  = {forked / uncompiled:5.2f}x / {forked / spawned:5.2f}x ({mode})", flush=True)


def bench_hitl_all(server) -> None:
    print("\n## human_in_the_loop on every installed adapter (wall time)")
    spec = arenas.load("human_in_the_loop")
    names = [n for n, e in REGISTRY.items() if e.available]

    def run(concurrent: bool) -> None:
        for name in names:
            entry = REGISTRY[name]
            factory = (_worker_factory(server, name, False, fork=concurrent, compiled=concurrent)[0] if entry.isolated
                       else entry.load())
            n = (min(8, 2 * (os.cpu_count() or 1)) if entry.concurrent or entry.isolated else 1) if concurrent else 1
            run_items(factory, spec, spec.items, server=server, model="scripted", timeout_s=300, concurrency=n)

    before, after = _timed(lambda: run(False)), _timed(lambda: run(True))
    print(f"serial, spawned workers compiling every import {before:6.1f}s   concurrent items, forked workers "
          f"{after:6.1f}s  = {after / before:5.2f}x", flush=True)


def bench_overhead(server) -> None:
    print("\n## The harness's own cost per item (vanilla, scripted model)")
    spec = arenas.load("human_in_the_loop")
    vanilla = REGISTRY["vanilla"].load()
    items = spec.items * 4

    def per_item(watch: Watch, concurrency: int) -> float:
        return _timed(lambda: run_items(vanilla, spec, items, server=server, model="scripted", watch=watch,
                                        concurrency=concurrency)) / len(items)

    bare = per_item(Watch(dwell_s=0.0, quiet_s=0.0), 1)
    watched = per_item(Watch(), 1)
    together = per_item(Watch(), 8)
    print(f"unwatched, one at a time {bare * 1000:6.1f} ms/item; watched (pause dwell + quiet wait) {watched * 1000:6.1f} "
          f"ms/item; watched, 8 at a time {together * 1000:6.1f} ms/item (= {together / watched:4.2f}x)", flush=True)


def bench_latency(server) -> None:
    print("\n## 96 items against a model that takes 200 ms per request, 16 at a time")
    spec = arenas.load("human_in_the_loop")
    items = [i.model_copy(update={"id": f"{i.id}-{n}"}) for n in range(8) for i in spec.items]
    vanilla = REGISTRY["vanilla"].load()
    server.gateway.delay_s = 0.2
    try:
        results: list = []
        wall = _timed(lambda: results.extend(run_items(vanilla, spec, items, server=server, model="scripted",
                                                       concurrency=16)))
    finally:
        server.gateway.delay_s = 0.0
    requests = sum(e.type == "model_call" for r in results for e in r.trace)
    watch = Watch()
    ideal = requests * 0.2 / 16
    ideal_watched = (requests * 0.2 + len(items) * (watch.dwell_s + watch.quiet_s)) / 16
    print(f"{len(items)} items, {requests} requests: {wall:5.2f}s; ideal (model latency / 16) {ideal:5.2f}s = "
          f"{wall / ideal:4.2f}x; counting the watched pause and quiet wait as latency too {ideal_watched:5.2f}s = "
          f"{wall / ideal_watched:4.2f}x", flush=True)


def _tree_pss_mb(root: int) -> float:
    """Proportional set size of a process and all its descendants now, in MB (from /proc).

    PSS, not RSS: forked workers share their fork server's pages, and RSS would count them once per worker."""
    tree = {root} | procs.descendants(root)
    total_kb = 0
    for pid in tree:
        try:
            with open(f"/proc/{pid}/smaps_rollup") as f:
                total_kb += sum(int(line.split()[1]) for line in f if line.startswith("Pss:"))
        except OSError:
            continue
    return total_kb / 1024


def bench_matrix() -> None:
    print("\n## The full matrix (every arena x adapter x profile), in a subprocess")
    out = Path(tempfile.mkdtemp(prefix="arena-bench-matrix-"))
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "arena", "matrix", "--out", str(out)], cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    peak = 0.0
    while proc.poll() is None:
        peak = max(peak, _tree_pss_mb(proc.pid))
        time.sleep(0.5)
    wall = time.perf_counter() - start
    largest = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(f"wall {wall / 60:5.1f} min (exit {proc.returncode}); peak memory of the whole process tree "
          f"{peak:6.0f} MB (PSS, sampled every 0.5 s), of its largest process {largest:6.0f} MB", flush=True)
    shutil.rmtree(out, ignore_errors=True)


BENCHES = {"workers": bench_workers, "hitl": bench_hitl_all, "overhead": bench_overhead, "latency": bench_latency}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", action="append", choices=list(BENCHES), help="run only these figures")
    parser.add_argument("--matrix", action="store_true", help="also time a full `arena matrix` (minutes)")
    args = parser.parse_args()
    print(f"{os.cpu_count()} cores")
    with HarnessServer() as server:
        for name in args.only or BENCHES:
            BENCHES[name](server)
    if args.matrix:
        bench_matrix()


if __name__ == "__main__":
    main()
