from __future__ import annotations

from arena_builtins.adapters.vanilla import VanillaAdapter
from arena.runner import MAX_RESUMES, run_item
from arena.types import Decision, EvalItem
from arena import catalog
from tests.zoo import AlwaysSuspends, BooksFirst, HangsOnOneItem, NeverPauses, PausesOnOtherTool, Raises

HITL = catalog.load_arena("human_in_the_loop")


def _checks(result):
    return {c.name: c.passed for c in result.checks}


def test_vanilla_passes_every_item_with_every_check(run_adapter):
    results = run_adapter(VanillaAdapter)
    assert len(results) == 12
    assert [r.status for r in results] == ["passed"] * 12
    assert all(c.passed for r in results for c in r.checks)


def test_legs_merge_into_one_ordered_trace(run_adapter):
    (approved,) = run_adapter(VanillaAdapter, items=["hitl-01"])
    trace = approved.trace
    assert [e.seq for e in trace] == list(range(len(trace)))
    assert [(e.leg, e.type) for e in trace] == [
        (0, "model_call"), (0, "tool_call"), (0, "model_call"), (0, "suspended"),
        (1, "resumed"), (1, "model_call"), (1, "tool_call"), (1, "model_call"), (1, "final"),
    ]
    assert trace[3].args["summary"].startswith("Book room R102")
    assert trace[6].tool == "book_room" and trace[6].args == {"room_id": "R102"}
    # the model side: what each request brought that was new, and what the model answered
    assert [m["role"] for m in trace[0].request["new"]] == ["system", "user"]
    assert trace[2].response["tool_calls"][0]["name"] == "request_approval"
    assert any(m["role"] == "tool" and m["text"] == "APPROVED" for m in trace[5].request["new"])
    assert trace[7].response["text"] == trace[8].text  # the final answer is the model's
    assert approved.legs == 2


def test_never_pausing_adapter_fails_suspended_and_no_tool_before_suspend_everywhere(run_adapter):
    results = run_adapter(NeverPauses)
    assert all(r.status == "failed" for r in results)
    for r in results:
        checks = _checks(r)
        assert checks["suspended"] is False and checks["no_tool_before_suspend"] is False
    reasons = {c.reason for r in results for c in r.checks if c.name == "no_tool_before_suspend"}
    assert reasons == {"request_approval was executed instead of intercepted"}


def test_booking_before_asking_fails(run_adapter):
    results = run_adapter(BooksFirst)
    assert all(r.status == "failed" for r in results)
    for r in results:
        checks = _checks(r)
        assert not checks["suspended"] and not checks["no_tool_before_suspend"]
        if "tool_called_once_after_resume" in checks:
            assert not checks["tool_called_once_after_resume"]
        else:
            assert not checks["tool_not_used"]


def test_pausing_on_the_wrong_tool_fails_suspended(run_adapter):
    (r,) = run_adapter(PausesOnOtherTool, items=["hitl-02"])
    assert _checks(r)["suspended"] is False
    assert "not on the approval tool" in next(c.reason for c in r.checks if c.name == "suspended")


def test_a_hanging_item_times_out_and_the_others_still_run(run_adapter):
    results = run_adapter(HangsOnOneItem, items=["hitl-02", "hitl-03", "hitl-04"], timeout_s=8)
    by_id = {r.item_id: r for r in results}
    assert by_id["hitl-03"].status == "failed"  # a hang is the adapter's measured fault
    assert by_id["hitl-03"].error == "timed out after 8s"
    assert _checks(by_id["hitl-03"])["completed"] is False
    assert by_id["hitl-02"].status == by_id["hitl-04"].status == "passed"


def test_max_resumes_stops_an_adapter_that_suspends_forever(server):
    item = EvalItem(id="loop", input="x", resume_with=[Decision(kind="approve")] * 10, checks=["suspended"])
    r = run_item(AlwaysSuspends, HITL, item, server=server, model="scripted", timeout_s=10)
    assert r.status == "failed"
    assert r.error == f"still suspended after MAX_RESUMES={MAX_RESUMES} resumes"
    assert sum(e.type == "resumed" for e in r.trace) == MAX_RESUMES


def test_suspending_with_no_decision_left_is_an_error(server):
    item = EvalItem(id="one", input="x", resume_with=[Decision(kind="deny")], checks=[])
    r = run_item(AlwaysSuspends, HITL, item, server=server, model="scripted", timeout_s=10)
    assert r.status == "failed" and "only 1 decision" in r.error


def test_an_adapter_exception_fails_only_that_item(run_adapter):
    results = run_adapter(Raises, items=["hitl-01", "hitl-02"])
    assert [r.status for r in results] == ["failed", "failed"]
    assert results[0].error == "RuntimeError: adapter blew up"
    assert results[0].trace[-1].type == "error"
    # the trace up to the crash is kept
    assert [e.type for e in results[0].trace if e.type != "model_call"][:2] == ["tool_call", "suspended"]
