"""The scorecard: frameworks × semantic families, each cell the worst finding among the family's matrix cells.

The matrix has one column per measured property (fifty and more); a reader choosing or maintaining a framework
asks a dozen questions ("does it stop?", "does the decision reach the call?", "does it pay twice after a
crash?"). A family is one such question; its cell is the worst of the matrix cells that answer it, named, so the
scorecard never hides a failure behind an average. Arenas tag their columns with a family (`Column.family`);
a column measured on a server store or across an upgrade belongs to "stores" / "upgrades" whatever its tag, and
"streaming" is read from the streamed rows beside their plain ones. A column without a known family is under
"other", so a plugin arena's column is never dropped.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from arena.checking import STREAM_CHECK
from arena.report.columns import Cell, Column, Status
from arena.report.matrix import Matrix, Row
from arena.run_id import AdapterLabel, ArenaLabel
from arena.streaming import is_streamed, plain_label


@dataclass(frozen=True)
class Family:
    key: str
    title: str
    question: str


FAMILIES: tuple[Family, ...] = (
    Family("pause", "pause held", "Does the run stop before the consequential call, and stay stopped?"),
    Family("decision", "decision routed", "Does the human's decision (deny, edit, free text) reach the right call?"),
    Family("resume", "resume safety", "Does a malformed, repeated or stale resume run nothing it should not, once?"),
    Family("durability", "durable", "Does the paused run survive a restart of the process?"),
    Family("crash", "crash recovery", "After a crash inside an approved action: recovered, paid once, not re-asked?"),
    Family("streaming", "streaming", "Driven through the streaming API: the same results, and a stream that tells "
           "what ran?"),
    Family("nesting", "nesting", "Does a pause inside a sub-agent hold, route its decision and report back?"),
    Family("interruptions", "interruptions", "New messages, late approvals and hand-offs while paused?"),
    Family("stores", "stores", "The same on the framework's PostgreSQL and Redis stores?"),
    Family("upgrades", "upgrades", "Paused by one release, resumed by the next?"),
    Family("other", "other", "Columns of arenas that name no family."),
)
BY_KEY = {f.key: f for f in FAMILIES}

# worst first; "info" (a declared value, a neutral measurement) is never a verdict
_SEVERITY: dict[str, int] = {"fail": 0, "partial": 1, "pass": 2, "na": 3, "notrun": 4}


@dataclass
class ScoreCell:
    family: Family
    status: Status
    text: str  # short and colour-free: "pass", "fail: charged once 3/6", "not run"
    worst: tuple[Column, Cell] | None = None  # the matrix cell that decided it (None for streaming / not run)
    cells: list[tuple[Column, Cell]] = field(default_factory=list)  # every matrix cell of the family for the row
    note: str = ""  # why, where the text cannot say it (not streamed: the adapter's reason)


@dataclass
class ScoreRow:
    row: Row
    cells: dict[str, ScoreCell]  # by Family.key, in FAMILIES order

    @property
    def adapter(self) -> str:
        return self.row.adapter


def family_of(column: Column) -> str:
    """The family a column counts under: a store or upgrade scope first, then the arena's tag, else "other"."""
    scope = ArenaLabel.parse(column.arena).scope
    if scope in ("postgres", "redis"):
        return "stores"
    if scope == "upgrade":
        return "upgrades"
    return column.family if column.family in BY_KEY else "other"


def worst_of(family: Family, cells: list[tuple[Column, Cell]]) -> ScoreCell:
    """The family's cell: the most severe of its verdict cells (fail, then partial, then pass), named."""
    verdicts = [(c, cell) for c, cell in cells if cell.status in _SEVERITY and c.kind != "declared"]
    if not verdicts:
        return ScoreCell(family, "notrun", "not run", None, cells)
    column, cell = min(verdicts, key=lambda cc: _SEVERITY[cc[1].status])
    if cell.status == "pass":
        return ScoreCell(family, "pass", "pass", (column, cell), cells)
    if cell.status == "na":
        return ScoreCell(family, "na", "n/a", (column, cell), cells, note=cell.note)
    if cell.status == "notrun":
        return ScoreCell(family, "notrun", "not run", None, cells)
    short = sum(cc[1].status in ("fail", "partial") for cc in verdicts)
    more = f" (+{short - 1} more)" if short > 1 else ""
    return ScoreCell(family, cell.status, f"{cell.status}: {column.title} {cell.text}{more}", (column, cell), cells)


def streaming_cell(row: Row, streamed: Row | None, columns: list[Column], why_not: str | None) -> ScoreCell:
    """The streamed row beside its plain one: every stream check that failed, and every cell whose text differs."""
    family = BY_KEY["streaming"]
    if streamed is None:
        return ScoreCell(family, "na" if why_not else "notrun", "not streamed" if why_not else "not run",
                         note=why_not or "")
    checked = [c for run in streamed.runs for r in run.results for c in r.checks if c.name == STREAM_CHECK]
    told_wrong = sum(not c.passed for c in checked)
    differ = [c for c in columns if "notrun" not in (row.cells[c.key].status, streamed.cells[c.key].status)
              and row.cells[c.key].text != streamed.cells[c.key].text]
    if not checked and not differ:
        return ScoreCell(family, "notrun", "not run")
    problems = []
    if told_wrong:
        problems.append(f"stream ≠ run in {told_wrong}/{len(checked)} items")
    if differ:
        problems.append(f"{len(differ)} cell{'s differ' if len(differ) != 1 else ' differs'} from plain")
    if not problems:
        return ScoreCell(family, "pass", "pass")
    status: Status = "fail" if told_wrong == len(checked) and checked else "partial"
    return ScoreCell(family, status, f"{status}: " + "; ".join(problems))


def scorecard(m: Matrix, why_not_streamed: dict[str, str] | None = None) -> list[ScoreRow]:
    """One row per plain adapter of the matrix (no older release, no streamed row), families in order; a
    family without any column in this matrix is left out of every row. `why_not_streamed`: per adapter, the
    reason it has no streamed row (the caller reads it from the adapter's declaration)."""
    rows = {row.adapter: row for row in m.rows}
    present = {family_of(c) for c in m.columns if c.kind != "declared"}
    if any(is_streamed(r.adapter) for r in m.rows) or why_not_streamed:
        present.add("streaming")
    out = []
    for row in m.rows:
        if not AdapterLabel.parse(row.adapter).main:
            continue
        cells: dict[str, ScoreCell] = {}
        for family in FAMILIES:
            if family.key not in present:
                continue
            if family.key == "streaming":
                streamed = next((r for r in m.rows if is_streamed(r.adapter) and plain_label(r.adapter) == row.adapter),
                                None)
                cells[family.key] = streaming_cell(row, streamed, m.columns,
                                                   (why_not_streamed or {}).get(row.adapter))
                continue
            mine = [(c, row.cells[c.key]) for c in m.columns if c.kind != "declared" and family_of(c) == family.key]
            cells[family.key] = worst_of(family, mine)
        out.append(ScoreRow(rows[row.adapter], cells))
    return out


def families_present(card: list[ScoreRow]) -> list[Family]:
    """The families the scorecard's rows have, in order."""
    keys = {k for row in card for k in row.cells}
    return [f for f in FAMILIES if f.key in keys]
