"""pydantic_ai_dbos: a crash recovered by DBOS itself (`DBOS.launch()` recovers the PENDING workflow): recorded
steps replayed, the step the process died in run again under the same call id; a second resume while the first
runs takes the live workflow for a crashed one."""

from __future__ import annotations

import pytest

pytest.importorskip("pydantic_ai.durable_exec.dbos")

from arena import evaluate  # noqa: E402

NAME = "pydantic_ai_dbos"


# --- crash_recovery: DBOS's own recovery ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def crashed(tmp_path_factory):
    """crash_recovery's book items at each crash point, recovered by resuming (cr-01, cr-06) and by continuing
    (cr-14, cr-16) the way DBOS recovers: DBOS.launch() in the new process picks the PENDING workflow up."""
    out = tmp_path_factory.mktemp("crash")
    run = evaluate("crash_recovery", [NAME], items=["cr-01", "cr-06", "cr-14", "cr-16"], out=out, timeout=120)[0]
    return {r.item_id: r for r in run.results}


def _calls(r, tool):
    return [e for e in r.trace if e.type == "tool_call" and e.tool == tool]


@pytest.mark.parametrize("item_id, tool", [("cr-01", "book_flight"), ("cr-14", "book_flight")])
def test_after_effect_the_step_the_process_died_in_runs_again_under_its_call_id(crashed, item_id, tool):
    """Killed after the booking's effect, before its step recorded the result: the recovered workflow runs that
    step again (DBOS steps are at-least-once), under pydantic-ai's same tool call id, which the airline
    de-duplicates: paid once."""
    r = crashed[item_id]
    crash = next(e for e in r.trace if e.type == "crashed")
    calls = _calls(r, tool)
    assert len(calls) == 2 and calls[0].seq < crash.seq < calls[1].seq
    assert calls[0].call_id is not None and calls[0].call_id == calls[1].call_id
    checks = {c.name: c for c in r.checks}
    assert checks["paid_once_after_crash"].passed and checks["call_id_stable_after_crash"].passed
    assert r.status == "passed", [c for c in r.checks if not c.passed]


@pytest.mark.parametrize("item_id, tool", [("cr-06", "book_flight"), ("cr-16", "change_flight")])
def test_before_persist_the_recorded_step_is_replayed_not_run_again(crashed, item_id, tool):
    """Killed at the next model request, after the call returned: its DBOS step had recorded the answer, so the
    recovered workflow replays it from the system database and the tool is not called again (pydantic_ai,
    resuming from the pause, calls it again under the same id)."""
    r = crashed[item_id]
    crash = next(e for e in r.trace if e.type == "crashed")
    calls = _calls(r, tool)
    assert len(calls) == 1 and calls[0].seq < crash.seq
    assert r.status == "passed", [c for c in r.checks if not c.passed]


def test_continue_recovers_without_the_decision(crashed):
    """The `continue` way: the new process is given no decision; DBOS.launch() recovered the workflow, which
    already holds the approval it was started with."""
    for item_id in ("cr-14", "cr-16"):
        recovery = [e for e in crashed[item_id].trace if e.type == "resumed" and e.replay == "recover"]
        assert recovery and recovery[0].decision is None


# --- resume_safety: a second resume while the first is running -----------------------------------------------


def test_a_concurrent_second_resume_recovers_the_live_workflow_and_runs_its_step_again(tmp_path):
    """rs-double-concurrent: a second process resumes the same pause while the first is held inside book_room.
    Its DBOS.launch() takes the first's PENDING workflow (same executor id, "local") for a crashed one and
    recovers it: book_room's step, started but not recorded, runs again under the same call id; the first
    process, releasing it, finds the step checkpointed and waits for the workflow's recorded outcome, so
    the run's final answer is the second process's, and the model is asked once after the booking."""
    run = evaluate("resume_safety", [NAME], items=["rs-double-concurrent"], out=tmp_path, timeout=120)[0]
    r = run.results[0]
    second = next(e for e in r.trace if e.type == "resumed" and e.replay == "concurrent")
    books = _calls(r, "book_room")
    assert len(books) == 2 and books[0].call_id == books[1].call_id and second.seq < books[0].seq
    replayed = next(e for e in r.trace if e.type == "replayed")
    final = next(e for e in r.trace if e.type == "final")
    assert replayed.result == "finished" and replayed.text == final.text and replayed.pid != final.pid
    assert len([e for e in r.trace if e.type == "model_call" and e.seq > books[0].seq]) == 1
    assert not {c.name: c for c in r.checks}["executed_at_most_once"].passed
