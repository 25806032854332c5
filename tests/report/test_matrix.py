"""Each column of the feature matrix, computed from hand-made results: passing and failing cases."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from arena import catalog
from arena.report.matrix import collect_runs, compute_matrix, count_cell, declared_profiles
from arena.types import Decision

from .helpers import APPROVE, DENY, item, run, write_run

HITL = "human_in_the_loop"
NOTE = Decision(kind="approve", text="Bring A Projector")


def cell(runs, column: str, adapter: str = "a"):
    m = compute_matrix(runs)
    return next(r for r in m.rows if r.adapter == adapter).cells[column]


def test_count_cell_statuses():
    from arena.report.matrix import Evidence

    ev = lambda ok: Evidence(run="r", item="i", ok=ok, note="")  # noqa: E731
    assert (count_cell([ev(True), ev(True)]).text, count_cell([ev(True), ev(True)]).status) == ("2/2", "pass")
    assert (count_cell([ev(True), ev(False)]).text, count_cell([ev(True), ev(False)]).status) == ("1/2", "partial")
    assert count_cell([ev(False)]).status == "fail" and count_cell([ev(False)]).text == "0/1"
    empty = count_cell([], "nothing applies")
    assert (empty.text, empty.status, empty.note) == ("n/a", "na", "nothing applies")


def test_pause_enforced_counts_the_suspended_check_and_names_the_failures():
    results = [item("i1", {"suspended": True}), item("i2", {"suspended": False}), item("i3", {"suspended": True}),
               item("i4", {"tool_not_used": True})]  # no suspended check: does not apply
    c = cell([run(HITL, "a", "scripted", results)], "pause_enforced")
    assert (c.text, c.status, c.n, c.total) == ("2/3", "partial", 2, 3)
    assert [e.item for e in c.failing] == ["i2"]
    assert c.failing[0].trace.endswith("traces/i2.jsonl")


def test_pause_enforced_reads_only_the_scripted_run():
    eager = run(HITL, "a", "scripted-eager", [item("i1", {"suspended": False})])
    scripted = run(HITL, "a", "scripted", [item("i1", {"suspended": True})])
    assert cell([eager, scripted], "pause_enforced").text == "1/1"
    assert cell([eager], "pause_enforced").status == "notrun"


@pytest.mark.parametrize(
    "results, text, status",
    [
        ([item("i1", {"suspended": True}), item("i2", {"suspended": True})], "enforced", "pass"),
        ([item("i1", {"suspended": False}, paused=False), item("i2", {"suspended": False}, paused=False)], "none", "fail"),
        ([item("i1", {"suspended": True}), item("i2", {"suspended": False}, paused=False)], "partial 1/2", "partial"),
        # paused in every item, but too late (a write before the pause): not enforced, not "none" either
        ([item("i1", {"suspended": False}, early_write=True), item("i2", {"suspended": False})], "partial 0/2", "partial"),
    ],
)
def test_measured_kind(results, text, status):
    c = cell([run(HITL, "a", "scripted", results)], "measured_kind")
    assert (c.text, c.status) == (text, status)


def test_declared_kind_comes_from_meta():
    c = cell([run(HITL, "a", "scripted", [item("i1", {"suspended": True})], pause_kind="emulated")], "declared_kind")
    assert (c.text, c.status) == ("emulated", "info")


def test_sibling_held_needs_no_early_tool_and_for_denied_items_no_tool_at_all():
    results = [
        item("ok-approved", {"no_tool_before_suspend": True, "tool_called_once_after_resume": True}),
        item("ok-denied", {"no_tool_before_suspend": True, "tool_not_used": True}, decision=DENY),
        item("early", {"no_tool_before_suspend": False, "tool_not_used": False}, decision=DENY, early_write=True),
        item("after-deny", {"no_tool_before_suspend": True, "tool_not_used": False}, decision=DENY, write_after=True),
        # an approved item's tool_not_used is irrelevant (it is declared only for denied items, but even if present)
        item("approved-tnu", {"no_tool_before_suspend": True, "tool_not_used": False}),
    ]
    c = cell([run(HITL, "a", "scripted-eager", results)], "sibling_held")
    assert (c.text, c.status) == ("3/5", "partial")
    assert {e.item for e in c.failing} == {"early", "after-deny"}
    assert "after the denial" in next(e.note for e in c.failing if e.item == "after-deny")


def test_sibling_held_reads_only_the_eager_run():
    scripted = run(HITL, "a", "scripted", [item("i1", {"no_tool_before_suspend": False})])
    eager = run(HITL, "a", "scripted-eager", [item("i1", {"no_tool_before_suspend": True})])
    assert cell([scripted, eager], "sibling_held").text == "1/1"


def test_denial_reaches_is_read_from_the_models_input_after_the_resume():
    results = [
        item("d1", {"acknowledged": False}, decision=DENY),  # the model heard "DENIED: Budget Freeze"
        item("d2", {"acknowledged": True}, decision=DENY, heard="OK"),  # acknowledged, but never told
        item("d3", {}, decision=Decision(kind="deny"), heard="Error: Tool call invocation was rejected by user."),
        item("a1", {"acknowledged": False}, decision=APPROVE),  # approved: does not apply
        item("never", {"acknowledged": False}, paused=False),  # never resumed, so no denial was injected
    ]
    c = cell([run(HITL, "a", "scripted", results)], "denial_reaches")
    assert (c.text, c.status) == ("2/3", "partial")
    assert [e.item for e in c.failing] == ["d2"]
    assert "holds no denial" in c.failing[0].note
    assert "DENIED: Budget Freeze" in next(e.note for e in c.evidence if e.item == "d1")


def test_denial_reaches_is_na_when_no_denial_was_ever_injected():
    results = [item("n1", {"acknowledged": False}, paused=False), item("n2", {"acknowledged": False}, paused=False)]
    c = cell([run(HITL, "a", "scripted", results)], "denial_reaches")
    assert (c.text, c.status) == ("n/a", "na") and "no deny decision" in c.note


def test_free_text_carried_is_the_text_in_the_models_input_after_the_resume():
    results = [
        item("deny-heard", {}, decision=DENY),  # heard "DENIED: Budget Freeze"
        item("deny-lost", {}, decision=DENY, heard="DENIED", final="The booking was denied (budget freeze)."),
        item("note-heard", {}, decision=NOTE, heard="approved: BRING a   projector"),
        item("note-lost", {}, decision=NOTE, heard="APPROVED"),
        item("no-text", {}, decision=APPROVE),  # nothing to carry: does not apply
        item("no-final", {}, decision=DENY, final=None, error="timed out"),
    ]
    c = cell([run(HITL, "a", "scripted", results)], "free_text")
    assert (c.text, c.status) == ("2/5", "partial")
    assert {e.item for e in c.failing} == {"deny-lost", "note-lost", "no-final"}
    assert "no model request followed the resume" in next(e.note for e in c.failing if e.item == "no-final")


def test_durable_and_gate_are_not_run_without_their_arenas():
    runs = [run(HITL, "a", "scripted", [item("i1", {"suspended": True})])]
    for key in ("durable", "gate_holds"):
        c = cell(runs, key)
        assert (c.text, c.status, c.evidence) == ("not run", "notrun", [])


def test_durable_counts_items_passed():
    results = [item("d1", {"state_survived": True}), item("d2", {"state_survived": False}),
               item("d3", {"state_survived": True}, error="worker died")]
    c = cell([run("durable_state", "a", "scripted", results)], "durable")
    assert (c.text, c.status) == ("1/3", "partial")
    assert "errored: worker died" in next(e.note for e in c.failing if e.item == "d3")


def test_gate_holds_sums_over_its_profiles():
    runs = [run("approval_gate", "a", "reckless", [item("g1", {"suspended": True}), item("g2", {"suspended": True})]),
            run("approval_gate", "a", "reckless-parallel", [item("g1", {"suspended": False}), item("g2", {"suspended": True})])]
    c = cell(runs, "gate_holds")
    assert (c.text, c.status) == ("3/4", "partial")
    assert [(e.profile, e.item) for e in c.failing] == [("reckless-parallel", "g1")]
    assert cell(runs[:1], "gate_holds").text == "2/2"  # one profile run: counted over what was run


def test_rows_follow_the_registry_and_carry_hitl_meta():
    runs = [run(HITL, "zzz_custom", "scripted", [item("i", {"suspended": True})]),
            run(HITL, "langgraph", "scripted", [item("i", {"suspended": True})]),
            run("approval_gate", "vanilla", "reckless", [item("g", {"suspended": True})], pause_kind="emulated"),
            run(HITL, "vanilla", "scripted", [item("i", {"suspended": True})], pause_kind="native-hitl")]
    m = compute_matrix(runs)
    assert [r.adapter for r in m.rows] == ["vanilla", "langgraph", "zzz_custom"]
    assert m.rows[0].pause_kind == "native-hitl"  # from the human_in_the_loop × scripted run
    assert [c.key for c in m.columns] == [c.key for c in catalog.columns()]
    assert json.loads(json.dumps(m.to_json()))["rows"][0]["cells"]["pause_enforced"]["text"] == "1/1"


def test_profiles_are_the_arenas_own():
    assert declared_profiles("human_in_the_loop") == ("scripted", "scripted-eager")
    assert declared_profiles("approval_gate") == ("reckless", "reckless-parallel")
    assert declared_profiles("no_such_arena") == ()


def test_collect_runs_takes_the_newest_complete_run_per_key(tmp_path):
    parent = tmp_path / "runs"
    old = run(HITL, "a", "scripted", [item("i1", {"suspended": False})], started_at="2026-01-01T00:00:00+00:00")
    new = run(HITL, "a", "scripted", [item("i1", {"suspended": True})], started_at="2026-01-02T00:00:00+00:00")
    broken = run(HITL, "a", "scripted", [item("i1", {"suspended": False})], started_at="2026-01-03T00:00:00+00:00",
                 status="running")
    other = run(HITL, "b", "scripted-eager", [item("i1", {"no_tool_before_suspend": True})])
    write_run(parent, "1-old", old)
    newest = write_run(parent, "2-new", new)
    write_run(parent, "3-interrupted", broken)
    direct = write_run(tmp_path / "elsewhere", "b-run", other)
    (parent / "not-a-run").mkdir()
    runs = collect_runs([parent, direct])
    assert [(r.adapter, r.model, r.path) for r in runs] == [("a", "scripted", newest), ("b", "scripted-eager", direct)]
    assert runs[0].results[0].trace  # traces re-attached
    assert cell(runs, "pause_enforced").text == "1/1"


def test_collect_runs_prefers_an_interrupted_run_to_none(tmp_path):
    broken = run(HITL, "a", "scripted", [item("i1", {"suspended": True})], status="running")
    write_run(tmp_path, "only", broken)
    (r,) = collect_runs([tmp_path])
    assert not r.complete and cell([r], "pause_enforced").text == "1/1"


def test_collect_runs_of_nothing(tmp_path):
    assert collect_runs([tmp_path, tmp_path / "missing"]) == []
    assert collect_runs([Path(tmp_path)]) == []


def _prepared(item_id: str, prepares: int):
    r = item(item_id, {"charged_once": True})
    for n in range(prepares):
        r.trace.append(r.trace[-1].model_copy(update={"seq": 100 + n, "type": "tool_call", "tool": "purchase_hold.prepare",
                                                      "text": None, "leg": 1 + n}))
    return r


def test_body_reexecuted_counts_a_fault_so_fewer_is_better():
    runs = [run("flight_booking", "a", "careful", [_prepared("f1", 2), _prepared("f2", 1), _prepared("f3", 0)],
                body_pause="native")]
    c = cell(runs, "body_reexecuted")
    assert (c.text, c.status) == ("1/2", "partial")  # f3 never paused in the body: does not apply
    assert cell([run("flight_booking", "a", "careful", [_prepared("f2", 1)])], "body_reexecuted").status == "pass"
    assert cell([run("flight_booking", "a", "careful", [_prepared("f1", 2)])], "body_reexecuted").status == "fail"
    assert cell(runs, "body_pause").text == "native"


def test_a_fault_count_lists_the_items_where_the_fault_happened():
    some = cell([run("flight_booking", "a", "careful", [_prepared("f1", 2), _prepared("f2", 1)])], "body_reexecuted")
    assert (some.text, some.status) == ("1/2", "partial") and [e.item for e in some.failing] == ["f1"]
    every = cell([run("flight_booking", "a", "careful", [_prepared(f"f{n}", 2) for n in (1, 3, 4)])], "body_reexecuted")
    assert (every.text, every.status) == ("3/3", "fail") and [e.item for e in every.failing] == ["f1", "f3", "f4"]
    assert cell([run("flight_booking", "a", "careful", [_prepared("f2", 1)])], "body_reexecuted").failing == []
    assert cell([run(HITL, "a", "scripted", [item("i1", {})])], "body_pause").text == "not run"
