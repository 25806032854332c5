"""The vocabulary of the feature matrix, for the core and for arenas: columns, cells and their evidence.

A column is declared by the arena it measures (`ArenaSpec.columns`): its key, title, the arena's
profiles it reads, a one-line derivation, and an item rule (for one item's result: None when the
column does not apply, else whether the item counts and why). The helpers below read one item's
result and merged trace; they are what item rules are made of.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from arena.observed import answer_text, calls_after_resume, last_answer, new_input
from arena.results import ItemResult
from arena.stats import Repeated
from arena.checks import CheckResult
from arena.types import Decision, DecisionKind, TraceEvent

# ---------------------------------------------------------------------------------------------
# Per-item facts read from results and traces


def check_of(result: ItemResult, name: str) -> CheckResult | None:
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


def suspended_events(result: ItemResult) -> list[TraceEvent]:
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
    # with --epochs: how often each applicable item counted over all its epochs (pass@1, pass^k, the 95%
    # interval); the text, status and evidence stay the first epoch's
    repeated: Repeated | None = None
    lower_is_better: bool = False  # n counts a fault (Column.lower_is_better): an item that counts is short of it

    def short_of(self, e: Evidence) -> bool:
        """Whether this item keeps the cell from its pass: it does not count, or, for a fault count, it does."""
        return e.ok == self.lower_is_better

    @property
    def failing(self) -> list[Evidence]:
        """The items that keep the cell from its pass (for a fault count: those where the fault happened)."""
        return [e for e in self.evidence if self.short_of(e)]

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "text": self.text, "status": self.status, "n": self.n, "total": self.total, "note": self.note,
            "evidence": [{"run": e.run, "profile": e.profile, "item": e.item, "ok": e.ok, "note": e.note,
                          "trace": e.trace} for e in self.evidence],
        }
        if self.repeated is not None:  # only then: a matrix of single-epoch runs is what it was before epochs
            r = self.repeated
            out["repeated"] = {"epochs": r.epochs, "pass_at_1": r.pass_at_1, "pass_hat_k": r.pass_hat_k,
                               "ci": list(r.ci) if r.ci else None, "errored": r.errored}
        return out

    def repeated_text(self) -> str:
        """"pass@1 83.3%, pass^3 66.7%, 95% CI 61.2–94.0%", or "" without epochs."""
        from arena.stats import interval, percent

        r = self.repeated
        if r is None:
            return ""
        return f"pass@1 {percent(r.pass_at_1)}, pass^{r.epochs} {percent(r.pass_hat_k)}, 95% CI {interval(r.ci)}"


def count_cell(evidence: list[Evidence], empty_note: str = "", lower_is_better: bool = False,
               neutral: bool = False) -> Cell:
    """n/N over the items that apply; colour by whether all, some or none count (or, for a fault count,
    whether none, some or all do; a neutral count is a measurement, not a verdict, and is not coloured)."""
    n, total = sum(e.ok for e in evidence), len(evidence)
    if total == 0:
        return Cell(text="n/a", status="na", n=0, total=0, evidence=evidence, note=empty_note)
    best, worst = (0, total) if lower_is_better else (total, 0)
    status: Status = "info" if neutral else "pass" if n == best else ("fail" if n == worst else "partial")
    return Cell(text=f"{n}/{total}", status=status, n=n, total=total, evidence=evidence,
                lower_is_better=lower_is_better)


def not_run(arena: str, profiles: tuple[str, ...]) -> Cell:
    return Cell(text="not run", status="notrun", note=f"no run of {arena} × {' / '.join(profiles)}")


# An item rule: for one item's result, None (the column does not apply) or (counts?, why).
ItemRule = Callable[[ItemResult], "tuple[bool, str] | None"]


def rule_pause_enforced(r: ItemResult) -> tuple[bool, str] | None:
    c = check_of(r, "suspended")
    return None if c is None else (c.passed, c.reason)


def model_input_after(r: ItemResult) -> list[tuple[Decision, list[dict[str, Any]] | None]]:
    """Each injected decision with the messages the model was sent for the first time after its resume
    (None: no model request followed the resume). Read from the gateway's `model_call` events."""
    out = []
    for e in r.trace:
        if e.type == "resumed" and e.decision is not None and not e.late:
            calls = calls_after_resume(r.trace, e)
            out.append((e.decision, new_input(calls) if calls else None))
    return out


def rule_item_passed(r: ItemResult) -> tuple[bool, str] | None:
    if r.status == "passed":
        return True, "every check passed"
    if r.status == "errored":
        return False, f"errored: {r.error}"
    failed = [c for c in r.checks if not c.passed]
    return False, "; ".join(f"{c.name}: {c.reason}" for c in failed) or "failed"


@dataclass(frozen=True)
class Column:
    key: str
    title: str
    arena: str
    profiles: tuple[str, ...]
    derivation: str  # one line: how the cell is computed
    kind: Literal["count", "declared", "measured"] = "count"
    rule: ItemRule | None = None
    empty_note: str = "no item applies"  # shown when no item of its runs applies (n/a)
    meta_key: str = "pause_kind"  # what a `declared` column shows from meta.json
    lower_is_better: bool = False  # n counts a fault (e.g. a re-executed tool body): all-zero is the pass
    neutral: bool = False  # n is a measurement, not a verdict (shown without a pass/fail colour)
    # the semantic family the scorecard groups it under (arena/report/scorecard.py FAMILIES: "pause", "decision",
    # "resume", ...); a column on a store or across an upgrade is under "stores" / "upgrades" whatever it says
    family: str = ""
