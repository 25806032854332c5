"""findings.md: the digest a framework's maintainer or an agent builder reads in five minutes.

The scorecard first (frameworks × semantic families, each cell the worst matrix cell of its family), then per
framework its findings short of a pass as sentences (what happened, in how many items, one trace that shows it),
then what was not measured and why, then what changes across releases and when streamed. Every sentence is
counted from the runs; the long form (every arena's own facts, every table) is `details.md` beside the matrix,
and every check's verdict is the verdict record (`reports/verdicts/`).
"""

from __future__ import annotations

import re
from pathlib import Path

from arena.report.archive import cell_name
from arena.report.columns import Cell, Column
from arena.report.facts import clip
from arena.report.matrix import Matrix, Row, run_order
from arena.report.render_md import md_link, md_text, printable
from arena.report.scorecard import ScoreCell, ScoreRow, families_present, family_of, scorecard
from arena.report.findings import (
    DEFAULT_COMMAND, changed_item, not_on_store_lines, unplanned_lines, cell_histories, could_not_run, release_groups,
    why_not_streamed_in,
)
from arena.run_id import AdapterLabel
from arena.streaming import is_streamed



def md_code(text: str) -> str:
    """Untrusted text (a reason quoting the model's arguments) shown literally and inert: one line in a code span,
    where Markdown renders no link, emphasis or HTML; a backtick inside becomes a quote so the span cannot end."""
    line = " ".join(printable(text).split()).replace("`", "'")
    return f"`{line}`" if line else ""


def scorecard_table(card: list[ScoreRow]) -> str:
    families = families_present(card)
    lines = ["| adapter | framework | " + " | ".join(f.title for f in families) + " |",
             "| --- | --- |" + " --- |" * len(families)]
    for row in card:
        cells = [md_text(row.cells[f.key].text) if f.key in row.cells else "" for f in families]
        lines.append(f"| `{md_text(row.adapter)}` | {md_text(row.row.framework)} {md_text(row.row.version or '')} | "
                     + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def families_legend(m: Matrix, card: list[ScoreRow]) -> str:
    lines = []
    for family in families_present(card):
        mine = [c for c in m.columns if c.kind != "declared" and family_of(c) == family.key]
        if family.key in ("stores", "upgrades"):  # the same columns again, on a store or across an upgrade
            columns = f" (the columns of {', '.join(md_text(a) for a in dict.fromkeys(c.arena for c in mine))})"
        else:
            titles = list(dict.fromkeys(c.title for c in mine))
            columns = f" (columns: {', '.join(md_text(t) for t in titles)})" if titles else ""
        lines.append(f"- **{family.title}**: {md_text(family.question)}{columns}")
    return "\n".join(lines) + "\n"


def _short(column: Column, cell: Cell) -> str:
    """"3 of 12 items fell short (human_in_the_loop × scripted-eager)": a fault count counts its faults."""
    failing = len(cell.failing)
    profiles = sorted({e.profile for e in cell.failing if e.profile}) or list(column.profiles)
    where = f"{md_text(column.arena)} × {', '.join(f'`{md_text(p)}`' for p in profiles)}"
    if column.kind == "measured":
        return f"{md_text(column.title)} {md_text(cell.text)}: {failing} of {cell.total} items did not stay paused ({where})"
    what = "the fault happened in" if column.lower_is_better else "fell short in"
    return f"{md_text(column.title)}: {what} {failing} of {cell.total} items ({where})"


def family_sentence(sc: ScoreCell, doc_dir: Path | None) -> str | None:
    """One line for a family short of its pass: its worst cell in words with one trace, then the others short."""
    if sc.status not in ("fail", "partial"):
        return None
    if sc.worst is None:  # streaming: told from the streamed row, not one column
        return f"- **{sc.family.title}**: {md_text(sc.text.split(': ', 1)[-1])}."
    column, cell = sc.worst
    sentence = f"- **{sc.family.title}**: {_short(column, cell)}"
    example = next(iter(cell.failing), None)
    if example is not None:
        note = f": {md_code(clip(example.note, 120))}" if example.note else ""
        sentence += f"; e.g. {md_link(example.item, example.trace, doc_dir)}{note}"
    others = [f"{md_text(c.title)} {md_text(x.text)}" for c, x in sc.cells
              if (c, x) != sc.worst and x.status in ("fail", "partial")]
    if others:
        sentence += f". Also short: {'; '.join(others)}"
    return sentence + "."


def framework_section(score: ScoreRow, doc_dir: Path | None) -> str:
    row = score.row
    head = f"### `{md_text(row.adapter)}` ({md_text(row.framework)} {md_text(row.version or '-')})\n"
    declared = (f"Declared (the adapter's word, not evidence): pause kind {md_text(row.pause_kind)}; "
                f"{md_text(clip(row.mechanism, 160))}.\n")
    lines = [s for sc in score.cells.values() if (s := family_sentence(sc, doc_dir)) is not None]
    passed = [sc.family.title for sc in score.cells.values() if sc.status == "pass"]
    unrun = [sc.family.title for sc in score.cells.values() if sc.status in ("notrun", "na")]
    tail = []
    if passed:
        tail.append(f"Every cell passed in: {', '.join(passed)}.")
    if unrun:
        tail.append(f"Not measured or not applicable: {', '.join(unrun)}.")
    return head + "\n" + declared + "\n" + ("\n".join(lines) + "\n\n" if lines else "") + " ".join(tail) + "\n"


def not_measured_section(m: Matrix) -> str:
    """Items an arena left out of a run (the adapter lacks the channel), cells without a run, arenas not run."""
    by_reason: dict[str, tuple[dict[str, None], dict[str, None]]] = {}  # reason → (arenas, adapters), in order
    for run in m.runs:
        if not AdapterLabel.parse(run.adapter).main:
            continue
        for reason in sorted(set(map(str, (run.meta.get("not_measured") or {}).values()))):
            general = reason.replace(f"{run.adapter}'s ", "its ").replace(f"{run.adapter} ", "it ")
            arenas, adapters = by_reason.setdefault(clip(general, 160), ({}, {}))
            arenas[run.arena] = None
            adapters[run.adapter] = None
    rows = [r.adapter for r in m.rows]  # adapters and arenas in report order, whatever order the runs were made in
    lines = [f"- {', '.join(map(md_text, sorted(arenas, key=lambda a: run_order((a, '')))))}: {md_text(reason)}: "
             + ", ".join(f"`{md_text(a)}`" for a in sorted(adapters, key=rows.index))
             for reason, (arenas, adapters) in sorted(by_reason.items())]
    lines += unplanned_lines(m) + not_on_store_lines(m)
    why = why_not_streamed_in(m)
    if why:
        lines.append("- not streamed (declared): " + "; ".join(f"`{md_text(a)}` ({md_text(clip(r, 140))})"
                                                           for a, r in why.items()))
    if m.missing:
        lines.append("- missing cells (planned, but no merged shard delivered them): "
                     + "; ".join(md_text(x.text()) for x in m.missing))
    incomplete = sorted(r.path.name for r in m.runs if not r.complete)
    if incomplete:
        lines.append("- incomplete run directories (interrupted): " + ", ".join(map(md_text, incomplete)))
    return "\n".join(lines) + "\n" if lines else "Everything planned was measured.\n"


def releases_lines(m: Matrix, doc_dir: Path | None) -> str:
    """Per adapter with older releases: the cells that changed at a release, one line each."""
    lines = []
    for base, rows in release_groups(m).items():
        ran = [r for r in rows if could_not_run(r) is None]
        histories = cell_histories(m, rows)
        changed = [h for h in histories if h.changes]
        releases = ", ".join(md_text(r.version or "?") for r in ran)
        unrun = "".join(f" {md_text(r.version or '?')} could not be run." for r in rows if could_not_run(r))
        if not changed:
            lines.append(f"- `{md_text(base)}` ({releases}):{unrun} no cell differs ({len(histories)} cells).")
            continue
        parts = []
        for h in changed:
            earlier = {id(r): h.values[i - 1][0] for i, (r, _) in enumerate(h.values) if i}
            steps = "; ".join(f"{md_text(r.version or '?')}: {md_text(a)} → {md_text(b)}"
                              f"{changed_item(r, earlier[id(r)], h.column.key, doc_dir)}" for r, a, b in h.changes)
            parts.append(f"  - {md_text(h.column.title)} ({md_text(h.column.arena)}): {steps}")
        lines.append(f"- `{md_text(base)}` ({releases}):{unrun} {len(changed)} of {len(histories)} cells changed:\n"
                     + "\n".join(parts))
    return "\n".join(lines) + "\n" if lines else ""


def streams_lines(card: list[ScoreRow], m: Matrix, doc_dir: Path | None) -> str:
    """Per adapter streamed: whether its stream told what ran and whether any cell differs from its plain run."""
    from arena.checking import STREAM_CHECK

    rows = {r.adapter: r for r in m.rows}
    lines, clean = [], []
    for score in card:
        sc = score.cells.get("streaming")
        streamed = rows.get(f"{score.adapter} (streamed)")
        if sc is None or streamed is None:
            continue
        if sc.status == "pass":
            clean.append(f"`{md_text(score.adapter)}`")
            continue
        wrong = [(run, r, c) for run in streamed.runs for r in run.results for c in r.checks
                 if c.name == STREAM_CHECK and not c.passed]
        line = f"- `{md_text(score.adapter)}`: {md_text(sc.text)}"
        if wrong:
            run, r, c = wrong[0]
            line += (f"; e.g. {md_link(r.item_id, run.trace_path(r.item_id), doc_dir)} "
                     f"({md_text(run.arena)}): {md_code(clip(c.reason, 140))}")
        plain = score.row
        differ = [c for c in m.columns if "notrun" not in (plain.cells[c.key].status, streamed.cells[c.key].status)
                  and plain.cells[c.key].text != streamed.cells[c.key].text]
        if differ:
            first = differ[0]
            line += (f"; first cell that differs: {md_text(first.title)} ({md_text(first.arena)}): plain "
                     f"{md_text(plain.cells[first.key].text)}, streamed {md_text(streamed.cells[first.key].text)}")
        lines.append(line + ".")
    if clean:
        lines.append(f"- the same as plain, and the stream told what ran in every item: {', '.join(clean)}.")
    return "\n".join(lines) + "\n" if lines else ""


def _what_was_run(m: Matrix) -> str:
    plain = [r for r in m.rows if AdapterLabel.parse(r.adapter).main]
    streamed = [r for r in m.rows if is_streamed(r.adapter)]
    releases = [r.adapter for r in m.rows if (label := AdapterLabel.parse(r.adapter)).release and not label.streamed]
    arenas = list(m.arena_profiles())
    items = sum(len(run.results) for run in m.runs)
    text = (f"{len(m.runs)} run directories, {items} items: {len(arenas)} arenas and scopes "
            f"({', '.join(md_text(a) for a in arenas)}) on {len(plain)} adapters (each framework's installed release)")
    if streamed:
        text += f", {len(streamed)} streamed rows"
    if releases:
        text += f", and {len(releases)} older releases ({', '.join(f'`{md_text(a)}`' for a in releases)})"
    return text + "."


def render_digest(m: Matrix, doc_dir: Path | None = None, command: str = DEFAULT_COMMAND,
                  evidence: str | None = None) -> str:
    """The digest; `evidence`, the name of the archive of these runs (`arena matrix --archive`), if it was packed: its
    links then name each run directory by its cell, as the archive does."""
    card = scorecard(m, why_not_streamed_in(m))
    archive = f"`{evidence}`" if evidence else "the evidence archive of these runs"
    parts = [
        "# Findings\n",
        "Generated from real runs; do not edit by hand. One command regenerates the run directories, the evidence "
        "archive, the verdict record, the reports and this file:\n\n"
        f"```bash\nuv run {command}\n```\n",
        _what_was_run(m) + " Every check's verdict and reason is in the verdict record (`reports/verdicts/`, in git). "
        f"The traces linked below are in {archive} (named by its content), or in the evidence archive of any run "
        "with the same verdicts (CI's artifact, a release's asset: an archive names each run directory by its cell): "
        f"`uv run arena matrix --runs {evidence or 'evidence-<hash>.tar.gz'} --out reports` unpacks it into `reports/`, "
        "and they resolve. Every column of the matrix: `reports/matrix.md`, `reports/details.md`, or the site "
        "(`uv run arena view`).\n",
        "## Scorecard\n",
        "One row per adapter (its framework's installed release, run plain); one column per family of questions. "
        "Each cell is the worst matrix cell of its family, named: `pass` means every cell of the family passed; "
        "`fail: X n/N` is the column that fell furthest short, and `(+k more)` counts the family's other cells short "
        "of their pass (for a fault count, such as a tool body re-executed, n counts the items where the fault happened); "
        "`n/a`, no item of the family applies; `not run`, not measured (see below).\n",
        scorecard_table(card),
        families_legend(m, card),
        "## By framework\n",
        "What fell short, family by family, with one trace that shows it (the item named, why it fell short).\n",
        *(framework_section(score, doc_dir) for score in card),
        "## Not measured, and why\n",
        not_measured_section(m),
    ]
    releases = releases_lines(m, doc_dir)
    if releases:
        parts += ["## Across releases\n",
                  "The same adapter against older releases of its framework (`arena matrix --versions`), oldest first: "
                  "each cell that changed, at which release, with an item whose outcome changed there.\n",
                  releases]
    streams = streams_lines(card, m, doc_dir)
    if streams:
        parts += ["## Streamed\n",
                  "Each adapter driven through its framework's streaming API (`--stream`): whether what the stream "
                  "told matched what ran (`stream_matches_run`), and whether any cell differs from the plain run.\n",
                  streams]
    text = "\n".join(parts)
    return _links_by_cell(text) if evidence else text


_EVIDENCE_LINK = re.compile(r"(\]\([^)\s]*?)(\d{8}-\d{6}-[^/)\s]+-[0-9a-f]{4})(/traces/)")


def _links_by_cell(text: str) -> str:
    """Evidence links in the archive's layout: each run directory named by its cell (`archive.cell_name`), so they
    resolve in the unpacked archive of any run of this matrix, not only of the one that wrote this file."""
    return _EVIDENCE_LINK.sub(lambda m: m.group(1) + cell_name(m.group(2)) + m.group(3), text)
