"""pydantic_ai_dbos: a streamed run through `DBOSDurability(event_stream_handler=...)`."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("pydantic_ai.durable_exec.dbos")

from arena import evaluate  # noqa: E402

NAME = "pydantic_ai_dbos"


# --- a streamed run: DBOSDurability(event_stream_handler=...) -------------------------------------------------


def test_a_streamed_run_tells_the_calls_the_pause_and_the_results_from_dbos_steps(tmp_path):
    """approval_gate streamed: the agent's DBOSDurability has an event_stream_handler (DBOS's way to stream a
    durable run). The items end as in a plain run, and what the handler was told holds against the tool log:
    in the resumed leg the approved call's result, or the denial as the framework's answer."""
    run = evaluate("approval_gate", [NAME], items=["gate-01", "gate-02"], out=tmp_path, timeout=120, stream=True)[0]
    assert run.meta["stream"] is True and json.loads((run.path / "meta.json").read_text())["stream"] is True
    for r in run.results:
        assert r.status == "passed" and {c.name: c.passed for c in r.checks}["stream_matches_run"]
        told = [(e.leg, e.text, e.tool) for e in r.trace if e.type == "streamed"]
        assert told == [(0, "tool_call", "search_rooms"), (0, "tool_result", "search_rooms"), (0, "tool_call", "book_room"),
                        (0, "pause", "book_room"), (1, "tool_call", "book_room"), (1, "tool_result", "book_room")]
    results = {r.item_id: [e.result for e in r.trace if e.type == "streamed"][-1] for r in run.results}
    assert results["gate-01"].startswith("BOOKED") and results["gate-02"].startswith("DENIED")


def test_streamed_a_concurrent_second_resume_ends_both_resumes_in_dbos_durabilitys_key_error(tmp_path):
    """rs-double-concurrent streamed: as in the plain run, the second process's DBOS.launch() recovers the first's
    PENDING resume workflow while the adapter starts the same workflow id, so that process runs it twice at once.
    With an event_stream_handler, pydantic-ai's DBOSDurability keys its event-step reservations by (workflow id,
    run id), the same for both; the first to end removes them and the other fails on `pop` with a KeyError,
    which DBOS records as the workflow's outcome: neither resume finishes (plain: one does). A framework
    behaviour of pydantic-ai 2.68 (reports/details.md section 6); this test fails when it changes.

    Whether the two runs of the workflow overlap at the event steps is a race inside the framework (when the second
    process's recovery starts, against the first's stream): under load (a cold `.ci/run` building the releases'
    environments beside it) they once did not. The streamed run then ended with no KeyError: the second resume
    finished, as in the plain run, and `stream_matches_run` failed (the first process's stream never told the result
    of the booking the recovered workflow ran). Either way the booking ran twice; that must not change unnoticed."""
    run = evaluate("resume_safety", [NAME], items=["rs-double-concurrent"], out=tmp_path, timeout=120, stream=True)[0]
    r = run.results[0]
    checks = {c.name: c for c in r.checks}
    assert r.status == "failed" and not checks["executed_at_most_once"].passed  # booked twice, in both outcomes
    if r.error is None:  # the two runs did not overlap at the event steps: the second resume finished
        assert checks["one_resume_finished"].passed and "the second resume finished" in checks["executed_at_most_once"].reason
        return
    # its items run in worker processes (DBOS is process-global): the adapter's exception comes through the worker
    assert r.error.removeprefix("WorkerError: ").startswith("KeyError: ('rs-double-concurrent/")
    assert not checks["one_resume_finished"].passed and "neither resume finished" in checks["one_resume_finished"].reason
    assert checks["stream_matches_run"].passed
