"""The site's pages, each rendered on request from one matrix: `build_site` writes them all, `arena view` serves
them one at a time from run directories it re-reads.

Every page comes from a Jinja2 template with autoescaping on; every value a template prints first has its control
characters shown as U+FFFD (`printable`), so model text, tool arguments, check reasons and names read from run
directories show as text and never run. Traces are not inlined: each item's trace is a JSON file of its own
(`trace/<run>/<item>.json`) that the run page fetches when its button is clicked.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined
from markupsafe import Markup, escape

from arena.report.findings import why_not_streamed_in
from arena.report.columns import Cell, Column
from arena.report.matrix import Matrix, Row, Run
from arena.report.render_md import REPEATED_NOTE, printable
from arena.report.scorecard import FAMILIES, ScoreCell, ScoreRow, families_present, family_of, scorecard
from arena.results import ItemResult
from arena.run_id import AdapterLabel
from arena.types import TraceEvent

# How a run directory's state reads on its pages: a run whose process is still writing it is "in progress"; one
# arena/rundir.py is still creating under a hidden name (before its rename into place) is "being created".
STATE_TEXT = {"complete": "complete", "interrupted": "interrupted", "running": "in progress",
              "staged": "being created"}
LIVE_STATES = ("in progress", "being created")
TITLE_CHARS = 240  # a cell's hover text: enough for its first failing items, never a page of notes


def anchor(*parts: str) -> str:
    """An HTML id from names that may hold any character."""
    return "-".join(re.sub(r"[^A-Za-z0-9_.-]+", "_", p) for p in parts)


def file_part(name: str) -> str:
    """A name as one harmless path segment; a name that had to change keeps a hash of itself, so two item ids that
    clean to the same text still get two files."""
    cleaned = re.sub(r"[^A-Za-z0-9_.@-]+", "_", name).lstrip(".")[:80] or "_"
    if cleaned == name:
        return cleaned
    return f"{cleaned}-{hashlib.sha256(name.encode()).hexdigest()[:8]}"


def _shorten(text: str, limit: int = TITLE_CHARS) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def event_detail(e: TraceEvent) -> str:
    """One trace event's payload as plain text (the page sets it as text, never as markup)."""
    parts = []
    if e.args is not None:
        parts.append("args " + json.dumps(e.args, ensure_ascii=False))
    if e.result is not None:
        parts.append("result " + e.result)
    if e.decision is not None:
        parts.append(f"decision {e.decision.kind_name}" + (f": {e.decision.text}" if e.decision.text else ""))
    for d in e.decisions or []:
        parts.append(f"decision for {d.call_id or 'no call'} {d.kind_name}" + (f": {d.text}" if d.text else "")
                     + (f" args {d.args}" if d.args is not None else ""))
    if e.pending:
        parts.append("pending " + ", ".join(f"{p.get('tool')} {p.get('call_id')}" for p in e.pending))
    if e.text is not None:
        parts.append(e.text)
    if e.request is not None:
        new = e.request.get("new") or []
        parts.append(f"sent {e.request.get('messages', '?')} message(s), new: "
                     + "; ".join(f"{m.get('role')}: {str(m.get('text') or '')[:160]}" for m in new))
    if e.response is not None:
        calls = ", ".join(f"{c.get('name')}{json.dumps(c.get('args'), ensure_ascii=False)}"
                          for c in e.response.get("tool_calls") or [])
        said = e.response.get("text") or e.response.get("error") or ""
        parts.append(f"answered (HTTP {e.response.get('status')}) " + " ".join(p for p in (said, calls) if p))
    if e.survivors:
        parts.append("survivors " + json.dumps(e.survivors, ensure_ascii=False))
    if e.late:
        parts.append("LATE: after the item was sealed")
    return "\n".join(parts)


def trace_json(result: ItemResult) -> bytes:
    """An item's merged trace as the run page's script shows it: one row per event, every string printable."""
    rows = [{"seq": e.seq, "leg": e.leg, "type": printable(e.type), "tool": printable(e.tool or ""),
             "detail": printable(event_detail(e))} for e in result.trace]
    return json.dumps(rows, ensure_ascii=False, separators=(",", ":")).encode()


# ---------------------------------------------------------------------------------------------
# What the templates are given


@dataclass
class SiteItem:
    result: ItemResult
    name: str  # its anchor and trace file name (the item id, file-safe; `@k` for a later epoch)

    @property
    def label(self) -> str:
        r = self.result
        return r.item_id if r.epoch <= 1 else f"{r.item_id} (epoch {r.epoch})"


@dataclass
class SiteRun:
    run: Run
    slug: str  # run/<slug>.html, trace/<slug>/
    state: str  # STATE_TEXT's values
    current: bool  # the run the matrix reads for its arena, adapter and model (not superseded by a newer one)
    items: list[SiteItem] = field(default_factory=list)

    @property
    def passed(self) -> int:
        return sum(r.status == "passed" for r in self.run.results)

    @property
    def total(self) -> int:
        return len(self.run.results)

    @property
    def live(self) -> bool:
        return self.state in LIVE_STATES


@dataclass
class CellLink:
    """A matrix cell as a page shows it: colour, text, where it links (None: nowhere), hover text."""

    status: str
    text: str
    href: str | None
    title: str
    repeated: str = ""
    first: bool = False  # the first column of its group (a heavier left border)


@dataclass
class ColumnGroup:
    title: str
    question: str
    columns: list[Column]


@dataclass
class ShortItem:
    item: str
    profile: str
    note: str
    href: str | None


@dataclass
class ShortCell:
    row: Row
    column: Column
    cell: Cell
    items: list[ShortItem]
    elsewhere: list[tuple[str, Cell]]  # (adapter, its cell) of the other frameworks' plain rows

    @property
    def id(self) -> str:
        return anchor("short", self.row.adapter, self.column.key)


@dataclass
class FedCell:
    """A matrix cell a run feeds, on that run's page: its evidence from this run, and the cell's other runs."""

    row: Row
    column: Column
    cell: Cell
    items: list[tuple[bool, str, str, str]]  # (keeps the cell from its pass, item, note, item anchor)
    others: list[SiteRun]

    @property
    def id(self) -> str:
        return anchor("cell", self.column.key)


# ---------------------------------------------------------------------------------------------
# The site


def _environment() -> Environment:
    env = Environment(loader=PackageLoader("arena.report.site", "templates"), autoescape=True, undefined=StrictUndefined,
                      trim_blocks=True, lstrip_blocks=True, finalize=_shown, keep_trailing_newline=True)
    env.filters["prose"] = prose
    env.globals["anchor"] = anchor
    env.filters["percent"] = lambda x: f"{100 * x:.0f}%"
    return env


def _shown(value: Any) -> Any:
    """Every printed value as text with its control characters shown as U+FFFD, before autoescaping (markup we made
    and numbers pass as they are)."""
    if isinstance(value, (Markup, int, float)):
        return value
    return printable(str(value))


def prose(text: str) -> Markup:
    """Escaped text with its `code` spans shown as <code>."""
    return Markup(re.sub(r"`([^`]+)`", r"<code>\1</code>", str(escape(printable(text)))))


def site_css() -> bytes:
    return (resources.files("arena.report.site") / "static" / "site.css").read_bytes()


class Site:
    """The pages of one matrix (and of any other run directories `arena view` shows beside it: older runs of the
    same cell, runs still being written). Paths are relative to the site's root; every link between pages is
    relative too, so the same pages work as files, from any static host and from `arena view`."""

    def __init__(self, m: Matrix, others: list[tuple[Run, str]] | None = None, warnings: list[str] | None = None,
                 live: bool = False):
        self.m = m
        self.live = live  # served by `arena view`: pages say a reload shows what was written since
        self.warnings = list(warnings or [])
        self.card: list[ScoreRow] = scorecard(m, why_not_streamed_in(m))
        self.families = families_present(self.card)
        self.groups = self._groups()
        self.columns = [c for g in self.groups for c in g.columns]
        self.group_starts = {g.columns[0].key for g in self.groups}
        self.runs: dict[str, SiteRun] = {}
        self._by_path: dict[str, SiteRun] = {}
        for run in m.runs:
            self._add_run(run, run.status, current=True)
        for run, state in others or []:  # `arena view`: runs the matrix does not read (older, or being written)
            self._add_run(run, state, current=False)
        self.framework_files: dict[str, str] = {}
        for row in m.rows:
            name = row.framework or "none"
            if name not in self.framework_files:
                stem = file_part(name)
                while stem in self.framework_files.values():
                    stem += "_"
                self.framework_files[name] = stem
        self.env = _environment()

    def _add_run(self, run: Run, state: str, current: bool) -> None:
        slug = file_part(run.path.name)
        while slug in self.runs:
            slug += "_"
        items, names = [], set()
        for result in [*run.results, *run.later]:
            name = file_part(result.item_id if result.epoch <= 1 else f"{result.item_id}@{result.epoch}")
            while name in names:
                name += "_"
            names.add(name)
            items.append(SiteItem(result, name))
        entry = SiteRun(run, slug, STATE_TEXT.get(state, state), current, items)
        self.runs[slug] = entry
        self._by_path[str(run.path)] = entry

    def _groups(self) -> list[ColumnGroup]:
        """The matrix's columns grouped by the scorecard's families (in its order), each group in matrix order."""
        by_family: dict[str, list[Column]] = {}
        for c in self.m.columns:
            by_family.setdefault(family_of(c), []).append(c)
        return [ColumnGroup(f.title, f.question, by_family[f.key]) for f in FAMILIES if f.key in by_family]

    # -- links ------------------------------------------------------------------------------

    def framework_href(self, framework: str, root: str) -> str:
        return f"{root}framework/{self.framework_files[framework or 'none']}.html"

    def run_href(self, run: SiteRun, root: str) -> str:
        return f"{root}run/{run.slug}.html"

    def site_run(self, path: str) -> SiteRun | None:
        return self._by_path.get(path)

    def cell_runs(self, row: Row, column: Column) -> list[SiteRun]:
        """The runs a cell is read from: its arena × each of its profiles, for this row's adapter."""
        out = []
        for profile in column.profiles:
            run = row.run(column.arena, profile)
            if run is not None and (entry := self.site_run(str(run.path))) is not None:
                out.append(entry)
        return out

    def cell(self, row: Row, column: Column, root: str) -> CellLink:
        """A matrix cell: it links to its evidence on the run page it is read from (the first run with an item that
        keeps it from its pass), a declared value to the adapter on its framework's page."""
        cell = row.cells[column.key]
        title = cell.note or "; ".join(f"{e.item}: {e.note}" for e in cell.failing[:3])
        href: str | None = None
        if cell.status == "notrun":
            href = None
        elif column.kind == "declared" or (cell.status == "info" and not cell.evidence):
            href = f"{self.framework_href(row.framework, root)}#{anchor('adapter', row.adapter)}"
        else:
            runs = self.cell_runs(row, column)
            failing = {e.run for e in cell.failing}
            target = next((r for r in runs if str(r.run.path) in failing), runs[0] if runs else None)
            if target is not None:
                href = f"{self.run_href(target, root)}#{anchor('cell', column.key)}"
        return CellLink(cell.status, cell.text, href, _shorten(title), cell.repeated_text(),
                        column.key in self.group_starts)

    def score_href(self, row: Row, score: ScoreCell, root: str) -> str:
        """A scorecard cell opens its framework's page: at the matrix cell that decided it when that one is short of
        its pass, else at the adapter."""
        page = self.framework_href(row.framework, root)
        if score.worst is not None and score.worst[1].status in ("fail", "partial"):
            return f"{page}#{anchor('short', row.adapter, score.worst[0].key)}"
        return f"{page}#{anchor('adapter', row.adapter)}"

    def item_href(self, run_path: str, item: str, root: str) -> str | None:
        entry = self.site_run(run_path)
        if entry is None:
            return None
        name = next((i.name for i in entry.items if i.result.item_id == item and i.result.epoch <= 1), None)
        return f"{self.run_href(entry, root)}" + (f"#{anchor('item', name)}" if name else "")

    # -- what the pages list ----------------------------------------------------------------

    def frameworks(self) -> list[tuple[str, list[Row]]]:
        out: dict[str, list[Row]] = {}
        for row in self.m.rows:
            out.setdefault(row.framework or "none", []).append(row)
        return list(out.items())

    def runs_of(self, adapter: str) -> list[SiteRun]:
        return [r for r in self.runs.values() if r.run.adapter == adapter]

    def run_groups(self) -> list[tuple[str, list[SiteRun]]]:
        """Every run, by adapter (matrix row order, then any adapter only a run in progress has)."""
        order = [row.adapter for row in self.m.rows]
        order += sorted({r.run.adapter for r in self.runs.values()} - set(order))
        return [(a, runs) for a in order if (runs := self.runs_of(a))]

    def live_runs(self) -> list[SiteRun]:
        return [r for r in self.runs.values() if r.live]

    def short_cells(self, rows: list[Row], root: str) -> list[ShortCell]:
        """Every cell of these rows short of its pass, with the items that keep it there and how the same column
        reads for the other frameworks' plain rows."""
        others = [r for r in self.m.rows if r not in rows and AdapterLabel.parse(r.adapter).main]
        out = []
        for column in self.columns:
            for row in rows:
                cell = row.cells[column.key]
                if cell.status not in ("fail", "partial"):
                    continue
                items = [ShortItem(e.item, e.profile, e.note, self.item_href(e.run, e.item, root))
                         for e in cell.failing]
                out.append(ShortCell(row, column, cell, items, [(r.adapter, r.cells[column.key]) for r in others]))
        return out

    def fed_cells(self, entry: SiteRun) -> list[FedCell]:
        """The matrix cells a run is read into (none for a run the matrix does not read)."""
        if not entry.current:
            return []
        row = next((r for r in self.m.rows if r.adapter == entry.run.adapter), None)
        if row is None:
            return []
        names = {i.result.item_id: i.name for i in entry.items if i.result.epoch <= 1}
        out = []
        for column in self.columns:
            runs = self.cell_runs(row, column)
            if entry not in runs or column.kind == "declared":
                continue
            cell = row.cells[column.key]
            items = [(cell.short_of(e), e.item, e.note, anchor("item", names.get(e.item, e.item)))
                     for e in cell.evidence if e.run == str(entry.run.path)]
            out.append(FedCell(row, column, cell, items, [r for r in runs if r is not entry]))
        return out

    # -- pages ------------------------------------------------------------------------------

    def paths(self) -> Iterator[str]:
        """Every file of the site, relative to its root."""
        yield from ("site.css", "index.html", "matrix.html", "runs.html")
        for stem in self.framework_files.values():
            yield f"framework/{stem}.html"
        for entry in self.runs.values():
            yield f"run/{entry.slug}.html"
            for item in entry.items:
                yield f"trace/{entry.slug}/{item.name}.json"

    def render(self, path: str) -> tuple[bytes, str] | None:
        """The file at `path` (relative to the site's root) and its media type, or None: the site has none."""
        html = "text/html; charset=utf-8"
        if path in ("", "index.html"):
            return self._page("index.html.j2", "", card=self.card), html
        if path == "site.css":
            return site_css(), "text/css; charset=utf-8"
        if path == "matrix.html":
            return self._page("matrix.html.j2", "", repeated=self._repeated(), note=REPEATED_NOTE.strip()), html
        if path == "runs.html":
            return self._page("runs.html.j2", ""), html
        parts = path.split("/")
        if len(parts) == 2 and parts[0] == "framework" and parts[1].endswith(".html"):
            stem = parts[1][: -len(".html")]
            name = next((n for n, s in self.framework_files.items() if s == stem), None)
            if name is None:
                return None
            rows = [row for row in self.m.rows if (row.framework or "none") == name]
            card = [s for s in self.card if s.row in rows]
            return self._page("framework.html.j2", "../", framework=name, rows=rows, card=card,
                              short=self.short_cells(rows, "../")), html
        if len(parts) == 2 and parts[0] == "run" and parts[1].endswith(".html"):
            entry = self.runs.get(parts[1][: -len(".html")])
            if entry is None:
                return None
            return self._page("run.html.j2", "../", entry=entry, fed=self.fed_cells(entry)), html
        if len(parts) == 3 and parts[0] == "trace" and parts[2].endswith(".json"):
            entry = self.runs.get(parts[1])
            item = next((i for i in entry.items if f"{i.name}.json" == parts[2]), None) if entry else None
            return (trace_json(item.result), "application/json") if item else None
        return None

    def _page(self, template: str, root: str, **context: Any) -> bytes:
        return self.env.get_template(template).render(site=self, m=self.m, root=root, **context).encode()

    def _repeated(self) -> list[dict[str, Any]]:
        from arena.stats import interval, percent

        out = []
        for run, s in self.m.repeated():
            entry = self.site_run(str(run.path))
            out.append({"run": run, "entry": entry, "epochs": s.epochs, "pass_at_1": percent(s.pass_at_1),
                        "pass_hat_k": percent(s.pass_hat_k), "ci": interval(s.ci), "errored": s.errored,
                        "sometimes": ", ".join(f"{i} {s.items[i].passed}/{s.items[i].measured}" for i in s.sometimes)
                        or "-"})
        return out
