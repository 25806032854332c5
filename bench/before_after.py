"""The same figures for two commits of arena, alternated in one run: per-item cost, and a matrix's time.

A refactoring that must not make a run slower (the channel redesign, issue 52) is timed against the commit before
it, on this machine, in the same hour: the commit is checked out into a scratch worktree and each figure is
measured in a subprocess whose `arena` is that tree's (PYTHONPATH first), alternating before / after.

    uv run python bench/before_after.py --before d85e81cb [--rounds 2] [--matrix-adapters vanilla,langgraph]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# per-item cost: human_in_the_loop's 12 items four times on vanilla with the scripted model, one at a time
PER_ITEM = """
import json, shutil, sys, tempfile, time
from pathlib import Path
import arena

class Clock:
    def __init__(self): self.began, self.last = {}, {}
    def say(self, message, level="info"): pass
    def started(self, key, label, total): self.began[key] = time.perf_counter()
    def result(self, key, result): self.last[key] = time.perf_counter()
    def finished(self, key, outcome): pass

out = Path(tempfile.mkdtemp(prefix="arena-bench-"))
arena.evaluate("human_in_the_loop", ["vanilla"], model="scripted", items=["hitl-01"], out=out / "warm")
watched = sys.argv[1] == "watched"
if not watched:  # the harness's own cost: no dwell after a pause, no quiet wait after an item (bench/_internals.py)
    import arena.runner as runner
    plain = runner.run_items
    runner.run_items = lambda *a, **k: plain(*a, **{**k, "watch": runner.Watch(dwell_s=0.0, quiet_s=0.0)})
clock = Clock()
runs = arena.evaluate("human_in_the_loop", ["vanilla"], model="scripted", epochs=4, concurrency=1,
                      out=out / "runs", reporter=clock)
items = sum(len(r.results) for r in runs)
shutil.rmtree(out, ignore_errors=True)
print(json.dumps({"per_item_s": (max(clock.last.values()) - min(clock.began.values())) / items, "items": items,
                  "arena": arena.__file__}))
"""


def _tree(rev: str) -> Path:
    """The commit checked out (detached) into a scratch worktree."""
    where = Path(tempfile.mkdtemp(prefix=f"arena-before-{rev[:8]}-"))
    where.rmdir()
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "-q", str(where), rev], check=True)
    return where


def _env(tree: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(tree)}


def per_item(tree: Path, how: str) -> float:
    """Seconds per item of vanilla on human_in_the_loop, one at a time, `watched` (as `arena run` does it: the pause
    dwell and the quiet wait included) or `unwatched` (the harness's own cost)."""
    done = subprocess.run([sys.executable, "-c", PER_ITEM, how], cwd=tree, env=_env(tree), capture_output=True, text=True,
                          check=True)
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    assert figures["arena"].startswith(str(tree)), f"measured {figures['arena']}, not the tree {tree}"
    return float(figures["per_item_s"])


def matrix(tree: Path, adapters: list[str]) -> tuple[float, int]:
    """Seconds a matrix of these adapters over every arena takes (`--stream --store postgres --store redis --jobs 3`),
    and how many runs it made."""
    out = Path(tempfile.mkdtemp(prefix="arena-bench-matrix-"))
    args = [a for name in adapters for a in ("-a", name)]
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "arena", "matrix", *args, "--stream", "--store", "postgres",
                           "--store", "redis", "--jobs", "3", "--out", str(out)], cwd=tree, env=_env(tree),
                          check=False, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - start
    runs = sum(1 for p in out.rglob("meta.json"))
    shutil.rmtree(out, ignore_errors=True)
    if not runs:
        raise SystemExit(f"bench: the matrix in {tree} made no run (exit {done.returncode}): {done.stderr[-500:]}")
    return wall, runs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", required=True, help="the commit to compare this checkout with")
    parser.add_argument("--rounds", type=int, default=2, help="alternations of each figure (default 2)")
    parser.add_argument("--matrix-adapters", default="vanilla,vanilla_durable,langgraph,pydantic_ai",
                        help="the adapters of the timed matrix, comma-separated ('' to skip it)")
    args = parser.parse_args()
    before = _tree(args.before)
    trees = {"before": before, "after": ROOT}
    try:
        print(f"{os.cpu_count()} cores; before = {args.before} ({before}), after = this checkout ({ROOT})")
        for how in ("unwatched", "watched"):
            items: dict[str, list[float]] = {"before": [], "after": []}
            for _ in range(args.rounds):
                for side, tree in trees.items():
                    items[side].append(per_item(tree, how))
            for side in trees:
                print(f"per item ({how}), {side}: " + ", ".join(f"{s * 1000:.1f}" for s in items[side]) + " ms")
            ratio = statistics.median(items["after"]) / statistics.median(items["before"])
            print(f"per item ({how}), after / before (medians): {ratio:.2f}x", flush=True)
        adapters = [a for a in args.matrix_adapters.split(",") if a]
        if adapters:
            walls: dict[str, list[tuple[float, int]]] = {"before": [], "after": []}
            for _ in range(args.rounds):
                for side, tree in trees.items():
                    walls[side].append(matrix(tree, adapters))
            for side in trees:
                print(f"matrix ({', '.join(adapters)}; every arena, streamed, both stores, --jobs 3), {side}: "
                      + ", ".join(f"{w:.0f} s ({n} runs)" for w, n in walls[side]))
            ratio = statistics.median(w for w, _ in walls["after"]) / statistics.median(w for w, _ in walls["before"])
            print(f"matrix, after / before (medians): {ratio:.2f}x")
    finally:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(before)], check=False)


if __name__ == "__main__":
    main()
