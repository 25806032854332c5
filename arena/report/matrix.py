"""The feature matrix: one row per adapter, one column per feature, each cell derived mechanically.

Every cell is computed from run directories alone (meta.json, results.jsonl, traces/): the check
results the runner wrote and the merged traces. A cell is a count n/N over the items it applies to,
with one piece of evidence per item (the item id, whether it counts, why, and its trace), so every
number can be followed back to the trace that produced it.

The columns come from the arenas (`ArenaSpec.columns`, in arena order); which profiles each arena
is run with is its own (`ArenaSpec.profiles`). Nothing here knows a particular arena.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from arena import catalog
from arena.errors import ArenaError, warn
from arena.report.columns import (  # noqa: F401  (re-exported: the matrix's vocabulary)
    Cell, Column, Evidence, ItemRule, check_of, count_cell, final_text, injected, model_input_after, not_run,
    rule_item_passed, rule_pause_enforced, suspended_events, was_denied,
)
from arena.results import ItemResult, RunSummary
from arena.rundir import Warn, load_results
from arena.shard import Missing
from arena.stats import Repeated
from arena.stats import Repeated, repeated


def declared_profiles(arena_name: str) -> tuple[str, ...]:
    """The profiles an arena is run with (its spec's), or none for an arena this checkout lacks."""
    spec = catalog.arena_of(arena_name)
    return spec.profiles if spec is not None else ()


# ---------------------------------------------------------------------------------------------
# Run directories


@dataclass
class Run:
    """One run directory read back.

    `results` are the items' first epochs: the matrix's cells, evidence and drill-down read those, so a run
    with `--epochs` keeps the cells' meaning and their trace links; `later` holds the other epochs, which
    only the repeated-runs statistics (`repeated`) read.
    """

    path: Path
    meta: dict[str, Any]
    results: list[ItemResult]
    later: list[ItemResult] = field(default_factory=list)
    summary: RunSummary | None = None  # a run just made (arena.evaluate) has it; one read back has summary.json

    def __post_init__(self) -> None:
        if any(r.epoch > 1 for r in self.results):
            self.later = [*self.later, *(r for r in self.results if r.epoch > 1)]
            self.results = [r for r in self.results if r.epoch <= 1]

    @property
    def epochs(self) -> int:
        return max([int(self.meta.get("epochs") or 1), *(r.epoch for r in self.later)])

    def repeated(self) -> Repeated | None:
        """Its repeated-runs statistics, when it ran more than one epoch."""
        return repeated([*self.results, *self.later], self.epochs) if self.epochs > 1 else None

    @property
    def arena(self) -> str:
        return str(self.meta.get("arena", ""))

    @property
    def adapter(self) -> str:
        return str(self.meta.get("adapter", ""))

    @property
    def model(self) -> str:
        return str(self.meta.get("model", ""))

    @property
    def key(self) -> tuple[str, str, str]:
        return self.arena, self.adapter, self.model

    @property
    def label(self) -> str:
        return f"{self.arena} × {self.model}"

    @property
    def complete(self) -> bool:
        return self.meta.get("status") == "complete"

    @property
    def status(self) -> str:
        from arena.rundir import status_of

        return status_of(self.meta)

    def trace_path(self, item_id: str) -> Path:
        return self.path / "traces" / f"{item_id}.jsonl"


def is_run_dir(path: Path) -> bool:
    return (path / "meta.json").is_file() and (path / "results.jsonl").is_file()


class DamagedRun(ArenaError, ValueError):
    """A run directory that cannot be read back at all (its meta.json, or a file that cannot be opened):
    named, with the reason. A torn line costs only its item (`load_results`)."""


def load_run(path: Path, on_damage: Warn = warn) -> Run:
    """A run directory read back; `on_damage` hears of each file with torn lines (their items not measured)."""
    try:
        meta = json.loads((path / "meta.json").read_text())
        if not isinstance(meta, dict):
            raise DamagedRun(f"{path / 'meta.json'}: not a JSON object")
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise DamagedRun(f"{path / 'meta.json'}: {_why(exc)}") from None
    try:
        results = load_results(path, on_damage)
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise DamagedRun(f"{path}: {_why(exc)}") from None
    return Run(path=path, meta=meta, results=results)


def _why(exc: Exception) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]


def collect_runs(dirs: list[Path], on_skip: Callable[[str], None] | None = None) -> list[Run]:
    """Run directories given directly or found one level below a parent; newest per (arena, adapter, model).

    "Newest" prefers a complete run over an interrupted one, then the later `started_at`, then the
    later directory name (which starts with a timestamp). `on_skip` hears each warning, one line each:
    a directory skipped (its meta.json unreadable), or a damaged file whose items are not measured.
    """
    found: list[Path] = []
    for d in dirs:
        if is_run_dir(d):
            found.append(d)
        elif d.is_dir():
            # a hidden one is a run directory still being created (arena/rundir.py), never a run
            found.extend(sorted(p for p in d.iterdir() if p.is_dir() and not p.name.startswith(".") and is_run_dir(p)))
    newest: dict[tuple[str, str, str], Run] = {}
    for path in found:
        try:
            run = load_run(path, on_skip or warn)
        except DamagedRun as exc:  # one damaged directory does not take the whole report down
            (on_skip or warn)(f"skipped a damaged run directory: {exc}")
            continue
        current = newest.get(run.key)
        if current is None or _recency(run) > _recency(current):
            newest[run.key] = run
    return sorted(newest.values(), key=lambda r: r.key)


def _recency(run: Run) -> tuple[bool, str, str]:
    return run.complete, str(run.meta.get("started_at") or ""), run.path.name


def _evidence(runs: list[Run], rule: ItemRule) -> list[Evidence]:
    out = []
    for run in runs:
        for result in run.results:
            verdict = rule(result)
            if verdict is not None:
                out.append(Evidence(run=str(run.path), item=result.item_id, ok=verdict[0], note=verdict[1],
                                    profile=run.model))
    return out


def _repeated_cell(runs: list[Run], rule: ItemRule) -> Repeated | None:
    """Over every epoch of runs with --epochs: per (profile, item) the epochs the rule counted, of those it
    applied to (epochs the harness could not measure left out), as arena.stats reads them."""
    from arena.stats import EpochTally, summarise

    epochs = max((run.epochs for run in runs), default=1)
    if epochs <= 1:
        return None
    tallies: dict[str, EpochTally] = {}  # "<profile>/<item>"
    errored = 0
    for run in runs:
        for result in [*run.results, *run.later]:
            if result.status == "errored":
                errored += 1
                continue
            verdict = rule(result)
            if verdict is None:
                continue
            tally = tallies.setdefault(f"{run.model}/{result.item_id}", EpochTally())
            tally.measured += 1
            tally.passed += bool(verdict[0])
    return summarise(tallies, epochs, errored)


def compute_cell(column: Column, runs_by_key: dict[tuple[str, str, str], Run], adapter: str, meta: dict[str, Any]) -> Cell:
    cell = _compute_cell(column, runs_by_key, adapter, meta)
    if column.kind != "declared" and cell.status != "notrun":
        runs = [runs_by_key[k] for p in column.profiles if (k := (column.arena, adapter, p)) in runs_by_key]
        cell.repeated = _repeated_cell(runs, rule_pause_enforced if column.kind == "measured" else cast(ItemRule, column.rule))
    return cell


def _compute_cell(column: Column, runs_by_key: dict[tuple[str, str, str], Run], adapter: str, meta: dict[str, Any]) -> Cell:
    if column.kind == "declared":
        runs = [runs_by_key[k] for p in column.profiles if (k := (column.arena, adapter, p)) in runs_by_key]
        if not runs:
            return not_run(column.arena, column.profiles)
        kind = runs[0].meta.get(column.meta_key)
        return Cell(text=str(kind) if kind else "unknown", status="info", note="declared in meta.json")
    runs = [runs_by_key[k] for p in column.profiles if (k := (column.arena, adapter, p)) in runs_by_key]
    if not runs:
        return not_run(column.arena, column.profiles)
    if column.kind == "measured":
        evidence = _evidence(runs, rule_pause_enforced)
        n, total = sum(e.ok for e in evidence), len(evidence)
        if total and n == total:
            return Cell(text="enforced", status="pass", n=n, total=total, evidence=evidence)
        if not any(suspended_events(r) for run in runs for r in run.results):
            return Cell(text="none", status="fail", n=n, total=total, evidence=evidence,
                        note="no item has a suspended event")
        return Cell(text=f"partial {n}/{total}", status="partial", n=n, total=total, evidence=evidence)
    assert column.rule is not None
    return count_cell(_evidence(runs, column.rule), column.empty_note, column.lower_is_better, column.neutral)


# ---------------------------------------------------------------------------------------------
# The matrix


@dataclass
class Row:
    adapter: str
    meta: dict[str, Any]  # from its first run in arena and profile order (the first arena's default profile)
    cells: dict[str, Cell]
    runs: list[Run]

    @property
    def framework(self) -> str:
        return str(self.meta.get("framework") or "")

    @property
    def version(self) -> str:
        return str(self.meta.get("framework_version") or "")

    @property
    def mechanism(self) -> str:
        return str(self.meta.get("pause_mechanism") or "")

    @property
    def pause_kind(self) -> str:
        return str(self.meta.get("pause_kind") or "")

    @property
    def capabilities(self) -> dict[str, Any]:
        return dict(self.meta.get("capabilities") or {})

    def run(self, arena: str, model: str) -> Run | None:
        return next((r for r in self.runs if r.arena == arena and r.model == model), None)


@dataclass
class Matrix:
    columns: list[Column]
    rows: list[Row]
    runs: list[Run]
    # planned cells a merge of shards has no run of (arena/shard.py): shown in every report, never a silent gap
    missing: list[Missing] = field(default_factory=list)

    @property
    def run_keys(self) -> list[tuple[str, str]]:
        """(arena, model) pairs that were run, in a stable order."""
        seen = sorted({(r.arena, r.model) for r in self.runs}, key=run_order)
        return seen

    def arena_profiles(self) -> dict[str, list[str]]:
        """The profiles each arena was run with, arenas and profiles in order."""
        out: dict[str, list[str]] = {}
        for arena, model in self.run_keys:
            out.setdefault(arena, []).append(model)
        return out

    def repeated(self) -> list[tuple[Run, Repeated]]:
        """The runs of more than one epoch with their statistics, adapters and runs in report order."""
        runs = sorted(self.runs, key=lambda r: (adapter_order(r.adapter), run_order((r.arena, r.model))))
        return [(r, stats) for r in runs if (stats := r.repeated()) is not None]

    def to_json(self) -> dict[str, Any]:
        out = self._json()
        if self.missing:  # only then: an unsharded matrix's JSON is what it was
            out["missing"] = [m.to_json() for m in self.missing]
        repeated = self.repeated()
        if repeated:  # only then: a matrix of single-epoch runs is what it was before epochs existed
            out["repeated"] = [
                {"arena": r.arena, "adapter": r.adapter, "model": r.model, "path": str(r.path), "epochs": s.epochs,
                 "pass_at_1": s.pass_at_1, "pass_hat_k": s.pass_hat_k,
                 "ci_low": s.ci[0] if s.ci else None, "ci_high": s.ci[1] if s.ci else None, "errored": s.errored,
                 "items": {item: t.model_dump() for item, t in s.items.items()}}
                for r, s in repeated
            ]
        return out

    def _json(self) -> dict[str, Any]:
        return {
            "columns": [{"key": c.key, "title": c.title, "arena": c.arena, "profiles": list(c.profiles),
                         "derivation": c.derivation} for c in self.columns],
            "rows": [
                {"adapter": row.adapter, "framework": row.framework, "framework_version": row.meta.get("framework_version"),
                 "pause_kind": row.pause_kind, "pause_mechanism": row.mechanism, "capabilities": row.capabilities,
                 "cells": {k: c.to_json() for k, c in row.cells.items()}}
                for row in self.rows
            ],
            "runs": [
                {"arena": r.arena, "adapter": r.adapter, "model": r.model, "path": str(r.path),
                 "status": r.status, "items": len(r.results),
                 "passed": sum(x.status == "passed" for x in r.results),
                 "errored": sum(x.status == "errored" for x in r.results)}
                for r in sorted(self.runs, key=lambda r: (adapter_order(r.adapter), run_order((r.arena, r.model))))
            ],
        }


def adapter_order(name: str) -> tuple[Any, ...]:
    """Registry order; an adapter pinned to releases of its framework (`langgraph@1.1.10`) right after the
    adapter itself, oldest release first; a streamed run right after its plain one."""
    from arena.streaming import is_streamed, plain_label
    from arena.versions import base_name, order_key

    names = list(catalog.builtin_adapters())
    plain = plain_label(name)  # a streamed run right after the adapter's plain one
    base = base_name(plain)
    return ((names.index(base), "") if base in names else (len(names), base)) + order_key(plain) + (is_streamed(name),)


def arena_order(arena: str) -> tuple[int, str]:
    """Arenas in their declared order (`ArenaSpec.order`), then by name; unknown arenas last."""
    spec = catalog.arena_of(arena)
    return (spec.order, arena) if spec is not None else (1 << 30, arena)


def run_order(key: tuple[str, str]) -> tuple[int, str, int, str]:
    arena, model = key
    profiles = declared_profiles(arena)
    model_rank = profiles.index(model) if model in profiles else len(profiles)
    return (*arena_order(arena), model_rank, model)


def compute_matrix(runs: list[Run], columns: list[Column] | None = None) -> Matrix:
    """The matrix of these runs; its columns are every arena's (in arena order) unless given."""
    if columns is None:
        columns = catalog.columns()
    by_key = {r.key: r for r in runs}
    rows = []
    for adapter in sorted({r.adapter for r in runs}, key=adapter_order):
        mine = sorted((r for r in runs if r.adapter == adapter), key=lambda r: run_order((r.arena, r.model)))
        primary = mine[0]  # the first arena's default profile, when it was run
        cells = {c.key: compute_cell(c, by_key, adapter, primary.meta) for c in columns}
        rows.append(Row(adapter=adapter, meta=primary.meta, cells=cells, runs=mine))
    return Matrix(columns=list(columns), rows=rows, runs=list(runs))
