"""Rendering, on hand-made runs: Markdown tables, findings.md, and the HTML page (escaping, no network assets)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from arena.report import write_reports
from arena.report.findings import render_findings
from arena.report.matrix import compute_matrix
from arena.report.render_html import render_matrix_html
from arena.report.render_md import matrix_table, md_quote, render_matrix_md, tables_in

from .evil import FINAL, MECHANISM, SUMMARY
from .helpers import APPROVE, DENY, item, run

HITL = "human_in_the_loop"
HITL_APPROVED = {"suspended": True, "no_tool_before_suspend": True, "tool_called_once_after_resume": True}
HITL_DENIED = {"suspended": True, "no_tool_before_suspend": True, "tool_not_used": True, "acknowledged": True}


def sample_runs():
    good = [item("hitl-01", HITL_APPROVED), item("hitl-02", HITL_DENIED, decision=DENY, final="denied (budget freeze)")]
    leaky = [item("hitl-01", {**HITL_APPROVED, "no_tool_before_suspend": False}, early_write=True, summary=SUMMARY),
             item("hitl-02", {**HITL_DENIED, "no_tool_before_suspend": False, "tool_not_used": False}, decision=DENY,
                  early_write=True, final="denied")]
    never = [item("hitl-01", {**HITL_APPROVED, "suspended": False, "no_tool_before_suspend": False,
                              "tool_called_once_after_resume": False}, paused=False, final=FINAL),
             item("hitl-02", {**HITL_DENIED, "suspended": False, "no_tool_before_suspend": False,
                              "acknowledged": False}, paused=False, final="ok")]
    return [
        run(HITL, "vanilla", "scripted", good, pause_kind="emulated"),
        run(HITL, "vanilla", "scripted-eager", good, pause_kind="emulated"),
        run(HITL, "langgraph", "scripted", good),
        run(HITL, "langgraph", "scripted-eager", leaky),
        run(HITL, "evil|adapter", "scripted", never, pause_mechanism=MECHANISM),
        run("approval_gate", "langgraph", "reckless", [item("gate-01", HITL_APPROVED, decision=APPROVE)]),
    ]


def test_markdown_matrix_table():
    m = compute_matrix(sample_runs())
    lines = matrix_table(m).splitlines()
    assert lines[0] == ("| adapter | declared kind | measured kind | pause enforced | sibling tool held | "
                        "denial reaches model | free text carried | durable across restart | durable on PostgreSQL | "
                        "durable on Redis | survives an upgrade | tool-level gate holds | "
                        "body pause (declared) | tool body re-executed on resume | charged once | "
                        "no charge without approval | stale approval refused | partial decisions applied per call | "
                        "edited arguments executed | decision routed by call id | malformed decision fails closed | "
                        "double resume runs once | stale resume refused | re-asked after a bare denial | "
                        "paid once after a crash (tool with an idempotency key) | "
                        "paid once after a crash (tool without an idempotency key) | recovered after a crash | "
                        "call id stable across a crash | "
                        "approved call run again after a crash | approval re-asked after a crash | "
                        "paid once after a crash (tool with an idempotency key) (PostgreSQL) | "
                        "paid once after a crash (tool without an idempotency key) (PostgreSQL) | "
                        "recovered after a crash (PostgreSQL) | "
                        "call id stable across a crash (PostgreSQL) | approved call run again after a crash (PostgreSQL) | "
                        "approval re-asked after a crash (PostgreSQL) | "
                        "paid once after a crash (tool with an idempotency key) (Redis) | "
                        "paid once after a crash (tool without an idempotency key) (Redis) | "
                        "recovered after a crash (Redis) | "
                        "call id stable across a crash (Redis) | approved call run again after a crash (Redis) | "
                        "approval re-asked after a crash (Redis) | "
                        "new message while paused | late approval runs the old call | clarified before acting | "
                        "always-approve scoped | input while paused seen | handoff: nothing committed | "
                        "nested pause enforced | nested decision routed | delegate re-run on resume | "
                        "delegate reported outcome | nested pause durable |")
    # no flight_booking, doc_review, resume_safety, crash_recovery, interruptions or delegation run here
    flights = " | not run" * 41
    stores = " | not run" * 3  # durable_state on PostgreSQL, on Redis, across an upgrade
    assert lines[2] == "| `vanilla` | emulated | enforced | 2/2 | 2/2 | 1/1 | 1/1 | not run" + stores + " | not run" + flights + " |"
    assert lines[3] == "| `langgraph` | native | enforced | 2/2 | 0/2 | 1/1 | 1/1 | not run" + stores + " | 1/1" + flights + " |"
    assert lines[4] == ("| `evil\\|adapter` | native | none | 0/2 | not run | n/a | n/a | not run" + stores + " | not run"
                        + flights + " |")
    assert all(line.count(" | ") == 52 for line in lines)  # the escaped pipe does not add a column


def test_failing_items_are_listed_with_links_to_their_traces(tmp_path):
    m = compute_matrix(sample_runs())
    text = render_matrix_md(m, doc_dir=Path("runs").resolve().parent)
    line = next(l for l in text.splitlines() if l.startswith("- `langgraph` · sibling tool held"))
    assert "(0/2): hitl-01, hitl-02 in [human_in_the_loop-langgraph-scripted-eager]" in line
    assert "(runs/human_in_the_loop-langgraph-scripted-eager/traces)" in line
    assert "- `evil\\|adapter` · denial reaches model: n/a, no deny decision was injected" in text


def test_a_fault_count_lists_and_marks_the_items_where_the_fault_happened():
    from .test_matrix import _prepared

    m = compute_matrix([run("flight_booking", "a", "careful", [_prepared("f1", 2), _prepared("f2", 1)])])
    line = next(l for l in render_matrix_md(m).splitlines() if l.startswith("- `a` · tool body re-executed on resume"))
    assert "(1/2): f1 in " in line and "f2" not in line
    marked = re.findall(r'<li class="(\w+)"><a href="[^"]*">(f\d)</a> — purchase_hold\.prepare ran', render_matrix_html(m))
    assert marked == [("bad", "f1"), ("ok", "f2")]


def test_findings_tables_are_the_matrix_tables_byte_for_byte():
    m = compute_matrix(sample_runs())
    findings, matrix_md = render_findings(m), render_matrix_md(m)
    ft, mt = tables_in(findings), tables_in(matrix_md)
    assert len(ft) == 2 and all(t in mt for t in ft)
    assert matrix_table(m) in ft


def test_findings_state_observed_facts_with_evidence():
    m = compute_matrix(sample_runs())
    text = render_findings(m, doc_dir=Path.cwd())
    section = text.split("### `langgraph`")[1].split("###")[0]
    assert ("with `scripted-eager`, the sibling `book_room` call executed before the pause in 2/2 items "
            "(evidence: [human_in_the_loop-langgraph-scripted-eager/traces/hitl-01.jsonl]"
            "(runs/human_in_the_loop-langgraph-scripted-eager/traces/hitl-01.jsonl))") in section
    assert ("deny reason carried: with `scripted`, the model's input after the resume contains the human's text "
            "in 1/1 denied items") in section
    evil = text.split("### `evil\\|adapter`")[1]
    assert "no suspended state was observed in 2/2 items (2 ran to a final answer in one leg)" in evil
    assert "§" not in text and "not run: durable_state × scripted" in text


def test_untrusted_text_is_inert_in_markdown():
    text = render_findings(compute_matrix(sample_runs())) + render_matrix_md(compute_matrix(sample_runs()))
    assert "\\<script\\>document\\.title" in text  # quoted, every markup character escaped
    assert not re.search(r"(?<!\\)<", text)  # no unescaped "<" anywhere: no HTML reaches a Markdown renderer
    assert md_quote("<b>x</b> [a](b)") == "\\<b\\>x\\<\\/b\\> \\[a\\]\\(b\\)"


def test_html_escapes_model_text_tool_args_and_adapter_metadata():
    page = render_matrix_html(compute_matrix(sample_runs()))
    assert "<script>document.title" not in page and "<img src=" not in page and "<b>bold</b>" not in page
    assert "&lt;script&gt;document.title=&#x27;PWNED&#x27;&lt;/script&gt;&lt;b&gt;bold&lt;/b&gt;" in page
    assert "&lt;script&gt;document.title=&#x27;PWNED-META&#x27;&lt;/script&gt;" in page
    assert page.count("<script>") == 1  # the page's own
    assert "&lt;img src=y onerror=" in page  # the pending request's arguments, from the trace
    assert SUMMARY not in page and FINAL not in page


def test_html_is_self_contained():
    page = render_matrix_html(compute_matrix(sample_runs()))
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:|//)""", page, re.IGNORECASE)
    assert "http://" not in page and "https://" not in page
    assert "@import" not in page and "url(" not in page and "<link" not in page
    assert "<svg" in page and "<style>" in page and 'id="matrix-table"' in page


def test_html_cells_link_to_their_evidence_and_items():
    page = render_matrix_html(compute_matrix(sample_runs()))
    ids = set(re.findall(r'id="([^"]+)"', page))
    hrefs = set(re.findall(r'href="#([^"]+)"', page))
    assert hrefs <= ids, hrefs - ids  # every anchor resolves
    assert "ev-langgraph-sibling_held" in hrefs
    evidence = page.split('id="ev-langgraph-sibling_held"')[1].split('<div class="evidence"')[0]
    assert 'href="#item-langgraph-human_in_the_loop-scripted_eager-hitl_01"' in evidence
    assert 'class="s-fail"' in page and 'class="s-pass"' in page and 'class="s-notrun"' in page


def test_write_reports(tmp_path):
    m = compute_matrix(sample_runs())
    paths = write_reports(m, tmp_path / "out", tmp_path / "findings.md")
    assert {p.name for p in paths.values()} == {"matrix.md", "matrix.html", "matrix.json", "findings.md",
                                               "framework-vanilla_fw.html", "framework-langgraph_fw.html",
                                               "framework-evil_adapter_fw.html"}
    data = json.loads(paths["json"].read_text())
    assert [r["adapter"] for r in data["rows"]] == ["vanilla", "langgraph", "evil|adapter"]
    assert data["rows"][1]["cells"]["sibling_held"]["n"] == 0 and data["rows"][1]["cells"]["sibling_held"]["total"] == 2


def test_the_matrix_groups_its_columns_by_arena_and_links_each_row_to_its_frameworks_page():
    page = render_matrix_html(compute_matrix(sample_runs()))
    head = page.split('<tr class="arenas">')[1].split("</tr>")[0]
    assert re.findall(r'<th class="arena first" colspan="(\d+)">([a-z_]+)</th>', head)[:2] == [
        ("6", "human_in_the_loop"), ("1", "durable_state")]
    assert '<a class="fw" href="framework-langgraph_fw.html"' in page


def test_a_framework_page_shows_its_rows_and_each_cell_short_of_its_pass_with_items_traces_and_the_others(tmp_path):
    """langgraph's page: its row only; sibling tool held (0/2) with both items, their traces inline, and how the
    column reads for the other frameworks; self-contained, every in-page anchor resolves, model text inert."""
    from arena.report.render_html import render_framework_html

    m = compute_matrix(sample_runs())
    page = render_framework_html(m, "langgraph-fw")
    table = page.split('id="matrix-table"')[1].split("</table>")[0]
    assert table.count('<td class="adapter">') == 1 and ">langgraph</a></td>" in table
    short = page.split('id="short-langgraph-sibling_held"')[1].split('<div class="evidence"')[0]
    assert "sibling tool held: 0/2" in short and short.count('<li class="bad">') == 2
    assert 'id="item-langgraph-human_in_the_loop-scripted_eager-hitl_01"' in short  # the trace, inline
    assert "elsewhere: " in short and ">vanilla 2/2</span>" in short and "evil|adapter" in short
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:|//)""", page) and "<script" not in page
    ids = set(re.findall(r'id="([^"]+)"', page))
    assert set(re.findall(r'href="#([^"]+)"', page)) <= ids
    assert set(re.findall(r'href="(matrix\.html)#', page)) == {"matrix.html"}  # the cells open the whole matrix
    assert FINAL not in render_framework_html(m, "evil|adapter-fw")  # escaped as in the matrix
    assert "Every cell of these rows is at its pass" in render_framework_html(m, "vanilla-fw")


def test_a_framework_page_gives_each_element_one_id_and_each_trace_once():
    """An item short of two cells (here sibling tool held and pause enforced) has its trace inline at the first,
    linked from the second: no id twice on the page."""
    from collections import Counter

    from arena.report.render_html import render_framework_html

    page = render_framework_html(compute_matrix(sample_runs()), "evil|adapter-fw")
    ids = Counter(re.findall(r'id="([^"]+)"', page))
    assert [k for k, n in ids.items() if n > 1] == []
    assert "(its trace, above)" in page
