"""The matrix as one self-contained HTML page: colour-coded table, pass-rate chart, per-item drill-down.

No network assets: the CSS, the few lines of script and the chart (SVG) are inline. Every string
that comes from a run (model text, tool arguments and results, check reasons, adapter metadata)
goes through `html.escape`, so a final answer containing markup shows as text and never runs.
"""

from __future__ import annotations

import json
import re
from html import escape

from arena.report.columns import Column
from arena.report.matrix import Cell, Matrix, Row, Run
from arena.results import ItemResult
from arena.streaming import is_streamed
from arena.types import TraceEvent


def esc(value: object) -> str:
    """HTML-escaped, with control characters (terminal escapes, bells) shown as U+FFFD."""
    from arena.report.render_md import printable

    return escape(printable(str(value)), quote=True)


def prose(text: str) -> str:
    """Escaped text with `code` spans shown as <code>."""
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", esc(text))


def slug(*parts: str) -> str:
    return "-".join(re.sub(r"[^A-Za-z0-9_]+", "_", p) for p in parts)


def item_anchor(adapter: str, run: Run, item: str) -> str:
    return slug("item", adapter, run.arena, run.model, item)


def run_anchor(adapter: str, run: Run) -> str:
    return slug("run", adapter, run.arena, run.model)


CSS = """
:root { --pass:#b9e4c0; --partial:#ffe08a; --fail:#f8b4b4; --na:#e5e7eb; --notrun:#f3f4f6; --info:#dbeafe;
        --ink:#1f2937; --muted:#6b7280; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--ink);
       margin: 0 auto; padding: 24px 32px; max-width: 1400px; background: #fff; }
h1 { font-size: 24px; margin: 0 0 4px; } h2 { font-size: 18px; margin: 28px 0 10px; }
h4 { margin: 14px 0 4px; font-size: 14px; }
p.sub, .muted { color: var(--muted); }
table { border-collapse: collapse; }
table.matrix th, table.matrix td { border: 1px solid #d1d5db; padding: 7px 10px; text-align: center; }
table.matrix th { background: #f9fafb; font-weight: 600; vertical-align: bottom; }
table.matrix th small { display: block; font-weight: 400; color: var(--muted); font-size: 11px; }
table.matrix td small { display: block; font-size: 11px; color: var(--muted); white-space: normal; }
table.matrix td.adapter { text-align: left; font-family: ui-monospace, monospace; font-weight: 600; }
table.matrix th.arena { background: #eef2f7; font-size: 13px; text-align: left; }
table.matrix .first { border-left: 3px solid #6b7280; }
table.matrix td.adapter a.fw { display: block; font-weight: 400; font-size: 11px; color: var(--muted); }
div.scroll { overflow-x: auto; max-width: 100%; }
table.matrix td.adapter, table.matrix tr.arenas th:first-child { position: sticky; left: 0; z-index: 1; }
table.matrix td.adapter { background: #fff; }
@media (max-width: 700px) { body { padding: 12px; } .evidence ul { columns: 1; } }
td.s-pass { background: var(--pass); } td.s-partial { background: var(--partial); }
td.s-fail { background: var(--fail); } td.s-na { background: var(--na); color: var(--muted); }
td.s-notrun { background: var(--notrun); color: var(--muted); font-style: italic; }
td.s-info { background: var(--info); }
table.matrix td a { color: inherit; text-decoration: none; display: block; font-weight: 600; }
table.matrix td a:hover { text-decoration: underline; }
.legend span { display: inline-block; padding: 2px 8px; margin-right: 6px; border-radius: 3px; font-size: 12px; }
ul.deriv { color: var(--muted); font-size: 13px; padding-left: 18px; }
details { margin: 6px 0; }
details > summary { cursor: pointer; }
details.adapter { border: 1px solid #d1d5db; border-radius: 6px; padding: 8px 12px; }
details.adapter > summary { font-size: 15px; font-weight: 600; }
details.run { margin-left: 10px; } details.item { margin-left: 22px; }
.evidence { margin: 6px 0 10px 10px; padding: 4px 10px; border-left: 4px solid #d1d5db; }
.evidence ul { margin: 2px 0; padding-left: 18px; columns: 2; }
li.ok::marker { content: "✓ "; color: #2f9e44; } li.bad::marker { content: "✗ "; color: #e03131; }
table.trace, table.checks { margin: 6px 0 10px; font-size: 12.5px; width: 100%; }
table.trace th, table.trace td, table.checks th, table.checks td { border: 1px solid #e5e7eb; padding: 3px 6px;
  text-align: left; vertical-align: top; }
table.checks td:first-child { width: 24%; } table.checks td:nth-child(2) { width: 7%; white-space: nowrap; }
table.trace td.detail { font-family: ui-monospace, monospace; white-space: pre-wrap; word-break: break-word; }
tr.t-suspended td { background: #fff7d6; } tr.t-resumed td { background: #e7f0ff; }
tr.t-final td { background: #eefbf0; } tr.t-error td { background: #fdecec; }
tr.t-model_call td { color: #445; background: #f7f7fb; }
.badge { display: inline-block; padding: 0 6px; border-radius: 3px; font-size: 12px; font-weight: 600; }
.b-passed { background: var(--pass); } .b-failed { background: var(--fail); } .b-errored { background: #fca5a5; }
:target { outline: 3px solid #3b82f6; outline-offset: 2px; }
code { font-family: ui-monospace, monospace; font-size: 12.5px; }
"""

SCRIPT = """
(function () {
  function reveal(id) {
    var el = id && document.getElementById(id);
    if (!el) return;
    for (var p = el; p; p = p.parentElement) { if (p.tagName === 'DETAILS') p.open = true; }
    el.scrollIntoView({block: 'start'});
  }
  function fromHash() { reveal(decodeURIComponent(location.hash.slice(1))); }
  window.addEventListener('hashchange', fromHash);
  document.addEventListener('DOMContentLoaded', function () {
    fromHash();
    var all = document.querySelectorAll('details');
    document.getElementById('expand').addEventListener('click', function () { all.forEach(function (d) { d.open = true; }); });
    document.getElementById('collapse').addEventListener('click', function () { all.forEach(function (d) { d.open = false; }); });
  });
})();
"""

BAR = {"pass": "#2f9e44", "partial": "#f59f00", "fail": "#e03131"}


def _cell_html(row: Row, key: str, cell: Cell, first: bool = False, base: str = "") -> str:
    title = esc(cell.note or ("; ".join(f"{e.item}: {e.note}" for e in cell.failing[:3])))
    if cell.status == "notrun":
        inner = esc(cell.text)
    elif cell.status == "info" and not cell.evidence:  # declared: the adapter's own account
        inner = f'<a href="{base}#{slug("adapter", row.adapter)}">{esc(cell.text)}</a>'
    else:
        inner = f'<a href="{base}#{slug("ev", row.adapter, key)}">{esc(cell.text)}</a>'
    if cell.repeated is not None:  # with --epochs: the cell over every epoch, under its first epoch's count
        inner += f"<small>{esc(cell.repeated_text())}</small>"
    return f'<td class="s-{cell.status}{" first" if first else ""}" title="{title}">{inner}</td>'


def framework_page(framework: str) -> str:
    """The file name of a framework's own page, beside matrix.html."""
    return f"{slug('framework', framework or 'none')}.html"


def _groups(m: Matrix) -> list[tuple[str, int]]:
    """The columns' arenas in order, each with how many columns it has (they are contiguous)."""
    out: list[tuple[str, int]] = []
    for c in m.columns:
        if out and out[-1][0] == c.arena:
            out[-1] = (c.arena, out[-1][1] + 1)
        else:
            out.append((c.arena, 1))
    return out


def matrix_table(m: Matrix, rows: list[Row] | None = None, pages: bool = True, base: str = "") -> str:
    """The colour-coded table, its columns grouped under their arena; each row links to its drill-down (in the
    page `base`, this one by default) and, with `pages`, to its framework's page."""
    starts = {c.key for i, c in enumerate(m.columns) if i == 0 or m.columns[i - 1].arena != c.arena}
    groups = "".join(f'<th class="arena first" colspan="{n}">{esc(arena)}</th>' for arena, n in _groups(m))
    head = "".join(
        f'<th class="{"first" if c.key in starts else ""}" title="{esc(c.derivation)}">{esc(c.title)}'
        f'<small>{esc(" / ".join(c.profiles))}</small></th>'
        for c in m.columns
    )
    body = []
    for row in m.rows if rows is None else rows:
        cells = "".join(_cell_html(row, c.key, row.cells[c.key], c.key in starts, base) for c in m.columns)
        page = (f'<a class="fw" href="{esc(framework_page(row.framework))}" title="{esc(row.framework)}: its page">'
                f'{esc(row.framework)} ›</a>' if pages else "")
        body.append(f'<tr><td class="adapter">{page}<a href="{base}#{slug("adapter", row.adapter)}">{esc(row.adapter)}</a></td>{cells}</tr>')
    return (f'<div class="scroll"><table class="matrix" id="matrix-table"><thead><tr class="arenas"><th rowspan="2">adapter</th>'
            f'{groups}</tr><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table></div>')


def chart(m: Matrix) -> str:
    """Horizontal bars: items passed / items, one bar per (adapter, arena × model) run."""
    keys = m.run_keys
    row_h, gap, top = 18, 12, 26
    height = top + sum(len([k for k in keys if row.run(*k)]) * row_h + gap for row in m.rows) + 4
    x_label, x_run, x_bar, bar_w = 0, 170, 430, 360
    out = [f'<svg id="pass-chart" width="{x_bar + bar_w + 90}" height="{height}" '
           f'role="img" aria-label="items passed per adapter and run" font-family="system-ui, sans-serif" font-size="12">',
           f'<text x="{x_bar}" y="14" fill="#6b7280">items passed (0–100%)</text>']
    y = top
    for row in m.rows:
        runs = [r for k in keys if (r := row.run(*k))]
        out.append(f'<text x="{x_label}" y="{y + 13}" font-weight="600">{esc(row.adapter)}</text>')
        for run in runs:
            n, total = sum(x.status == "passed" for x in run.results), len(run.results)
            rate = n / total if total else 0.0
            status = "pass" if total and n == total else ("fail" if n == 0 else "partial")
            out.append(f'<a href="#{run_anchor(row.adapter, run)}"><text x="{x_run}" y="{y + 13}" fill="#374151">'
                       f'{esc(run.label)}</text></a>')
            out.append(f'<rect x="{x_bar}" y="{y + 2}" width="{bar_w}" height="{row_h - 5}" fill="#eef0f3"/>')
            if rate:
                out.append(f'<rect class="bar-{status}" x="{x_bar}" y="{y + 2}" width="{bar_w * rate:.1f}" '
                           f'height="{row_h - 5}" fill="{BAR[status]}"><title>{esc(row.adapter)} {esc(run.label)}: '
                           f'{n}/{total}</title></rect>')
            out.append(f'<text x="{x_bar + bar_w + 8}" y="{y + 13}">{n}/{total}</text>')
            y += row_h
        y += gap
    out.append("</svg>")
    return "".join(out)


def repeated_html(m: Matrix) -> str:
    """Runs of several epochs: pass@1, pass^k and the CI (empty when there are none)."""
    from arena.report.render_md import REPEATED_NOTE
    from arena.stats import interval, percent

    rows = []
    for r, s in m.repeated():
        sometimes = ", ".join(f"{item} {s.items[item].passed}/{s.items[item].measured}" for item in s.sometimes)
        cells = [r.arena, r.model, r.adapter, s.epochs, percent(s.pass_at_1), percent(s.pass_hat_k), interval(s.ci),
                 s.errored, sometimes or "-"]
        rows.append("<tr>" + "".join(f"<td>{esc(c)}</td>" for c in cells)
                    + f'<td><a href="#{run_anchor(r.adapter, r)}">{esc(r.path.name)}</a></td></tr>')
    if not rows:
        return ""
    head = "".join(f"<th>{h}</th>" for h in ("arena", "model", "adapter", "epochs", "pass@1", "pass^k", "95% CI",
                                             "errored", "passed sometimes", "run"))
    return (f'<h2>Repeated runs</h2><p class="muted">{prose(REPEATED_NOTE.strip())}</p>'
            f'<table class="matrix" id="repeated-table"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table>')


def _event_detail(e: TraceEvent) -> str:
    parts = []
    if e.args is not None:
        parts.append("args " + json.dumps(e.args, ensure_ascii=False))
    if e.result is not None:
        parts.append("result " + e.result)
    if e.decision is not None:
        parts.append(f"decision {e.decision.kind.value}" + (f": {e.decision.text}" if e.decision.text else ""))
    for d in e.decisions or []:
        parts.append(f"decision for {d.call_id or 'no call'} {d.kind.value}" + (f": {d.text}" if d.text else "")
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
    return esc("\n".join(parts))


def item_html(row: Row, run: Run, r: ItemResult) -> str:
    checks = "".join(
        f'<tr><td><code>{esc(c.name)}</code></td><td>{"✓ pass" if c.passed else "✗ fail"}</td><td>{esc(c.reason)}</td></tr>'
        for c in r.checks
    )
    events = "".join(
        f'<tr class="t-{esc(e.type)}"><td>{e.seq}</td><td>{e.leg}</td><td>{esc(e.type)}</td><td>{esc(e.tool or "")}</td>'
        f'<td class="detail">{_event_detail(e)}</td></tr>'
        for e in r.trace
    )
    error = f'<p>error: <code>{esc(r.error)}</code></p>' if r.error else ""
    trace_file = esc(run.trace_path(r.item_id))
    return (
        f'<details class="item" id="{item_anchor(row.adapter, run, r.item_id)}"><summary><code>{esc(r.item_id)}</code> '
        f'<span class="badge b-{esc(r.status)}">{esc(r.status)}</span> <span class="muted">{r.legs} leg(s), '
        f'{r.duration_s:.2f}s</span></summary>{error}'
        f'<table class="checks"><thead><tr><th>check</th><th>result</th><th>reason</th></tr></thead><tbody>{checks}</tbody></table>'
        f'<table class="trace"><thead><tr><th>seq</th><th>leg</th><th>event</th><th>tool</th><th>detail</th></tr></thead>'
        f'<tbody>{events}</tbody></table><p class="muted">trace file: <code>{trace_file}</code></p></details>'
    )


def evidence_html(m: Matrix, row: Row) -> str:
    out = []
    for c in m.columns:
        cell = row.cells[c.key]
        if cell.status == "info" and not cell.evidence:
            continue
        if c.kind == "measured":
            out.append(f'<div class="evidence" id="{slug("ev", row.adapter, c.key)}"><h4>{esc(c.title)}: {esc(cell.text)}</h4>'
                       f'<p class="muted">{esc(c.arena)} × {esc(" / ".join(c.profiles))}: {prose(c.derivation)}. '
                       f'The items are those of <a href="#{slug("ev", row.adapter, "pause_enforced")}">pause enforced</a>.'
                       f'</p>{f"<p class=muted>{esc(cell.note)}</p>" if cell.note else ""}</div>')
            continue
        items = []
        for e in cell.evidence:
            run = next((r for r in row.runs if str(r.path) == e.run), None)
            href = f"#{item_anchor(row.adapter, run, e.item)}" if run else "#"
            profile = f' <span class="muted">({esc(e.profile)})</span>' if len(c.profiles) > 1 else ""
            items.append(f'<li class="{"bad" if cell.short_of(e) else "ok"}"><a href="{href}">{esc(e.item)}</a>{profile} — {esc(e.note)}</li>')
        note = f"<p class=\"muted\">{esc(cell.note)}</p>" if cell.note else ""
        out.append(
            f'<div class="evidence" id="{slug("ev", row.adapter, c.key)}"><h4>{esc(c.title)}: {esc(cell.text)}</h4>'
            f'<p class="muted">{esc(c.arena)} × {esc(" / ".join(c.profiles))}: {prose(c.derivation)}</p>{note}'
            + (f"<ul>{''.join(items)}</ul>" if items else "") + "</div>"
        )
    return "".join(out)


def adapter_html(m: Matrix, row: Row) -> str:
    runs = []
    for run in row.runs:
        n = sum(x.status == "passed" for x in run.results)
        items = "".join(item_html(row, run, r) for r in run.results)
        runs.append(
            f'<details class="run" id="{run_anchor(row.adapter, run)}"><summary>{esc(run.label)} — {n}/{len(run.results)} '
            f'items passed <span class="muted">({esc(run.path)})</span></summary>{items}</details>'
        )
    caps = row.capabilities
    caps_text = ", ".join(f"{k}={v}" for k, v in caps.items() if k != "notes") + (f"; {caps['notes']}" if caps.get("notes") else "")
    return (
        f'<details class="adapter" id="{slug("adapter", row.adapter)}"><summary>{esc(row.adapter)} '
        f'<span class="muted">— {esc(row.framework)} {esc(row.version)} — declared {esc(row.pause_kind)}</span></summary>'
        f'<p><b>pause mechanism:</b> {esc(row.mechanism)}</p><p><b>capabilities:</b> {esc(caps_text or "-")}</p>'
        f'<h4>Evidence per column</h4>{evidence_html(m, row)}<h4>Runs</h4>{"".join(runs)}</details>'
    )


def _plural(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def missing_html(m: Matrix) -> str:
    """The planned cells no shard delivered, before the matrix (none: nothing)."""
    if not m.missing:
        return ""
    items = "".join(f"<li>{esc(x.text())}</li>" for x in m.missing)
    return (f"<h2>Missing cells ({len(m.missing)})</h2><p>Planned, but no merged run directory has them: the shard "
            f"that owned them failed or was not merged.</p><ul class=\"missing\">{items}</ul>")


def render_matrix_html(m: Matrix) -> str:
    legend = "".join(f'<span class="legend-item" style="background:var(--{s})">{label}</span>' for s, label in
                     (("pass", "all n/N"), ("partial", "some"), ("fail", "none"), ("na", "n/a"), ("notrun", "not run"),
                      ("info", "declared")))
    derivations = "".join(f"<li><b>{esc(c.title)}</b> ({esc(c.arena)} × {esc(' / '.join(c.profiles))}): "
                          f"{prose(c.derivation)}</li>" for c in m.columns)
    adapters = "".join(adapter_html(m, row) for row in m.rows)
    return (
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
        f"<title>arena feature matrix</title><style>{CSS}</style></head><body>"
        "<h1>arena feature matrix</h1>"
        f"<p class=\"sub\">{_plural(len(m.rows), 'adapter', 'adapters')}, "
        f"{_plural(len(m.runs), 'run directory', 'run directories')}. Every cell is derived from the "
        "harness's own traces and check results; click a cell for the items behind it.</p>"
        f"{missing_html(m)}"
        f"<h2>Matrix</h2><p class=\"legend\">{legend}</p>{matrix_table(m)}<ul class=\"deriv\">{derivations}</ul>"
        f"<h2>Pass rates</h2>{chart(m)}{repeated_html(m)}"
        "<h2>Drill-down</h2><p><button id=\"expand\" type=\"button\">expand all</button> "
        "<button id=\"collapse\" type=\"button\">collapse all</button></p>"
        f"{adapters}<script>{SCRIPT}</script></body></html>\n"
    )


def frameworks(m: Matrix) -> list[str]:
    """The frameworks of the matrix's rows, in row order."""
    return list(dict.fromkeys(row.framework for row in m.rows))


def _elsewhere(m: Matrix, column: Column, mine: list[Row]) -> str:
    """How the same column reads for the other frameworks' installed, plain rows."""
    others = [r for r in m.rows if r not in mine and "@" not in r.adapter and not is_streamed(r.adapter)]
    return " · ".join(f'<span class="cellchip s-{r.cells[column.key].status}">{esc(r.adapter)} '
                      f'{esc(r.cells[column.key].text)}</span>' for r in others)


def render_framework_html(m: Matrix, framework: str) -> str:
    """A framework's own page: its rows (adapters, releases, streamed runs) over every arena, each cell short of
    its pass with the items behind it and their traces, and how that column reads for the other frameworks."""
    mine = [row for row in m.rows if row.framework == framework]
    shown: set[str] = set()  # an item short of several cells: its trace inline once, linked from the others
    short = []
    for column in m.columns:
        for row in mine:
            cell = row.cells[column.key]
            if cell.status not in ("fail", "partial"):
                continue
            items = []
            for e in cell.evidence:
                if not cell.short_of(e):
                    continue
                run = next((r for r in row.runs if str(r.path) == e.run), None)
                result = next((x for x in run.results if x.item_id == e.item), None) if run else None
                profile = f' <span class="muted">({esc(e.profile)})</span>' if e.profile else ""
                anchor = item_anchor(row.adapter, run, e.item) if run else ""
                if not (run and result):
                    trace = ""
                elif anchor in shown:
                    trace = f' <a href="#{anchor}">(its trace, above)</a>'
                else:
                    shown.add(anchor)
                    trace = item_html(row, run, result)
                items.append(f'<li class="bad"><code>{esc(e.item)}</code>{profile} — {esc(e.note)}{trace}</li>')
            short.append(
                f'<div class="evidence" id="{slug("short", row.adapter, column.key)}"><h4>{esc(row.adapter)} · '
                f'{esc(column.title)}: {esc(cell.text)} <span class="muted">({esc(column.arena)})</span></h4>'
                f'<p class="muted">{prose(column.derivation)}</p><ul class="short">{"".join(items)}</ul>'
                f'<p class="muted">elsewhere: {_elsewhere(m, column, mine)}</p></div>')
    versions = ", ".join(f"{esc(row.adapter)} ({esc(row.version)})" for row in mine)
    return (
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
        f"<title>{esc(framework)}: arena</title><style>{CSS}"
        ".cellchip { display: inline-block; padding: 0 5px; border-radius: 3px; margin: 1px 0; font-size: 12px; }"
        ".cellchip.s-pass { background: var(--pass); } .cellchip.s-partial { background: var(--partial); }"
        ".cellchip.s-fail { background: var(--fail); } .cellchip.s-na, .cellchip.s-notrun { background: var(--na); }"
        ".cellchip.s-info { background: var(--info); } ul.short { padding-left: 18px; } ul.short details { margin-left: 0; }"
        "</style></head><body>"
        f"<p><a href=\"matrix.html\">‹ the whole matrix</a></p><h1>{esc(framework)}</h1>"
        f"<p class=\"sub\">{_plural(len(mine), 'row', 'rows')}: {versions}. Each cell is derived from the harness's "
        "own traces; below the table, every cell short of its pass with the items behind it, their traces, and the "
        "same column for the other frameworks.</p>"
        f"<h2>Cells</h2>{matrix_table(m, mine, pages=False, base='matrix.html')}"
        f"<h2>Short of their pass ({len(short)})</h2>"
        + ("".join(short) if short else "<p>Every cell of these rows is at its pass, n/a, declared or not run.</p>")
        + "</body></html>\n"
    )
