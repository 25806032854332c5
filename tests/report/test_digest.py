"""The scorecard and the digest (findings.md), on hand-made runs: the worst cell of each family, named; what fell
short with one trace; what was not measured; and untrusted text kept inert."""

from __future__ import annotations

import re

from arena.report.digest import md_code, render_digest
from arena.report.matrix import compute_matrix
from arena.report.scorecard import FAMILIES, family_of, scorecard
from arena import catalog

from .evil import FINAL, MECHANISM
from .test_render import HITL, HITL_APPROVED, sample_runs
from .helpers import item, run


def test_every_column_of_the_builtin_arenas_has_a_known_family():
    columns = [c for c in catalog.columns() if c.kind != "declared"]
    assert {family_of(c) for c in columns} <= {f.key for f in FAMILIES} - {"other"}
    assert family_of(next(c for c in columns if c.arena == "crash_recovery@redis")) == "stores"
    assert family_of(next(c for c in columns if c.arena == "durable_state@upgrade")) == "upgrades"
    assert len(FAMILIES) + 1 <= 12  # the adapter's own column and at most eleven families


def test_a_family_cell_is_its_worst_cell_named_and_pass_only_when_every_cell_passed():
    card = {r.adapter: r for r in scorecard(compute_matrix(sample_runs()))}
    assert set(card) == {"vanilla", "langgraph", "evil|adapter"}  # plain rows only
    assert card["vanilla"].cells["pause"].text == "pass"
    leaky = card["langgraph"].cells["pause"]  # pauses, yet the eager sibling ran before the pause
    assert leaky.status == "fail" and leaky.text.startswith("fail: sibling tool held 0/2")
    assert leaky.worst is not None and leaky.worst[0].key == "sibling_held"
    never = card["evil|adapter"].cells["pause"]
    assert never.status == "fail" and "(+" in never.text  # and more cells of the family short of their pass
    assert card["vanilla"].cells["durability"].text == "not run"


def test_the_streaming_family_reads_the_streamed_row_beside_its_plain_one():
    from .test_streamed import ARENA, EARLY, PAUSED, _stream

    plain = run(ARENA, "vanilla", "scripted", [item("hitl-01", PAUSED), item("hitl-02", PAUSED)])
    told_wrong = run(ARENA, "vanilla (streamed)", "scripted",
                     [item("hitl-01", {**PAUSED, **_stream()}), item("hitl-02", {**EARLY, **_stream(False)}, paused=False,
                                                                     write_after=True)], stream=True)
    (row,) = scorecard(compute_matrix([plain, told_wrong]))
    cell = row.cells["streaming"]
    assert cell.status == "partial" and "stream ≠ run in 1/2 items" in cell.text and re.search(r"cells? differs? from plain", cell.text)
    (row,) = scorecard(compute_matrix([plain]), {"vanilla": "no stream channel"})
    assert row.cells["streaming"].text == "not streamed" and row.cells["streaming"].note == "no stream channel"


def test_the_digest_puts_the_scorecard_first_and_each_shortfall_with_one_trace(tmp_path):
    m = compute_matrix(sample_runs())
    text = render_digest(m, doc_dir=tmp_path)
    assert text.index("## Scorecard") < text.index("## By framework") < text.index("## Not measured, and why")
    section = text.split("### `langgraph`")[1].split("###")[0]
    line = next(x for x in section.splitlines() if x.startswith("- **pause held**"))
    assert "sibling tool held: fell short in 2 of 2 items (human_in_the_loop × `scripted-eager`)" in line
    assert re.search(r"e\.g\. \[hitl-0[12]\]\([^)]*traces/hitl-0[12]\.jsonl\)", line)
    assert "Every cell passed in:" in text.split("### `vanilla`")[1].split("###")[0]


def test_untrusted_text_in_the_digest_is_inert():
    text = render_digest(compute_matrix(sample_runs()))
    assert "PWNED" in text  # the model's words and the adapter's claims are shown ...
    outside = re.sub(r"`[^`\n]*`", "", text)  # ... only inside code spans (or escaped), where Markdown runs nothing
    assert not re.search(r"(?<!\\)<", outside), "raw HTML outside a code span"
    assert md_code("a `b` <c>\x1b[31m") == "`a 'b' <c>\ufffd[31m`"
    assert FINAL not in text and MECHANISM not in text  # never verbatim: backticks, newlines, controls neutralised


def test_a_framework_without_shortfalls_reads_in_one_line():
    m = compute_matrix([run(HITL, "vanilla", "scripted", [item("hitl-01", HITL_APPROVED)])])
    section = render_digest(m).split("### `vanilla`")[1]
    assert "- **" not in section.split("## ")[0]


def test_with_an_archive_the_evidence_links_name_each_run_directory_by_its_cell(tmp_path):
    """Packed (`--archive`), the run directories are named by their cell: the digest's links say those names, so
    they resolve in the archive of any run of the same matrix, not only of the run that wrote the digest."""
    runs = sample_runs()
    for r in runs:
        r.path = tmp_path / "runs" / f"20261206-130936-{r.path.name}-bcd8"
    m = compute_matrix(runs)
    plain, packed = render_digest(m, doc_dir=tmp_path), render_digest(m, doc_dir=tmp_path, evidence="evidence-0123456789abcdef.tar.gz")
    assert "](runs/20261206-130936-human_in_the_loop-langgraph-scripted-eager-bcd8/traces/hitl-0" in plain
    assert "](runs/human_in_the_loop-langgraph-scripted-eager/traces/hitl-0" in packed
    assert not re.search(r"\]\([^)]*\d{8}-\d{6}-", packed) and "`evidence-0123456789abcdef.tar.gz`" in packed


def test_the_digest_does_not_depend_on_the_order_the_runs_were_made_in():
    """A matrix that runs its cells gives its runs in the order they finished; read back, in directory order: the
    digest CI compares with the committed one must be the same either way."""
    runs = sample_runs()
    assert render_digest(compute_matrix(runs)) == render_digest(compute_matrix(list(reversed(runs))))
