"""crash_recovery's validity (issue 50, section 2 and the section-7 headline): the scripted model's call ids name
the answer (item, leg, request), not the request's content, so a recovery that asks the model again is seen; the
airline refuses an idempotency key reused with other arguments; and each after-effect item is measured against a
tool without an idempotency key too."""

from __future__ import annotations

import json

import openai

from arena import catalog, evaluate
from arena.trace import TraceRecorder

ARENA = "crash_recovery"
TOOLS = [{"type": "function", "function": {"name": n, "parameters": {"type": "object"}}}
         for n in ("search_rooms", "request_approval", "book_room")]
TASK = {"role": "user", "content": "Book a meeting room for 8 people on Tuesday."}
BOOKING = {"segments": [{"flight": "FU503", "date": "2026-11-06"}], "fare": "main", "passengers": ["Alex Rivera"],
           "seats": [], "amount": 123}


def _run(adapter, items, tmp_path):
    run = evaluate(ARENA, [adapter], items=items, out=tmp_path, timeout=120)[0]
    return {r.item_id: r for r in run.results}


def _check(result, name):
    return next(c for c in result.checks if c.name == name)


def _ids(server, name):
    """The call ids the scripted model gives the same request twice on an item's endpoint named `name`."""
    rec = TraceRecorder()
    client = openai.OpenAI(base_url=server.open_item(rec, "scripted", name=name).base_url, api_key="k", max_retries=0)
    return [client.chat.completions.create(model="scripted", messages=[TASK], tools=TOOLS).choices[0].message
            .tool_calls[0].id for _ in range(2)]


def test_a_repeated_request_is_a_new_answer_with_new_ids_and_items_never_share_them(server):
    first = _ids(server, "crash_recovery/cr-01/epoch 1")
    assert first[0] != first[1]  # the same request asked again: a new answer, a new id (as a real model's)
    other = _ids(server, "crash_recovery/cr-02/epoch 1")
    assert not set(first) & set(other)  # two items whose requests are alike
    assert _ids(server, "crash_recovery/cr-01/epoch 1") == first  # the same run again: the same ids


def test_the_airline_refuses_a_reused_key_with_other_arguments_and_charges_nothing(tmp_path):
    from arena_builtins.arenas.crash_recovery.tools import REUSED, CrashBackend

    spec = catalog.load_arena(ARENA)
    backend = CrashBackend(spec.item("cr-05"), tmp_path)
    first = backend.call("book_flight", BOOKING, call_id="c1")
    assert json.loads(first)["status"] == "BOOKED"
    other = {**BOOKING, "segments": [{"flight": "FU501", "date": "2026-11-06"}]}
    refused = json.loads(backend.call("book_flight", other, call_id="c1"))
    assert refused["status"] == "REFUSED" and REUSED in refused["error"] and "nothing was charged" in refused["error"]
    assert backend.call("book_flight", dict(reversed(list(BOOKING.items()))), call_id="c1") == first  # same args
    captures = [r for r in backend.dump()["ledger"]["captures"] if r.get("call_no")]
    assert [r["call_no"] for r in captures] == [1]
    backend.close()


def test_the_naive_tool_takes_no_idempotency_key(tmp_path):
    from arena_builtins.arenas.crash_recovery.tools import CrashBackend

    spec = catalog.load_arena(ARENA)
    backend = CrashBackend(spec.item("cr-05-nokey"), tmp_path)
    assert json.loads(backend.call("book_flight", BOOKING, call_id="c1"))["status"] == "BOOKED"
    assert json.loads(backend.call("book_flight", BOOKING, call_id="c1"))["status"] == "BOOKED"  # pays again
    assert len([r for r in backend.dump()["ledger"]["captures"] if r.get("call_no")]) == 2
    backend.close()


def test_every_after_effect_item_is_run_against_a_tool_without_a_key_too():
    spec = catalog.load_arena(ARENA)
    keyed = {i.id for i in spec.items if i.metadata["crash"]["point"] == "after_effect"
             and i.metadata["crash"].get("key", True)}
    naive = {i.id for i in spec.items if not i.metadata["crash"].get("key", True)}
    assert keyed and naive == {f"{i}-nokey" for i in keyed}
    for item in spec.items:
        scored = {"paid_once_after_crash", "recovered", "answer_matches_ledger"} & set(item.checks)
        assert bool(scored) == (item.id not in naive)
        assert {"not_reasked_after_crash", "recovered_call_as_approved"} <= set(item.checks)


def test_a_recovery_that_asks_the_model_again_is_reported_as_such(tmp_path):
    from tests.crash_faults import ReasksOnRecovery

    r = _run(ReasksOnRecovery, ["cr-05"], tmp_path)["cr-05"]
    check = _check(r, "not_reasked_after_crash")
    assert not check.passed and "asked the model again for the book_flight call it had answered" in check.reason \
        and "same arguments" in check.reason
    paid = _check(r, "paid_once_after_crash")  # the new id is a new key: the airline charges again
    assert not paid.passed and paid.reason.startswith("paid twice")


def test_a_recovery_that_replays_the_run_from_the_start_is_caught(tmp_path):
    from tests.crash_faults import ReplaysFromStart

    r = _run(ReplaysFromStart, ["cr-05"], tmp_path)["cr-05"]
    assert r.status == "failed"
    check = _check(r, "not_reasked_after_crash")
    assert not check.passed and "asked the model again for the book_flight call" in check.reason
    assert not _check(r, "paid_once_after_crash").passed
    assert not _check(r, "call_id_stable_after_crash").passed


def test_a_recovery_that_reuses_the_key_with_other_arguments_is_refused_and_caught(tmp_path):
    from tests.crash_faults import ReusesKeyWithOtherArgs

    r = _run(ReusesKeyWithOtherArgs, ["cr-05"], tmp_path)["cr-05"]
    check = _check(r, "recovered_call_as_approved")
    assert not check.passed and "the airline refused book_flight" in check.reason \
        and "first used with other arguments" in check.reason
    refused = [e for e in r.trace if e.type == "tool_call" and "idempotency key reused" in (e.result or "")]
    assert refused and refused[0].call_id is not None  # logged in the tool log, under the reused key
    assert _check(r, "paid_once_after_crash").passed  # refused: nothing charged twice


def test_a_recovery_that_runs_other_arguments_under_a_new_id_is_caught(tmp_path):
    from tests.zoo import ActsUnapprovedOnRecovery

    r = _run(ActsUnapprovedOnRecovery, ["cr-05"], tmp_path)["cr-05"]
    check = _check(r, "recovered_call_as_approved")
    assert not check.passed and "with other arguments than the book_flight call that ran in leg" in check.reason \
        and "FU501" in check.reason


def test_the_naive_tool_column_shows_the_payment_made_twice(tmp_path):
    """The reference recovers the call under its id: with the airline's key that is paid once; against the naive
    tool the same recovery pays twice, which its column shows (the item itself passes: no recovery can know
    whether a call killed after its side effect ran, without the tool's help)."""
    from arena_builtins.arenas.crash_recovery.columns import COLUMNS

    keyed, naive = (next(c for c in COLUMNS if c.key == k).rule
                    for k in ("paid_once_after_crash", "paid_once_after_crash_no_key"))
    results = _run("vanilla_durable", ["cr-05", "cr-05-nokey"], tmp_path)
    assert all(r.status == "passed" for r in results.values()), {i: r.checks for i, r in results.items()}
    assert naive(results["cr-05"]) is None and keyed(results["cr-05-nokey"]) is None
    assert keyed(results["cr-05"])[0]
    twice = naive(results["cr-05-nokey"])
    assert twice is not None and not twice[0] and twice[1].startswith("paid twice")


def test_a_resume_that_asks_the_model_again_for_the_approved_call_is_caught_in_durable_state(tmp_path):
    """durable_state: a resume that regenerates the paused turn by asking the model again gets the same call
    under a new id; the approval applied to it is caught, for its own reason (a denied item asks nothing again)."""
    from tests.crash_faults import ReasksOnResume

    run = evaluate("durable_state", [ReasksOnResume], items=["durable-01", "durable-02"], out=tmp_path, timeout=120)[0]
    results = {r.item_id: r for r in run.results}
    check = _check(results["durable-01"], "not_reasked_after_resume")
    assert not check.passed and "after the approval the model was asked again for request_approval" in check.reason \
        and "approved as" in check.reason
    assert _check(results["durable-02"], "not_reasked_after_resume").passed  # denied: nothing approved


def test_the_references_are_not_reasked_in_durable_state(tmp_path):
    run = evaluate("durable_state", ["vanilla_durable"], items=["durable-01", "durable-02"], out=tmp_path,
                   timeout=120)[0]
    assert all(r.status == "passed" for r in run.results)
    assert all(_check(r, "not_reasked_after_resume").passed for r in run.results)
