"""crash_recovery: the kill happens where the item says, the reference passes, and each faulty recovery is caught
for its own reason."""

from __future__ import annotations

import json

import pytest

from arena import catalog, evaluate
from arena.worker.procs import alive

ARENA = "crash_recovery"


def _run(adapter, items, tmp_path):
    run = evaluate(ARENA, [adapter], items=items, out=tmp_path, timeout=120)[0]
    return {r.item_id: r for r in run.results}


def _check(result, name):
    return next(c for c in result.checks if c.name == name)


def test_at_least_twelve_items_cover_every_crash_point():
    spec = catalog.load_arena(ARENA)
    points = {i.metadata["crash"]["point"] for i in spec.items}
    assert len(spec.items) >= 12 and points == {"after_effect", "in_body", "before_persist", "during_pause"}
    tools = {i.metadata["crash"]["tool"] for i in spec.items}
    assert {"book_flight", "change_flight", "cancel_flight", "purchase_hold.commit"} <= tools


def test_an_adapter_without_a_recover_channel_is_not_measured():
    spec = catalog.load_arena(ARENA)
    for name in ("vanilla", "smolagents"):
        entry = catalog.adapters()[name]
        why = spec.declined(entry.load().info) if entry.available else "recover"
        assert why is not None and "recover" in why


def test_the_reference_passes_every_item_and_the_kill_happens_where_the_item_says(tmp_path):
    results = _run("vanilla_durable", None, tmp_path)
    spec = catalog.load_arena(ARENA)
    assert len(results) == len(spec.items)
    for item in spec.items:
        r = results[item.id]
        assert r.status == "passed", (item.id, [c for c in r.checks if not c.passed])
        crash = next(e for e in r.trace if e.type == "crashed")
        point, tool = item.metadata["crash"]["point"], item.metadata["crash"]["tool"]
        assert crash.pid is not None and not alive(crash.pid)  # the process tree is gone
        before = [e for e in r.trace if e.seq < crash.seq]
        ran = [e for e in before if e.type == "tool_call" and e.tool == tool]
        if point == "after_effect":  # the side effect is in the tool log, and nothing came after it
            assert ran and before[-1] is ran[-1] and "ERROR" not in (ran[-1].result or "")
        elif point == "before_persist":  # the tool returned; the framework's next model request arrived
            assert ran and before[-1].type == "model_call" and before[-1].seq > ran[-1].seq
        elif point == "in_body":  # the commit arrived (logged as it was refused, after the kill) and did not run
            arrived = next(e for e in r.trace if e.seq > crash.seq and e.type == "tool_call")
            assert not ran and arrived.tool == tool and "was not executed" in (arrived.result or "")
        else:
            assert before[-1].type == "suspended" and not ran
        recovery = [e for e in r.trace if e.type == "resumed" and e.replay == "recover"]
        assert bool(recovery) == (point != "during_pause")
        if item.metadata["crash"].get("way") == "continue":  # continued: the decision was not given again
            assert recovery[0].decision is None and recovery[0].text.startswith("continue")
        elif recovery:
            assert recovery[0].decision is not None
        assert next(e for e in r.trace if e.type == "final").pid != crash.pid


def test_a_recovery_that_runs_the_call_again_pays_twice(tmp_path):
    from tests.zoo import PaysTwiceOnRecovery

    r = _run(PaysTwiceOnRecovery, ["cr-05"], tmp_path)["cr-05"]
    check = _check(r, "paid_once_after_crash")
    assert not check.passed and check.reason.startswith("paid twice") and "in leg 1" in check.reason \
        and "in leg 2" in check.reason


def test_a_recovery_under_new_call_ids_is_caught(tmp_path):
    from tests.zoo import RecoversUnderNewIds

    r = _run(RecoversUnderNewIds, ["cr-01"], tmp_path)["cr-01"]
    check = _check(r, "call_id_stable_after_crash")
    assert not check.passed and "a tool cannot tell it is the same call" in check.reason


def test_a_stable_id_the_model_never_gave_is_caught(tmp_path):
    """The tool log's id is the adapter's hand-over: one of its own making, however stable, is caught against
    the gateway's record of the model's ids."""
    from tests.zoo import HandsItsOwnIds

    r = _run(HandsItsOwnIds, ["cr-01"], tmp_path)["cr-01"]
    check = _check(r, "call_id_stable_after_crash")
    assert not check.passed and "the model gave no book_flight call that id" in check.reason


def test_a_recovery_that_acts_without_the_approval_is_caught(tmp_path):
    from tests.zoo import ActsUnapprovedOnRecovery

    r = _run(ActsUnapprovedOnRecovery, ["cr-05"], tmp_path)["cr-05"]
    check = _check(r, "recovered")
    assert not check.passed and "unexpected" in check.reason  # a booking nobody approved


@pytest.mark.parametrize("point", ["after_effect", "before_persist"])
def test_the_checks_fail_when_no_crash_happened(point):
    """A run that never reached its crash point is not a recovery: `recovered` and the call id say so."""
    from arena.checks import Scoring
    from arena_builtins.arenas.crash_recovery.checks import call_id_stable_after_crash, recovered

    spec = catalog.load_arena(ARENA)
    item = next(i for i in spec.items if i.metadata["crash"]["point"] == point)
    s = Scoring(item=item, trace=[], arena=spec)
    assert not recovered(s).passed and "never reached" in recovered(s).reason
    assert not call_id_stable_after_crash(s).passed


def test_the_airline_answers_a_repeated_call_id_without_charging_again(tmp_path):
    from arena_builtins.arenas.crash_recovery.tools import CrashBackend

    spec = catalog.load_arena(ARENA)
    backend = CrashBackend(spec.item("cr-05"), tmp_path)
    args = {"segments": [{"flight": "FU503", "date": "2026-11-06"}], "fare": "main", "passengers": ["Alex Rivera"],
            "seats": [], "amount": 123}
    first = backend.call("book_flight", args, call_id="c1")
    assert json.loads(first)["status"] == "BOOKED"
    assert backend.call("book_flight", args, call_id="c1") == first  # de-duplicated: the first answer
    assert json.loads(backend.call("book_flight", args))["status"] == "BOOKED"  # no id: a second booking
    captures = [r for r in backend.dump()["ledger"]["captures"] if r.get("call_no")]
    assert [r["call_no"] for r in captures] == [1, 3]  # the tool log's numbering stays aligned
    backend.close()


def test_each_documented_way_of_recovering_has_items_and_an_adapter_without_one_is_not_measured_on_them(tmp_path):
    """`continue` items run only for adapters whose recover channel lists that way; the others leave them out
    and say so in meta.json."""
    from tests.zoo import PaysTwiceOnRecovery

    spec = catalog.load_arena(ARENA)
    ways = {i.id: i.metadata["crash"].get("way", "resume") for i in spec.items}
    continued = sorted(i for i, way in ways.items() if way == "continue")
    assert len(continued) >= 4
    only_resume = PaysTwiceOnRecovery.info.model_copy(update={"channels": tuple(
        c.model_copy(update={"ways": ("resume",)}) if c.name == "recover" else c
        for c in PaysTwiceOnRecovery.info.channels)})
    runs, why = spec.items_for(only_resume, spec.items)
    assert sorted(why) == continued and all("no 'continue' recovery" in w for w in why.values())
    assert {i.id for i in runs} == set(ways) - set(continued)

    class ResumesOnly(PaysTwiceOnRecovery):
        info = only_resume

    run = evaluate(ARENA, [ResumesOnly], items=[continued[0], "cr-01"], out=tmp_path, timeout=120)[0]
    assert [r.item_id for r in run.results] == ["cr-01"] and list(run.meta["not_measured"]) == [continued[0]]


def test_a_continued_recovery_that_runs_the_call_again_pays_twice(tmp_path):
    """The `continue` way is measured as the `resume` way is: a continuation without the idempotency key pays
    twice."""
    from tests.zoo import PaysTwiceOnRecovery

    spec = catalog.load_arena(ARENA)
    item = next(i for i in spec.items if i.metadata["crash"] == {"point": "after_effect", "pause": 1,
                                                                  "tool": "book_flight", "way": "continue"})
    r = _run(PaysTwiceOnRecovery, [item.id], tmp_path)[item.id]
    check = _check(r, "paid_once_after_crash")
    assert not check.passed and check.reason.startswith("paid twice")
    assert next(e for e in r.trace if e.replay == "recover").text.startswith("continue")


def test_a_recovery_that_asks_again_about_the_crashed_call_is_measured_not_failed(tmp_path):
    """A framework whose decision did not survive the crash asks the human again about the same call (LangGraph,
    its resume value still being written when the process died inside the tool's body); the human answers again
    and the charge is on that answer. Whether it asks again is a measurement (`approval_reasked_after_crash`):
    what the human was shown and the charge are judged as for any pause, not failed for being asked twice."""
    from arena_builtins.arenas.crash_recovery.columns import rule_reasked
    from tests.zoo import LosesTheDecisionInACrash

    r = _run(LosesTheDecisionInACrash, ["cr-17"], tmp_path)["cr-17"]
    crash = next(e for e in r.trace if e.type == "crashed")
    again = [e for e in r.trace if e.type == "suspended" and e.seq > crash.seq]
    assert [e.tool for e in again] == ["purchase_hold"] and again[0].args["amount"] == 178
    assert r.status == "passed", [c for c in r.checks if not c.passed]
    assert rule_reasked(r) == (True, f"asked again in leg {again[0].leg} (purchase_hold)")
    answer = next(e for e in r.trace if e.type == "resumed" and e.seq > again[0].seq)
    assert answer.replay == "recover" and answer.decision is not None and answer.decision.approved


def test_a_pause_shown_again_is_open_only_after_a_crash_and_only_a_decision_answers_it():
    """The crafted trace of a recovery that asks again: the call settled before the crash is open again after it,
    and the charge after the new pause is on the human's new answer; without the crash the same pause shows a
    settled call, and a recovery that goes on without a decision leaves the new pause waiting."""
    from arena.checks import Scoring, shown_as_asked
    from arena.types import Decision, TraceEvent
    from arena_builtins.arenas.flight_booking.checks import own_approval

    spec = catalog.load_arena(ARENA)
    call = {"id": "c1", "name": "purchase_hold", "args": {"hold": "H1"}}
    approve = Decision(kind="approve")

    def trace(*, crash: bool, answer: bool) -> list[TraceEvent]:
        events = [dict(type="model_call", response={"status": 200, "tool_calls": [call]}),
                  dict(type="tool_call", tool="purchase_hold.prepare", args={"hold": "H1"}, result='{"amount": 178}'),
                  dict(type="suspended", tool="purchase_hold", args={"hold": "H1", "amount": 178}, call_id="c1"),
                  dict(type="resumed", decision=approve, leg=1)]
        if crash:
            events.append(dict(type="crashed", tool="purchase_hold.commit", leg=1))
        events += [dict(type="resumed", replay="recover", leg=2, text="continue: no decision given"),
                   dict(type="suspended", tool="purchase_hold", args={"hold": "H1", "amount": 178}, call_id="c1", leg=2)]
        if answer:
            events.append(dict(type="resumed", replay="recover", decision=approve, leg=3))
        events.append(dict(type="tool_call", tool="purchase_hold.commit", args={"intent": "PI4"}, leg=3))
        return [TraceEvent(seq=n, **{"leg": 0, **e}) for n, e in enumerate(events)]

    def shown(t):
        return shown_as_asked(Scoring(item=spec.item("cr-17"), trace=t, arena=spec))

    assert shown(trace(crash=True, answer=True)).passed
    settled = shown(trace(crash=False, answer=True))
    assert not settled.passed and "the model asked for nothing still open" in settled.reason
    for answer in (True, False):
        t = trace(crash=True, answer=answer)
        asked_again = [e for e in t if e.type == "suspended"][-1]
        pause, resumed = own_approval(t, t[-1])
        assert pause is asked_again
        if answer:  # the human's new answer, which the recovery gave
            assert resumed is not None and resumed.seq > asked_again.seq and resumed.decision == approve
        else:  # the continuation gave no decision: the pause still waits
            assert resumed is None
