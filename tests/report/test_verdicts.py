"""The verdict record: what it keeps of a run, that nothing run-made gets in, and that a comparison names what changed."""

from __future__ import annotations

import json

import pytest

from arena.report.verdicts import compare, dumps, file_name, read_verdicts, records, stable, write_verdicts

from .conftest import SUBSET_ARENAS, arena_cli
from .helpers import item, run

ARENA = "human_in_the_loop"


def _runs(suspended_in_b: bool = True, reason_b: str = "ok"):
    a = item("hitl-01", {"suspended": True, "completed": True})
    b = item("hitl-02", {"suspended": suspended_in_b, "completed": True})
    b.checks[0].reason = reason_b
    return [run(ARENA, "vanilla", "scripted", [b, a], framework="openai", framework_version="3.57.0"),
            run("durable_state@postgres", "langgraph", "scripted", [item("durable-01", {"suspended": True})])]


def test_a_record_holds_every_item_and_check_in_order_with_its_verdict_and_reason():
    recs = records(_runs(suspended_in_b=False, reason_b="book_room ran before the pause"))
    assert list(recs) == [ARENA, "durable_state@postgres"]  # arenas in their declared order
    vanilla = recs[ARENA]["runs"]["vanilla × scripted"]
    assert vanilla["framework"] == "openai 3.57.0"
    assert list(vanilla["items"]) == ["hitl-01", "hitl-02"]  # items by id, whatever order they finished in
    assert vanilla["items"]["hitl-02"]["checks"]["suspended"] == "FAIL: book_room ran before the pause"
    assert vanilla["items"]["hitl-01"]["checks"]["suspended"].startswith("pass: ")
    text = dumps(recs[ARENA])
    assert '    "suspended": "FAIL: book_room ran before the pause",\n' in text  # one check per line: its diff is one line


@pytest.mark.parametrize("raw, kept", [
    ("paused in /tmp/pytest-of-root/pytest-3/x/work and resumed", "paused in <tmp> and resumed"),
    ("the model endpoint 127.0.0.1:41237 refused", "the model endpoint <loopback> refused"),
    ("see 20261204-220401-human_in_the_loop-langgraph-scripted-e6fd for it", "see <run> for it"),
    ("timed out after 180.0 s (framework time 12.31 s)", "timed out after <time> (framework time <time>)"),
    ("paused in process 15337, resumed in 15385; nothing survived", "paused in process <pid>, resumed in <pid>; nothing survived"),
    ("line one\n  line two", "line one line two"),
    ("Expected: {'call_b_1', 'call_a_0'}, got: set()", "Expected: {'call_a_0', 'call_b_1'}, got: set()"),
    ("No pending feedback found for flow_id: 051b5d45-9c0d-41c7-b648-9d00a9ba930d", "No pending feedback found for flow_id: <uuid>"),
    ("KeyError: ('rs-double/5dba68b4767d/resume',)", "KeyError: ('rs-double/<id>/resume',)"),
    ("tool_call_id call_8f7629ffe78b_0 twice", "tool_call_id call_8f7629ffe78b_0 twice"),  # a call id is the item's
    ("charged $123 twice in 2 legs for 3 items", "charged $123 twice in 2 legs for 3 items"),  # counts and amounts stay
])
def test_a_reason_keeps_what_it_says_and_loses_what_the_run_made(raw, kept):
    assert stable(raw) == kept


def test_a_long_reason_is_clipped_to_one_line():
    assert len(stable("x" * 1000)) == 200 and "\n" not in stable("a\nb")


def test_comparing_names_the_cell_the_item_and_the_check_that_changed():
    before, after = records(_runs()), records(_runs(suspended_in_b=False, reason_b="book_room ran before the pause"))
    assert compare(before, before) == []
    assert compare(before, after) == [
        "human_in_the_loop × vanilla × scripted: hitl-02: passed → failed",
        "human_in_the_loop × vanilla × scripted: hitl-02: suspended: pass: ok → FAIL: book_room ran before the pause"]
    del after["durable_state@postgres"]
    assert "durable_state@postgres × langgraph × scripted: in the record, not in the fresh run" in compare(before, after)
    reworded = records(_runs(reason_b="suspended on request_approval"))
    assert compare(before, reworded) == []  # the same verdicts: CI's comparison passes ...
    assert compare(before, reworded, reasons=True) == [  # ... and a review sees the other words
        "human_in_the_loop × vanilla × scripted: hitl-02: suspended: pass: ok → pass: suspended on request_approval"]


def test_a_folder_of_records_is_written_and_read_back_and_loses_records_of_arenas_gone(tmp_path):
    (tmp_path / "old_arena.json").write_text("{}")
    written = write_verdicts(_runs(), tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["durable_state@postgres.json", "human_in_the_loop.json"]
    assert read_verdicts(tmp_path) == records(_runs()) and len(written) == 2
    (tmp_path / "bad.json").write_text(json.dumps({"format": 99}))
    with pytest.raises(ValueError, match="not a verdict record"):
        read_verdicts(tmp_path)
    assert file_name("../etc") == "_.._etc.json" and file_name("") == "_unnamed.json"  # never a path, never hidden


def test_two_fresh_runs_of_the_same_cells_give_the_same_record(subset_report, tmp_path):
    """The record holds nothing run-made: a second run of the subset, in another folder at another time, gives
    the same files byte for byte."""
    args = ["matrix", "--out", "again"]
    for a in ("vanilla", "langgraph"):
        args += ["-a", a]
    for a in SUBSET_ARENAS:
        args += ["--arena", a]
    r = arena_cli(*args, cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-2000:]
    first = read_verdicts(subset_report["out"] / "verdicts")
    again = read_verdicts(tmp_path / "again" / "verdicts")
    for arena, record in first.items():  # the subset has microsoft_af too: compare the cells both have
        record["runs"] = {k: v for k, v in record["runs"].items() if k.split(" × ")[0] in ("vanilla", "langgraph")}
    assert compare(first, again, reasons=True) == []
