"""What the benches share, on the public API only: an evaluation into a throw-away directory, and a
reporter that times each run from its start to its last item's result."""

from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import arena

if TYPE_CHECKING:
    from arena.for_arenas import ItemResult


class Clock:
    """An `arena.Reporter` that notes when each run starts and when its last item result arrives.

    `span()` is the time its items took: it leaves out starting the harness's server before the run and
    the run's last quiet period and writing its summary after (fixed costs, not the items')."""

    def __init__(self) -> None:
        self.began: dict[str, float] = {}
        self.last: dict[str, float] = {}

    def say(self, message: str, level: str = "info") -> None:
        pass

    def started(self, key: str, label: str, total: int) -> None:
        self.began[key] = time.perf_counter()

    def result(self, key: str, result: ItemResult) -> None:
        self.last[key] = time.perf_counter()

    def finished(self, key: str, outcome: str) -> None:
        pass

    def span(self) -> float:
        """Seconds from the first run's start to the last item result of any run."""
        return max(self.last.values()) - min(self.began.values())


def evaluate(arena_name: str, adapters: list[Any], **kwargs: Any) -> arena.Evaluation:
    """`arena.evaluate()` into a temporary directory (removed after); an adapter left out is an error here."""
    out = Path(tempfile.mkdtemp(prefix="arena-bench-"))
    try:
        runs = arena.evaluate(arena_name, adapters, out=out / "runs", **kwargs)
    finally:
        shutil.rmtree(out, ignore_errors=True)
    if runs.failed or runs.declined:
        raise SystemExit(f"bench: {arena_name}: not run: {runs.failed or runs.declined}")
    return runs


def timed_items(arena_name: str, adapters: list[Any], **kwargs: Any) -> tuple[float, arena.Evaluation]:
    """(seconds the items took, the runs): `evaluate` timed by a `Clock`."""
    clock = Clock()
    runs = evaluate(arena_name, adapters, reporter=clock, **kwargs)
    return clock.span(), runs


def all_results(runs: arena.Evaluation) -> list[ItemResult]:
    """Every item result of every run, every epoch."""
    return [r for run in runs for r in (*run.results, *run.later)]
