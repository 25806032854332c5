"""What the benchmarks need that the public API does not offer: one function per internal knob.

Everything else in bench/ goes through the public API (`arena.evaluate()`, `arena.catalog`, the
`arena` command). Each function below reaches one internal, says which and why in its first
comment line, and checks that the knob took effect, so a refactor of the internals fails the
bench loudly instead of quietly measuring the default. Together they are the list of what
`arena.evaluate()` lacks for benchmarking (bench/README.md, "Internals the benches still use").
"""

from __future__ import annotations

import contextlib
import shutil
import sys
import tempfile
from collections.abc import Iterator, Sequence
from functools import partial
from typing import Any

FORCED_SPAWN = "spawn (bench: forced)"  # what meta.json `worker_start` says under `spawned_workers()`


@contextlib.contextmanager
def spawned_workers(compiling: bool = False) -> Iterator[None]:
    """Workers spawned, never forked; with `compiling`, each spawned Python compiles every module it imports.

    `compiling` points the workers at an empty bytecode cache they may not write to: how workers
    started before installs were byte-compiled, on a machine with PYTHONDONTWRITEBYTECODE set.
    Runs made under it record `worker_start` = FORCED_SPAWN in their meta (check it with `forced`)."""
    # Internal: arena.worker.client.start_mode / worker_env, as evaluate() forks workers wherever it safely can
    # and gives them no environment of the caller's: there is no knob for spawn vs fork or a worker's environment.
    from arena.worker import client

    start_mode, worker_env = client.start_mode, client.worker_env
    nocache = tempfile.mkdtemp(prefix="arena-bench-nocache-") if compiling else None

    def no_cache_env(extra_env: dict[str, str] | None = None) -> dict[str, str]:
        env = worker_env(extra_env)
        if nocache is not None:
            env.update(PYTHONPYCACHEPREFIX=nocache, PYTHONDONTWRITEBYTECODE="1")
        return env

    client.start_mode = lambda python, target, extra_env=None: FORCED_SPAWN
    client.worker_env = no_cache_env
    try:
        yield
    finally:
        client.start_mode, client.worker_env = start_mode, worker_env
        if nocache is not None:
            shutil.rmtree(nocache, ignore_errors=True)


def forced(runs: Sequence[Any]) -> None:
    """Fail unless every run's workers were spawned by `spawned_workers()` (the internal moved: fix the knob)."""
    wrong = [f"{r.meta['target']}: {r.meta['worker_start']}" for r in runs
             if r.meta["worker_start"] not in (FORCED_SPAWN, "in-process")]
    if wrong:
        raise SystemExit(f"bench: spawned_workers() no longer reaches the workers ({'; '.join(wrong)})")


@contextlib.contextmanager
def unwatched() -> Iterator[None]:
    """Runs with no dwell after each pause and no quiet wait after each item (Watch(0, 0))."""
    # Internal: arena.runner.run_items(watch=...), as evaluate() always watches pauses and item ends, with no knob to turn it off.
    import arena.runner as runner

    run_items, calls = runner.run_items, []

    def run_items_unwatched(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return run_items(*args, **{**kwargs, "watch": runner.Watch(dwell_s=0.0, quiet_s=0.0)})

    runner.run_items = run_items_unwatched
    try:
        yield
    finally:
        runner.run_items = run_items
    if not calls:
        raise SystemExit("bench: unwatched() no longer reaches the runner (evaluate() did not call arena.runner.run_items)")


@contextlib.contextmanager
def slow_model(delay_s: float) -> Iterator[None]:
    """The scripted model answers every request `delay_s` late (a real model's latency, without one)."""
    # Internal: Gateway.delay_s of the HarnessServer evaluate() builds, as evaluate() has no knob for the model's latency.
    from arena import server

    harness, made = server.HarnessServer, []

    class SlowModelServer(harness):  # type: ignore[misc, valid-type]
        def __init__(self) -> None:
            super().__init__()
            self.gateway.delay_s = delay_s
            made.append(self)

    server.HarnessServer = SlowModelServer  # type: ignore[misc]
    try:
        yield
    finally:
        server.HarnessServer = harness  # type: ignore[misc]
    if not made:
        raise SystemExit("bench: slow_model() no longer reaches the server (evaluate() did not build arena.server.HarnessServer)")


def items_in_worker_processes(target: str, info: Any, arena_name: str, item_ids: Sequence[str], epochs: int,
                              timeout_s: float = 120.0) -> list[Any]:
    """Item results of adapter `target` (module:Class) run in a worker process of its own per item, one at a time."""
    # Internal: HarnessServer + WorkerAdapter + run_items, as evaluate() runs a class in a worker only when its arena restarts every leg.
    from arena import catalog
    from arena.runner import run_items
    from arena.server import HarnessServer
    from arena.worker.client import WorkerAdapter

    spec = catalog.load_arena(arena_name)
    chosen = [spec.item(i) for i in item_ids] * epochs
    with HarnessServer() as server:
        return run_items(partial(WorkerAdapter, target, info, sys.executable, server), spec, chosen, server=server,
                         model="scripted", timeout_s=timeout_s)


def process_tree(root: int) -> set[int]:
    """Every process below `root`, now: the harness's own reading of the process tree (arena.worker.procs),
    which the public API has no call for; the matrix bench sums their memory."""
    from arena.worker import procs

    return procs.descendants(root)
