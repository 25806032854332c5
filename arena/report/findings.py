"""details.md, the long form of the findings: what was run, versions, the model, and per-framework coverage,
stated from observed facts. findings.md is the digest of the same matrix (arena/report/digest.py).

Every sentence below the summary is generated from counts over the traces, and each points at one
trace that shows it. The tables are the ones in matrix.md, byte for byte (`render_md`). Which
sentences a run gets is its arena's business (`ArenaSpec.facts`, per profile); a run without its
own gets the generic ones.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena import catalog
from arena.report.columns import Column
from arena.report.facts import Fact, clip, ids, of
from arena.report.matrix import Matrix, Row, Run, arena_order, declared_profiles
from arena.report.render_md import adapters_table, legend, matrix_table, md_link, md_quote, md_text
from arena.results import ItemResult
from arena.run_id import AdapterLabel, ArenaLabel
from arena.streaming import is_streamed, plain_label, why_not_streamed

# the one command that regenerates everything: the run directories, the evidence archive, the reports, findings.md
DEFAULT_COMMAND = ("arena matrix --versions --stream --store postgres --store redis --jobs 3 --out reports "
                   "--findings findings.md --archive evidence")


def declared_line(row: Row) -> str:
    """What the adapter says about itself (meta.json), kept apart from what was observed."""
    caps = row.capabilities
    flags = ", ".join(f"{k}={'true' if v else 'false'}" for k, v in caps.items() if isinstance(v, bool))
    notes = md_text(caps.get("notes") or "").rstrip(".")
    notes = f" {notes}." if notes else ""
    other: dict[tuple[str, str, str], list[str]] = {}
    for run in row.runs:
        kind, mechanism = str(run.meta.get("pause_kind")), str(run.meta.get("pause_mechanism"))
        if (kind, mechanism) != (row.pause_kind, row.mechanism):
            other.setdefault((run.arena, kind, mechanism), []).append(run.model)
    extra = "".join(f" In {md_text(arena)} ({', '.join(f'`{md_text(p)}`' for p in models)}): declared "
                    f"{md_text(kind)} ({md_text(mechanism)})." for (arena, kind, mechanism), models in other.items())
    body = next((run.meta for run in row.runs if _has_body_pause(run.arena) and run.meta.get("body_pause")), None)
    if body is not None:
        how = body.get("body_pause_mechanism") or "gated before the call instead"
        extra += f" Pause inside a tool's body: {md_text(body['body_pause'])} ({md_text(how)})."
    return (f"Declared (meta.json, not evidence): pause kind {md_text(row.pause_kind)}; capabilities "
            f"{flags or 'not given'}.{notes}{extra}\n")


def _has_body_pause(arena: str) -> bool:
    spec = catalog.arena_of(arena)
    return spec is not None and any(t.body_pause for t in spec.tools)


def generic_facts(row: Row, run: Run) -> list[Fact]:
    results, n = run.results, len(run.results)
    passed = of(results, lambda r: r.status == "passed")
    facts = [Fact(f"{md_text(run.arena)} × `{md_text(run.model)}`: {len(passed)}/{n} items passed",
                  run, (passed or results)[0].item_id if results else None)]
    failed = [r for r in results if r.status != "passed"]
    if failed:
        first = failed[0]
        why = first.error or "; ".join(f"{c.name}: {c.reason}" for c in first.checks if not c.passed)
        facts.append(Fact(f"{md_text(run.arena)} × `{md_text(run.model)}`: not passed: {ids(failed)}; "
                          f"first ({md_text(first.item_id)}): "
                          f"{md_quote(clip(why, 200))}",
                          run, first.item_id))
    return facts


def adapter_facts(row: Row) -> list[Fact]:
    facts: list[Fact] = []
    for run in row.runs:
        spec = catalog.arena_of(run.arena)
        own = spec.facts.get(run.model) if spec is not None else None
        facts += (own or generic_facts)(row, run)
        unmeasured = run.meta.get("not_measured") or {}
        if unmeasured:  # left out of the run by the arena (ArenaSpec.unmeasured): said, never counted
            reasons = "; ".join(sorted(set(map(str, unmeasured.values()))))
            facts.append(Fact(f"{md_text(run.arena)} × `{md_text(run.model)}`: not measured on "
                              f"{', '.join(map(md_text, unmeasured))}: {md_text(reasons)}"))
    return facts


def _evidence_of(row: Row, key: str, ok: bool, doc_dir: Path | None) -> str:
    ev = next((e for e in row.cells[key].evidence if e.ok == ok), None)
    if ev is None:
        return ""
    return f" (evidence: {md_link(f'{Path(ev.run).name}/traces/{ev.item}.jsonl', ev.trace, doc_dir)})"


def coverage_summary(m: Matrix, doc_dir: Path | None = None) -> str:
    """Who pauses, read from the matrix's `measured_kind` and `pause_enforced` columns (if an arena has them)."""
    measured = next((c for c in m.columns if c.key == "measured_kind"), None)
    if measured is None or not any(c.key == "pause_enforced" for c in m.columns):
        return ""
    where = f"{measured.arena} × {' / '.join(f'`{p}`' for p in measured.profiles)}"
    own = [r for r in m.rows if AdapterLabel.parse(r.adapter).main]  # releases: 5, streamed: 6
    enforced = [r for r in own if r.cells["measured_kind"].text == "enforced"]
    runs = [r for r in own if r.cells["measured_kind"].status != "notrun"]
    lines = []
    if runs:
        totals = {r.cells["pause_enforced"].text for r in enforced}
        mechanisms = {r.mechanism for r in enforced}
        lines.append(f"{len(enforced)} of {len(runs)} adapters pause {', '.join(sorted(totals)) or 'in every item'} "
                     f"on {where}"
                     + (f", by {len(mechanisms)} different mechanism{'s' if len(mechanisms) != 1 else ''}:" if enforced else "."))
        lines += [f"- `{md_text(r.adapter)}` ({md_text(r.pause_kind)}): {md_text(r.mechanism)}"
                  f"{_evidence_of(r, 'pause_enforced', True, doc_dir)}" for r in enforced]
        others = [r for r in runs if r not in enforced]
        if others:
            lines.append("")
            lines.append("Not enforced:")
            lines += [f"- `{md_text(r.adapter)}` (declared {md_text(r.pause_kind)}, measured "
                      f"{r.cells['measured_kind'].text}, pause enforced {r.cells['pause_enforced'].text}): "
                      f"{md_text(r.mechanism)}{_evidence_of(r, 'pause_enforced', False, doc_dir)}" for r in others]
    return "\n".join(lines) + "\n"


def why_not_streamed_in(m: Matrix) -> dict[str, str]:
    """Per plain adapter of a streamed matrix without a streamed row, the reason its adapter declares (the scorecard
    shows "not streamed" with it rather than "not run")."""
    streamed = {plain_label(r.adapter) for r in m.rows if is_streamed(r.adapter)}
    if not streamed:  # a matrix run without --stream says nothing about streaming
        return {}
    out = {}
    for row in m.rows:
        if not AdapterLabel.parse(row.adapter).main or row.adapter in streamed:
            continue
        entry = catalog.adapters().get(row.adapter)
        why = why_not_streamed(entry.load().info) if entry is not None else None
        if why is not None:
            out[row.adapter] = why
    return out


def _release_key(row: Row) -> tuple[int, Any]:
    from packaging.version import InvalidVersion, Version

    try:
        return (0, Version(row.version))
    except InvalidVersion:
        return (1, Version("0"))


@dataclass
class CellHistory:
    """One cell over the releases of one adapter, oldest first: its value now, the first release of the run of
    releases that has had it since, and every release where it changed (before, after)."""

    column: Column
    values: list[tuple[Row, str]]  # (the release's row, its cell's text), releases that ran the cell only
    since: Row
    changes: list[tuple[Row, str, str]]

    @property
    def now(self) -> str:
        return self.values[-1][1]


def release_groups(m: Matrix, streamed: bool = False) -> dict[str, list[Row]]:
    """The matrix's plain rows (with `streamed`, its streamed rows instead) by adapter, each adapter's releases oldest
    first (`adapter@version` and the installed `adapter`, the newest); frameworks from source are left out."""
    from arena.versions import is_source

    groups: dict[str, list[Row]] = {}
    for row in m.rows:
        if (label := AdapterLabel.parse(row.adapter)).streamed != streamed or is_source(label.release):
            continue
        groups.setdefault(label.name, []).append(row)
    return {base: sorted(rows, key=_release_key) for base, rows in groups.items() if len(rows) > 1}


def could_not_run(row: Row) -> str | None:
    """Why the adapter could not drive this release at all (every item of every run ended in an error in its first
    leg, as when a release predates an API the adapter calls), or None: such a release has no history to show. An
    item that was paused and resumed was driven, whatever its error: a release whose every resume pauses again
    (openai-agents 0.19.4 ignoring an approval given with a context) is a measurement, not a release arena cannot
    run."""
    results = [r for run in row.runs for r in run.results]
    if not results or not all(r.error for r in results) or any(r.legs > 1 for r in results):
        return None
    return clip(results[0].error or "", 160)


def cell_histories(m: Matrix, rows: list[Row]) -> list[CellHistory]:
    """Every measured cell's history over these releases (oldest first); a release that did not run it, or that
    the adapter could not drive at all (`could_not_run`), is skipped."""
    rows = [r for r in rows if could_not_run(r) is None]
    out = []
    for column in m.columns:
        values = [(r, r.cells[column.key].text) for r in rows if r.cells[column.key].status != "notrun"]
        if not values:
            continue
        since = values[-1][0]
        for row, text in reversed(values):
            if text != values[-1][1]:
                break
            since = row
        changes = [(values[i][0], values[i - 1][1], values[i][1]) for i in range(1, len(values))
                   if values[i][1] != values[i - 1][1]]
        out.append(CellHistory(column, values, since, changes))
    return out


def history_table(m: Matrix, rows: list[Row], doc_dir: Path | None = None, every: bool = False) -> str:
    """A markdown table of the cells' histories: now, since which release, and each release where it changed
    (with an item that counts in one and not the other). Only the cells that changed, unless `every`."""
    lines = ["| cell | arena | now | since | changed at |", "| --- | --- | --- | --- | --- |"]
    for h in cell_histories(m, rows):
        if not h.changes and not every:
            continue
        earlier = {id(r): h.values[i - 1][0] for i, (r, _) in enumerate(h.values) if i}
        changed = "; ".join(f"{md_text(r.version or '?')}: {md_text(before)} → {md_text(after)}"
                            f"{changed_item(r, earlier[id(r)], h.column.key, doc_dir)}"
                            for r, before, after in h.changes) or "never"
        lines.append(f"| {md_text(h.column.title)} | {md_text(h.column.arena)} | {md_text(h.now)} | "
                     f"{md_text(h.since.version or '?')} | {changed} |")
    return "\n".join(lines) + "\n"


def releases_section(m: Matrix, doc_dir: Path | None = None) -> str:
    """Each adapter's cells across its releases: the cells that changed, with the release they changed at and
    an item whose outcome changed; the others, the same in every release."""
    lines = []
    for base, rows in release_groups(m).items():
        newest = rows[-1]
        releases = ", ".join(md_text(r.version or "?") for r in rows if could_not_run(r) is None)
        histories = cell_histories(m, rows)
        changed = [h for h in histories if h.changes]
        unrun = "".join(f" {md_text(r.version or '?')} could not be run ({md_quote(why)})." for r in rows
                        if (why := could_not_run(r)) is not None)
        head = f"- `{md_text(base)}` ({md_text(newest.framework)} {releases}):{unrun} "
        if not changed:
            since = next((r.version for r in rows if could_not_run(r) is None), None) or "?"
            lines.append(head + f"no cell differs ({len(histories)} cells, the same since {md_text(since)}).")
            continue
        lines.append(head + f"{len(changed)} of {len(histories)} cells changed; every other cell is the same in every "
                     "release:\n\n" + "\n".join("  " + line for line in history_table(m, rows, doc_dir).splitlines()))
    if not lines:
        return ""
    return ("Rows `adapter@version` are the same adapter run against an older release of its framework, in an "
            "environment of its own (`arena matrix --versions`, or the last six minor releases with `arena matrix "
            "--history ADAPTER`; arena/versions.py). Per adapter, oldest release first: each cell that changed, "
            "its value now, the release since which it has had it, and every release where it changed, with an "
            "item whose outcome changed there:\n\n" + "\n".join(lines) + "\n")


def changed_item(row: Row, other: Row, key: str, doc_dir: Path | None) -> str:
    """An item that counts in one of the two releases' cells and not in the other's, linked to its trace in `row`."""
    if row is other:
        return ""
    theirs = {e.item: e.ok for e in other.cells[key].evidence}
    ev = next((e for e in row.cells[key].evidence if e.item in theirs and theirs[e.item] != e.ok), None)
    if ev is None:
        return ""
    return f" ({md_link(f'{ev.item}', ev.trace, doc_dir)} {'counts' if ev.ok else 'does not count'})"


def unplanned_lines(m: Matrix) -> list[str]:
    ran = {(r.arena, r.model) for r in m.runs}
    out = []
    for arena in dict.fromkeys(c.arena for c in m.columns):
        missing = [p for p in declared_profiles(arena) if (arena, p) not in ran]
        if catalog.arena_of(arena) is None:
            out.append(f"- not run: {arena} (the arena does not exist in this checkout)")
        elif missing:
            out.append(f"- not run: {arena} × {', '.join(missing)} (not in these run directories)")
    return out


def not_on_store_lines(m: Matrix) -> list[str]:
    """For each arena run on a server store: the adapters of the matrix that have no run there, and why (what the
    adapter declares for that store, or why the arena does not run it): not measured, never run on SQLite instead."""
    from arena.stores import unscoped, why_not_kept
    from arena.versions import is_versioned

    out = []
    registry = catalog.adapters()
    for scope in sorted({r.arena for r in m.runs if unscoped(r.arena)[1] != "sqlite"}, key=arena_order):
        arena, kind = unscoped(scope)
        spec = catalog.arena_of(arena)
        ran = {r.adapter for r in m.runs if r.arena == scope}
        why: dict[str, str] = {}
        for row in m.rows:
            name = row.adapter
            if name in ran or is_streamed(name) or is_versioned(name) or name not in registry:
                continue
            try:
                info = registry[name].load().info
            except Exception:  # noqa: BLE001 - an adapter that cannot load here is not stated about
                continue
            reason = why_not_kept(info, kind) or (spec.declined(info) if spec is not None else None)
            if reason:
                why[name] = reason
        if why:
            out.append(f"- not measured on {md_text(scope)}: " + "; ".join(
                f"`{md_text(n)}` ({md_text(clip(r, 160))})" for n, r in why.items()))
    return out


def _scripted(run: Run) -> bool:
    gateway = run.meta.get("model_gateway")
    return gateway == "scripted" if gateway else run.meta.get("base_url") == "loopback (scripted)"


def model_section(m: Matrix) -> str:
    """The models the runs used: each arena's scripted profiles as its policy describes them, or endpoints."""
    endpoints = sorted({"loopback (scripted)" if _scripted(r) else str(r.meta.get("base_url", "?")) for r in m.runs})
    lines = [f"Endpoint: {', '.join(md_text(e) for e in endpoints)}. Each arena's scripted model is a deterministic "
             "policy (the arena's `policy.py`) that decides only from the conversation it is sent; it echoes a deny "
             "reason or an approve note in its final answer when the framework passes it back. Whether a decision "
             "reached the model is not read from that echo but from what the harness's model gateway recorded the "
             "model being sent after the resume; the final answer is the model's own last answer as the gateway "
             "served it. Profiles, as each arena's policy describes them:\n"]
    for arena, models in m.arena_profiles().items():
        if ArenaLabel.parse(arena).scope:  # the arena again on a store or across an upgrade: the same profiles, described once
            continue
        spec = catalog.arena_of(arena)
        described = dict(spec.profile_notes) if spec is not None else {}
        scripted = [p for p in models if any(_scripted(r) for r in m.runs if r.arena == arena and r.model == p)]
        lines += [f"- {md_text(arena)} × `{md_text(p)}`: {md_text(described.get(p, 'no description'))}" for p in scripted]
    return "\n".join(lines) + "\n"


def render_details(m: Matrix, doc_dir: Path | None = None, command: str = DEFAULT_COMMAND) -> str:
    """details.md: every table of matrix.md and every arena's own facts per adapter, each with its trace."""
    what = []
    for arena, models in m.arena_profiles().items():
        adapters = sorted({r.adapter for r in m.runs if r.arena == arena}, key=[row.adapter for row in m.rows].index)
        items = sorted({len(r.results) for r in m.runs if r.arena == arena})
        what.append(f"- {md_text(arena)} ({'/'.join(map(str, items))} items) × "
                    f"{', '.join(f'`{md_text(p)}`' for p in models)} on "
                    f"{len(adapters)} adapters: {', '.join(f'`{md_text(a)}`' for a in adapters)}")
    what += unplanned_lines(m)
    what += not_on_store_lines(m)
    if m.missing:
        what.append(f"- missing cells (planned, but no merged shard delivered them): "
                    + "; ".join(md_text(x.text()) for x in m.missing))
    incomplete = [r for r in m.runs if not r.complete]
    if incomplete:
        what.append("- incomplete run directories (interrupted): "
                    + ", ".join(md_text(r.path.name) for r in incomplete))

    parts = [
        "# Findings in detail\n",
        f"Generated; do not edit by hand (findings.md is its digest). Regenerate (runs every arena × adapter × "
        f"model profile, writes the run directories, the reports and this file) with one command:\n\n"
        f"```bash\nuv run {command}\n```\n",
        "## 1. What was run\n",
        "\n".join(what) + "\n",
        f"{len(m.runs)} run directories; each claim below links to the trace that shows it.\n",
        "## 2. Versions\n",
        adapters_table(m),
        "## 3. Model\n",
        model_section(m),
        "## 4. Adapter coverage\n",
        coverage_summary(m, doc_dir),
        matrix_table(m),
        legend(m),
    ]
    for row in m.rows:
        if not AdapterLabel.parse(row.adapter).main:  # an older release: section 5; a streamed run: 6
            continue
        parts.append(f"### `{md_text(row.adapter)}` ({md_text(row.framework)} {md_text(row.version or '-')})\n")
        parts.append(declared_line(row))
        parts.append("\n".join(f.render(doc_dir) for f in adapter_facts(row)) + "\n")
    releases = releases_section(m, doc_dir)
    if releases:
        parts += ["## 5. Across releases\n", releases]
    streams = streams_section(m, doc_dir)
    if streams:
        parts += ["## 6. Streamed runs\n", streams]
    return "\n".join(parts)


def _items_by_cell(found: list[tuple[Run, ItemResult, Any]]) -> str:
    """Item ids grouped by the cell (arena x profile) they ran in: the same id runs once per profile."""
    cells: dict[str, list[str]] = {}
    for run, r, _ in found:
        cells.setdefault(f"{run.meta.get('arena')} × {run.meta.get('model')}", []).append(md_text(r.item_id))
    return "; ".join(f"{cell}: {', '.join(ids)}" for cell, ids in cells.items())


def _flipped_checks(row: Row, plain: Row, doc_dir: Path | None) -> str:
    """Items of a streamed row whose checks (other than the stream's own) came out otherwise than in the plain
    run of the same cell, each with the checks that flipped: a change no column of the matrix may show. An item
    whose two resumes raced (`raced`) is not compared: its outcome may differ between two runs of one mode."""
    from arena.checks import STREAM_CHECK
    from arena.observed import raced

    theirs = {(run.meta.get("arena"), run.meta.get("model"), r.item_id): {c.name: c.passed for c in r.checks}
              for run in plain.runs for r in run.results}
    out = []
    for run in row.runs:
        for r in run.results:
            before = theirs.get((run.meta.get("arena"), run.meta.get("model"), r.item_id))
            if before is None or raced(r.trace):
                continue
            flips = [f"{c.name} {'passed' if before[c.name] else 'failed'} plain, {'passed' if c.passed else 'failed'} "
                     f"streamed" for c in r.checks if c.name != STREAM_CHECK and c.name in before and before[c.name] != c.passed]
            if flips:
                error = f", the streamed item ended in {md_quote(clip(r.error.split(':')[0], 60))}" if r.error else ""
                out.append(f"{md_link(r.item_id, run.path / 'traces' / f'{r.item_id}.jsonl', doc_dir)} "
                           f"({md_text(str(run.meta.get('arena')))} × {md_text(str(run.meta.get('model')))}: "
                           f"{md_text('; '.join(flips))}{error})")
    return ", ".join(out)


def streams_section(m: Matrix, doc_dir: Path | None = None) -> str:
    """Each adapter's streamed run beside its plain one: every cell where streaming changes the result, with the
    items whose outcome differs; whether what the stream told matched what ran; the adapters not streamed, and why."""
    from arena.checks import STREAM_CHECK

    rows = {row.adapter: row for row in m.rows}
    streamed = [row for row in m.rows if is_streamed(row.adapter)]
    if not streamed:
        return ""
    lines = []
    for row in streamed:
        plain = rows.get(plain_label(row.adapter))
        name = f"`{md_text(row.adapter)}`"
        checked = [(run, r, c) for run in row.runs for r in run.results for c in r.checks if c.name == STREAM_CHECK]
        false = [(run, r, c) for run, r, c in checked if not c.passed]
        if false:
            run, r, c = false[0]
            told = (f"what the stream told did not match what ran in {len(false)}/{len(checked)} items "
                    f"({_items_by_cell(false)}); first: {md_quote(clip(c.reason, 200))} "
                    f"({md_link(r.item_id, run.path / 'traces' / f'{r.item_id}.jsonl', doc_dir)})")
        else:
            told = f"what the stream told matched what ran in {len(checked)}/{len(checked)} items"
        if plain is None:
            lines.append(f"- {name}: no plain run to compare with; {told}.")
            continue
        differ = [c for c in m.columns if "notrun" not in (row.cells[c.key].status, plain.cells[c.key].status)
                  and row.cells[c.key].text != plain.cells[c.key].text]
        if not differ:
            flipped = _flipped_checks(row, plain, doc_dir)
            lines.append(f"- {name}: no cell differs from `{md_text(plain.adapter)}`'s; {told}"
                         + (f"; items whose checks differ where no cell shows it: {flipped}." if flipped else "."))
            continue
        lines.append(f"- {name}: {len(differ)} cell{'s differ' if len(differ) != 1 else ' differs'} from "
                     f"`{md_text(plain.adapter)}`'s; {told}:")
        for col in differ:
            theirs = {e.item: e.ok for e in plain.cells[col.key].evidence}
            changed = [e for e in row.cells[col.key].evidence if e.item in theirs and theirs[e.item] != e.ok]
            items = ", ".join(md_link(e.item, e.trace, doc_dir) + (" counts" if e.ok else " does not count")
                              for e in changed)
            lines.append(f"  - {md_text(col.title)} ({md_text(col.arena)}): plain {md_text(plain.cells[col.key].text)}, "
                         f"streamed {md_text(row.cells[col.key].text)}" + (f"; {items}" if items else ""))
    unstreamed = [f"`{md_text(adapter)}` ({md_text(why)})" for adapter, why in why_not_streamed_in(m).items()]
    if unstreamed:
        lines.append("- Not streamed (declared): " + "; ".join(unstreamed) + ".")
    return ("Rows `adapter (streamed)` are the same adapter with every leg driven through its framework's streaming "
            "API and the stream read to its end (`arena matrix --stream`); what the stream told (tool calls, tool "
            "results, pauses) is recorded as the adapter reads it and checked against the harness's tool log "
            "(`stream_matches_run`). Older releases are run plain only.\n\n" + "\n".join(lines) + "\n")
