"""Rendering, on hand-made runs: Markdown tables and the findings (the HTML pages are the site's: tests/site)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from arena.report import write_reports
from arena.report.findings import render_details
from arena.report.matrix import compute_matrix
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
                        "delegate reported outcome | nested pause durable | run context on resume | "
                        "conversation after an approval |")
    # no flight_booking, doc_review, resume_safety, crash_recovery, interruptions, delegation, run_context or follow_up
    # run here
    flights = " | not run" * 43
    stores = " | not run" * 3  # durable_state on PostgreSQL, on Redis, across an upgrade
    assert lines[2] == "| `vanilla` | emulated | enforced | 2/2 | 2/2 | 1/1 | 1/1 | not run" + stores + " | not run" + flights + " |"
    assert lines[3] == "| `langgraph` | native | enforced | 2/2 | 0/2 | 1/1 | 1/1 | not run" + stores + " | 1/1" + flights + " |"
    assert lines[4] == ("| `evil\\|adapter` | native | none | 0/2 | not run | n/a | n/a | not run" + stores + " | not run"
                        + flights + " |")
    assert all(line.count(" | ") == 54 for line in lines)  # the escaped pipe does not add a column


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
    # the site's run page marks them too: tests/site/test_site.py


def test_findings_tables_are_the_matrix_tables_byte_for_byte():
    m = compute_matrix(sample_runs())
    findings, matrix_md = render_details(m), render_matrix_md(m)
    ft, mt = tables_in(findings), tables_in(matrix_md)
    assert len(ft) == 2 and all(t in mt for t in ft)
    assert matrix_table(m) in ft


def test_findings_state_observed_facts_with_evidence():
    m = compute_matrix(sample_runs())
    text = render_details(m, doc_dir=Path.cwd())
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
    text = render_details(compute_matrix(sample_runs())) + render_matrix_md(compute_matrix(sample_runs()))
    assert "\\<script\\>document\\.title" in text  # quoted, every markup character escaped
    assert not re.search(r"(?<!\\)<", text)  # no unescaped "<" anywhere: no HTML reaches a Markdown renderer
    assert md_quote("<b>x</b> [a](b)") == "\\<b\\>x\\<\\/b\\> \\[a\\]\\(b\\)"


# The HTML pages (escaping, self-contained, cells linking to their evidence, framework pages) are the site's:
# tests/site/test_site.py and tests/site/test_browser_site.py.


def test_write_reports(tmp_path):
    m = compute_matrix(sample_runs())
    paths = write_reports(m, tmp_path / "out", tmp_path / "findings.md")
    assert {"matrix.md", "matrix.json", "findings.md", "index.html"} <= {p.name for p in paths.values()}
    assert paths["site"] == tmp_path / "out" / "site" / "index.html" and not (tmp_path / "out" / "matrix.html").exists()
    data = json.loads(paths["json"].read_text())
    assert [r["adapter"] for r in data["rows"]] == ["vanilla", "langgraph", "evil|adapter"]
    assert data["rows"][1]["cells"]["sibling_held"]["n"] == 0 and data["rows"][1]["cells"]["sibling_held"]["total"] == 2
