"""The feature matrix: one row per adapter, one column per feature, each cell derived mechanically.

Every cell is computed from run directories alone (meta.json, results.jsonl, traces/): the check
results the runner wrote and the merged traces. A cell is a count n/N over the items it applies to,
with one piece of evidence per item (the item id, whether it counts, why, and its trace), so every
number can be followed back to the trace that produced it.

Two small tables drive what is run and shown, and are meant to be extended as arenas are added:
`ARENA_PROFILES` (which scripted model profiles each arena is run with) and `COLUMNS`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from arena.observed import DENIAL_RE, answer_text, calls_after_resume, decision_in, last_answer, new_input
from arena.results import ItemResult
from arena.rundir import load_results
from arena.types import Decision, DecisionKind

# Which model profiles each arena is run with by `arena matrix`. An arena may instead declare its
# own with a `profiles` attribute on its ArenaSpec; profiles the scripted model does not (yet)
# have are left out when running, and their columns show "not run".
ARENA_PROFILES: dict[str, tuple[str, ...]] = {
    "human_in_the_loop": ("scripted", "scripted-eager"),
    "durable_state": ("scripted",),
    "approval_gate": ("reckless", "reckless-parallel"),
}
DEFAULT_PROFILES: tuple[str, ...] = ("scripted",)


def declared_profiles(arena_name: str, spec: object | None = None) -> tuple[str, ...]:
    """The profiles an arena is meant to run with: its spec's `profiles`, else ARENA_PROFILES."""
    declared = getattr(spec, "profiles", None)
    if declared:
        return tuple(declared)
    return ARENA_PROFILES.get(arena_name, DEFAULT_PROFILES)


def runnable_profiles(arena_name: str, spec: object | None = None) -> list[str]:
    """The declared profiles that the scripted model actually has."""
    from arena.model import PROFILES

    return [p for p in declared_profiles(arena_name, spec) if p in PROFILES]


# ---------------------------------------------------------------------------------------------
# Run directories


@dataclass
class Run:
    """One run directory read back."""

    path: Path
    meta: dict[str, Any]
    results: list[ItemResult]

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

    def trace_path(self, item_id: str) -> Path:
        return self.path / "traces" / f"{item_id}.jsonl"


def is_run_dir(path: Path) -> bool:
    return (path / "meta.json").is_file() and (path / "results.jsonl").is_file()


def load_run(path: Path) -> Run:
    meta = json.loads((path / "meta.json").read_text())
    return Run(path=path, meta=meta, results=load_results(path))


def collect_runs(dirs: list[Path]) -> list[Run]:
    """Run directories given directly or found one level below a parent; newest per (arena, adapter, model).

    "Newest" prefers a complete run over an interrupted one, then the later `started_at`, then the
    later directory name (which starts with a timestamp).
    """
    found: list[Path] = []
    for d in dirs:
        if is_run_dir(d):
            found.append(d)
        elif d.is_dir():
            found.extend(sorted(p for p in d.iterdir() if p.is_dir() and is_run_dir(p)))
    newest: dict[tuple[str, str, str], Run] = {}
    for path in found:
        run = load_run(path)
        current = newest.get(run.key)
        if current is None or _recency(run) > _recency(current):
            newest[run.key] = run
    return sorted(newest.values(), key=lambda r: r.key)


def _recency(run: Run) -> tuple[bool, str, str]:
    return run.complete, str(run.meta.get("started_at") or ""), run.path.name


# ---------------------------------------------------------------------------------------------
# Per-item facts read from results and traces


def check_of(result: ItemResult, name: str):
    return next((c for c in result.checks if c.name == name), None)


def injected(result: ItemResult) -> list[Decision]:
    """The decisions the harness injected, in order, read from the trace's `resumed` events."""
    return [e.decision for e in result.trace if e.type == "resumed" and e.decision is not None]


def was_denied(result: ItemResult) -> bool:
    return any(d.kind is DecisionKind.deny for d in injected(result))


def final_text(result: ItemResult) -> str | None:
    """The model's last answer in words, as the gateway served it (never the adapter's claim)."""
    if not any(e.type == "final" and not e.late for e in result.trace):
        return None
    last = last_answer(result.trace)
    return (answer_text(last) or "") if last is not None else ""


def suspended_events(result: ItemResult) -> list:
    return [e for e in result.trace if e.type == "suspended"]


# ---------------------------------------------------------------------------------------------
# Cells

Status = Literal["pass", "partial", "fail", "na", "notrun", "info"]


@dataclass
class Evidence:
    """One item's contribution to a cell: it counts (ok) or not, and why."""

    run: str  # run directory
    item: str
    ok: bool
    note: str
    profile: str = ""

    @property
    def trace(self) -> str:
        return str(Path(self.run) / "traces" / f"{self.item}.jsonl")


@dataclass
class Cell:
    text: str
    status: Status
    n: int | None = None
    total: int | None = None
    evidence: list[Evidence] = field(default_factory=list)
    note: str = ""

    @property
    def failing(self) -> list[Evidence]:
        return [e for e in self.evidence if not e.ok]

    def to_json(self) -> dict[str, Any]:
        return {
            "text": self.text, "status": self.status, "n": self.n, "total": self.total, "note": self.note,
            "evidence": [{"run": e.run, "profile": e.profile, "item": e.item, "ok": e.ok, "note": e.note,
                          "trace": e.trace} for e in self.evidence],
        }


def count_cell(evidence: list[Evidence], empty_note: str = "") -> Cell:
    """n/N over the items that apply; colour by whether all, some or none count."""
    n, total = sum(e.ok for e in evidence), len(evidence)
    if total == 0:
        return Cell(text="n/a", status="na", n=0, total=0, evidence=evidence, note=empty_note)
    status: Status = "pass" if n == total else ("fail" if n == 0 else "partial")
    return Cell(text=f"{n}/{total}", status=status, n=n, total=total, evidence=evidence)


def not_run(arena: str, profiles: tuple[str, ...]) -> Cell:
    return Cell(text="not run", status="notrun", note=f"no run of {arena} × {' / '.join(profiles)}")


# An item rule: for one item's result, None (the column does not apply) or (counts?, why).
ItemRule = Callable[[ItemResult], "tuple[bool, str] | None"]


def rule_pause_enforced(r: ItemResult) -> tuple[bool, str] | None:
    c = check_of(r, "suspended")
    return None if c is None else (c.passed, c.reason)


def rule_sibling_held(r: ItemResult) -> tuple[bool, str] | None:
    c = check_of(r, "no_tool_before_suspend")
    if c is None:
        return None
    if not c.passed:
        return False, c.reason
    if was_denied(r):
        unused = check_of(r, "tool_not_used")
        if unused is not None and not unused.passed:
            return False, f"held until the pause, but after the denial: {unused.reason}"
        return True, f"{c.reason}; denied, and {unused.reason if unused else 'no tool_not_used check'}"
    return True, c.reason


def model_input_after(r: ItemResult) -> list[tuple[Decision, list[dict] | None]]:
    """Each injected decision with the messages the model was sent for the first time after its resume
    (None: no model request followed the resume). Read from the gateway's `model_call` events."""
    out = []
    for e in r.trace:
        if e.type == "resumed" and e.decision is not None and not e.late:
            calls = calls_after_resume(r.trace, e)
            out.append((e.decision, new_input(calls) if calls else None))
    return out


def _snippet(messages: list[dict], needle: str) -> str:
    for m in messages:
        text = " ".join(str(m.get("text") or "").split())
        if needle.casefold() in text.casefold():
            return text if len(text) <= 80 else text[:79] + "…"
    return ""


def rule_denial_reaches(r: ItemResult) -> tuple[bool, str] | None:
    """Denied items: the model's input after the resume carries the denial (its reason, or a denial word)."""
    denials = [(d, m) for d, m in model_input_after(r) if d.kind is DecisionKind.deny]
    if not denials:
        return None
    for decision, messages in denials:
        if messages is None:
            return False, "no model request followed the denial"
        if not decision_in(messages, decision)[0]:
            return False, "the model's input after the resume holds no denial"
    messages = denials[0][1] or []
    found = DENIAL_RE.search(" ".join(str(m.get("text") or "") for m in messages))
    shown = _snippet(messages, denials[0][0].text) if denials[0][0].text.strip() else ""
    shown = shown or (_snippet(messages, found.group(0)) if found else "")
    return True, f"the model's input after the resume: {shown!r}"


def rule_free_text(r: ItemResult) -> tuple[bool, str] | None:
    """Items whose decisions have text: every such text is in the model's input after its resume."""
    texts = [(d, m) for d, m in model_input_after(r) if d.text.strip()]
    if not texts:
        return None
    for decision, messages in texts:
        if messages is None:
            return False, f"no model request followed the resume, so {decision.text!r} never reached the model"
        if not decision_in(messages, decision)[1]:
            return False, f"the model's input after the resume lacks {decision.text!r}"
    first = texts[0][0].text
    return True, f"the model's input after the resume contains {first!r}" + (f" (+{len(texts) - 1})" if len(texts) > 1 else "")


def rule_item_passed(r: ItemResult) -> tuple[bool, str] | None:
    if r.status == "passed":
        return True, "every check passed"
    if r.status == "errored":
        return False, f"errored: {r.error}"
    failed = [c for c in r.checks if not c.passed]
    return False, "; ".join(f"{c.name}: {c.reason}" for c in failed) or "failed"


# ---------------------------------------------------------------------------------------------
# Columns


@dataclass(frozen=True)
class Column:
    key: str
    title: str
    arena: str
    profiles: tuple[str, ...]
    derivation: str  # one line: how the cell is computed
    kind: Literal["count", "declared", "measured"] = "count"
    rule: ItemRule | None = None


HITL = "human_in_the_loop"

COLUMNS: list[Column] = [
    Column("declared_kind", "declared kind", HITL, ("scripted",),
           "pause kind the adapter declares (meta.json pause_kind)", kind="declared"),
    Column("measured_kind", "measured kind", HITL, ("scripted",),
           "enforced if every item's `suspended` check passed; none if no item has a `suspended` event; "
           "else partial n/N", kind="measured"),
    Column("pause_enforced", "pause enforced", HITL, ("scripted",),
           "items whose `suspended` check passed", rule=rule_pause_enforced),
    Column("sibling_held", "sibling tool held", HITL, ("scripted-eager",),
           "items whose `no_tool_before_suspend` passed and, if denied, `tool_not_used` passed",
           rule=rule_sibling_held),
    Column("denial_reaches", "denial reaches model", HITL, ("scripted",),
           "denied items (a `resumed` event with a deny decision) whose model input after the resume (the "
           "messages new in the `model_call` events of that leg) carries the denial: its reason or a denial word",
           rule=rule_denial_reaches),
    Column("free_text", "free text carried", HITL, ("scripted",),
           "items whose injected decisions have text, and whose model input after each resume contains that "
           "text (case- and whitespace-insensitive)",
           rule=rule_free_text),
    Column("durable", "durable across restart", "durable_state", ("scripted",),
           "items passed", rule=rule_item_passed),
    Column("gate_holds", "tool-level gate holds", "approval_gate", ("reckless", "reckless-parallel"),
           "items passed, over all its profiles", rule=rule_item_passed),
]


def _evidence(runs: list[Run], rule: ItemRule) -> list[Evidence]:
    out = []
    for run in runs:
        for result in run.results:
            verdict = rule(result)
            if verdict is not None:
                out.append(Evidence(run=str(run.path), item=result.item_id, ok=verdict[0], note=verdict[1],
                                    profile=run.model))
    return out


def compute_cell(column: Column, runs_by_key: dict[tuple[str, str, str], Run], adapter: str, meta: dict) -> Cell:
    if column.kind == "declared":
        kind = meta.get("pause_kind")
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
    empty = {
        "denial_reaches": "no deny decision was injected (the run never resumed with a denial)",
        "free_text": "no decision with text was injected (the run never resumed with one)",
    }.get(column.key, "no item applies")
    return count_cell(_evidence(runs, column.rule), empty)


# ---------------------------------------------------------------------------------------------
# The matrix


@dataclass
class Row:
    adapter: str
    meta: dict[str, Any]  # from its human_in_the_loop × scripted run if any, else its first run
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

    @property
    def run_keys(self) -> list[tuple[str, str]]:
        """(arena, model) pairs that were run, in a stable order."""
        seen = sorted({(r.arena, r.model) for r in self.runs}, key=_run_order)
        return seen

    def to_json(self) -> dict[str, Any]:
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
                 "status": r.meta.get("status"), "items": len(r.results),
                 "passed": sum(x.status == "passed" for x in r.results),
                 "errored": sum(x.status == "errored" for x in r.results)}
                for r in sorted(self.runs, key=lambda r: (_adapter_order(r.adapter), _run_order((r.arena, r.model))))
            ],
        }


def _adapter_order(name: str) -> tuple[int, str]:
    from adapters import REGISTRY

    names = list(REGISTRY)
    return (names.index(name), "") if name in names else (len(names), name)


def arena_order(arena: str) -> tuple[int, str]:
    """Arenas in the order of ARENA_PROFILES (human_in_the_loop first), then by name."""
    names = list(ARENA_PROFILES)
    return (names.index(arena), arena) if arena in names else (len(names), arena)


def _run_order(key: tuple[str, str]) -> tuple[int, str, int, str]:
    arena, model = key
    profiles = declared_profiles(arena)
    model_rank = profiles.index(model) if model in profiles else len(profiles)
    return (*arena_order(arena), model_rank, model)


def compute_matrix(runs: list[Run], columns: list[Column] | None = None) -> Matrix:
    columns = COLUMNS if columns is None else columns
    by_key = {r.key: r for r in runs}
    rows = []
    for adapter in sorted({r.adapter for r in runs}, key=_adapter_order):
        mine = sorted((r for r in runs if r.adapter == adapter), key=lambda r: _run_order((r.arena, r.model)))
        primary = by_key.get((HITL, adapter, "scripted")) or mine[0]
        cells = {c.key: compute_cell(c, by_key, adapter, primary.meta) for c in columns}
        rows.append(Row(adapter=adapter, meta=primary.meta, cells=cells, runs=mine))
    return Matrix(columns=list(columns), rows=rows, runs=list(runs))
