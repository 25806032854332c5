"""The release history page (`arena matrix --history ADAPTER`, history-ADAPTER.md): one adapter's cells across its
framework's releases, and at each boundary between two adjacent releases the items whose outcome changed and the
checks that changed with them.

A cell's value can stay the same while what it counts changes (one item fixed, another broken): the boundaries
list every item and check that differ, not only the cells, so a regression users reported shows by the item that
reproduces it. With `--stream` the streamed rows get the same page section of their own: a streamed-only
regression shows there.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from arena.report.findings import could_not_run, history_table, release_groups
from arena.report.render_md import md_link, md_text
from arena.report.matrix import Matrix, Row
from arena.results import ItemResult


@dataclass(frozen=True)
class ItemChange:
    """One item whose outcome differs between two adjacent releases: its status and the checks that changed."""

    arena: str
    profile: str
    item: str
    before: str  # its status in the older release
    after: str  # in the newer one
    checks: tuple[str, ...]  # "name: pass → FAIL" for each check whose verdict changed (or that one of them lacks)
    trace: Path  # the newer release's trace of it


def _verdicts(result: ItemResult) -> dict[str, bool]:
    return {c.name: c.passed for c in result.checks}


def _word(passed: bool | None) -> str:
    return "absent" if passed is None else "pass" if passed else "FAIL"


def boundary_changes(older: Row, newer: Row) -> list[ItemChange]:
    """Every item run by both releases (same arena, profile and item) whose status or a check's verdict differs."""
    theirs = {(run.arena, run.model, r.item_id): r for run in older.runs for r in run.results}
    changes = []
    for run in newer.runs:
        for result in run.results:
            before = theirs.get((run.arena, run.model, result.item_id))
            if before is None:
                continue
            old, new = _verdicts(before), _verdicts(result)
            flipped = tuple(f"{name}: {_word(old.get(name))} → {_word(new.get(name))}"
                            for name in dict.fromkeys([*old, *new]) if old.get(name) != new.get(name))
            if flipped or before.status != result.status:
                changes.append(ItemChange(run.arena, run.model, result.item_id, before.status, result.status, flipped,
                                          run.path / "traces" / f"{result.item_id}.jsonl"))
    return changes


def boundaries_section(rows: list[Row], doc_dir: Path | None = None) -> str:
    """Each boundary between adjacent releases that both ran (oldest first): the items and checks that changed, or
    that none did."""
    ran = [r for r in rows if could_not_run(r) is None]
    lines = []
    for older, newer in zip(ran, ran[1:]):
        changes = boundary_changes(older, newer)
        head = f"- {md_text(older.version or '?')} → {md_text(newer.version or '?')}:"
        if not changes:
            lines.append(f"{head} no item changed")
            continue
        lines.append(f"{head} {len(changes)} item(s) changed")
        for c in changes:
            status = f"{c.before} → {c.after}" if c.before != c.after else c.after
            checks = f"; {', '.join(c.checks)}" if c.checks else ""
            lines.append(f"  - {md_text(c.arena)} × {md_text(c.profile)}: {md_link(c.item, c.trace, doc_dir)} "
                         f"({md_text(status + checks)})")
    return "\n".join(lines) + "\n" if lines else ""


def history_page(m: Matrix, adapter: str, doc_dir: Path | None = None) -> str:
    """history-ADAPTER.md: the plain rows' history, then (when the matrix has them) the streamed rows'; each with
    its cells over the releases and its boundaries."""
    parts = []
    for streamed in (False, True):
        rows = release_groups(m, streamed).get(adapter, [])
        if streamed and not rows:
            continue
        unrun = "".join(f"- `{r.adapter}` could not be run: {why}\n" for r in rows if (why := could_not_run(r)))
        boundaries = boundaries_section(rows, doc_dir)
        parts.append(("## Streamed\n\n" if streamed else "")
                     + f"Oldest first: {', '.join(r.adapter for r in rows)}. Each cell's value now, the release since "
                       "which it has had it, and every release where it changed (a release that did not run a cell, or "
                       "that the adapter could not drive at all, is left out of its history).\n\n"
                     + (unrun + "\n" if unrun else "") + history_table(m, rows, doc_dir=doc_dir, every=True)
                     + ("\n### At each boundary\n\nThe items whose outcome changed between two adjacent releases, and "
                        "the checks that changed with them:\n\n" + boundaries if boundaries else ""))
    return f"# {adapter} across releases\n\n" + "\n".join(parts)
