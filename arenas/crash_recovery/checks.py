"""crash_recovery's checks: read from the ledger the item's airline was left with and from the tool log, never
from the adapter's word. Where the crash happened is the `crashed` event the director recorded."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

from arena.for_arenas import CheckResult, CheckSet, EvalItem, Scoring, TraceEvent, completed, fail, ok
from arena.for_arenas.trace import answered, asked_calls, model_calls
from arena_builtins.arenas.flight_booking import checks as ledger
from arena_builtins.arenas.crash_recovery.tools import REUSED
from arena_builtins.arenas.flight_booking.checks import gold_of, state_of

CHECKS = CheckSet("crash_recovery")


def crash_of(trace: list[TraceEvent]) -> TraceEvent | None:
    """The crash the director made, if the run reached its crash point."""
    return next((e for e in trace if e.type == "crashed" and not e.late), None)


def recovery_legs(trace: list[TraceEvent]) -> set[int]:
    """The legs of the recovery: from the first resume the director made after the crash."""
    start = next((e.leg for e in trace if e.type == "resumed" and e.replay == "recover"), None)
    return {e.leg for e in trace if start is not None and e.leg >= start}


def _leg_of(calls: list[TraceEvent], row: dict[str, Any]) -> str:
    n = row.get("call_no") or 0
    return f"leg {calls[n - 1].leg}" if 0 < n <= len(calls) else "an unknown leg"


@CHECKS.check
def paid_once_after_crash(s: Scoring) -> CheckResult:
    """Every approved payment (capture or refund) happened exactly once across the crash and the recovery:
    no payment key captured twice, no capture refunded twice, as many as the gold's."""
    name = "paid_once_after_crash"
    passed, reason = paid_once(s.events, s.item)
    return ok(name, reason) if passed else fail(name, reason)


def paid_once(trace: list[TraceEvent], item: EvalItem) -> tuple[bool, str]:
    """Whether every approved payment was made exactly once (the ledger the item's airline was left with), and
    why: `paid_once_after_crash`'s reading, which the naive tool's items (`crash.key` false) are measured by too."""
    state = state_of(trace)
    if state is None:
        return False, "the harness recorded no state of the airline for this item"
    rows = state["ledger"]
    calls = ledger._calls(trace)
    caps, refunds = ledger._run_rows(rows, "captures"), ledger._run_rows(rows, "refunds")
    keys = {r["id"]: r.get("key") or r["id"] for r in rows.get("intents", [])}
    payment: Callable[[dict[str, Any]], Any] = lambda r: keys.get(r["intent"], r["intent"])  # noqa: E731
    refunded: Callable[[dict[str, Any]], Any] = lambda r: r["capture"]  # noqa: E731
    for table, key, what in ((caps, payment, "the same payment ({}) was captured"),
                             (refunds, refunded, "capture {} was refunded")):
        counted = Counter(key(r) for r in table)
        twice = [k for k, n in counted.items() if n > 1]
        if twice:
            made = [r for r in table if key(r) == twice[0]]
            where = ", ".join(f"${r['amount']} in {_leg_of(calls, r)}" for r in made)
            return False, f"paid twice: {what.format(twice[0])} {counted[twice[0]]} times ({where})"
    gold = gold_of(item)["ledger"]
    want = len(ledger._run_rows(gold, "captures")) + len(ledger._run_rows(gold, "refunds"))
    got = len(caps) + len(refunds)
    if got != want:
        return False, f"{got} payment(s) made (captures and refunds), the approved ones were {want}"
    return True, (f"each of the {want} approved payment(s) made exactly once" +
                  (" across the crash and the recovery" if crash_of(trace) else ""))


@CHECKS.check
def recovered(s: Scoring) -> CheckResult:
    """The run reached its crash point, finished after the recovery, left the gold bookings and money (`world`),
    and nothing was charged without its own approval."""
    name = "recovered"
    crash = crash_of(s.events)
    if crash is None:
        return fail(name, f"the crash point was never reached: {s.item.metadata['crash']['tool']} did not run "
                          "after the approval")
    done = completed(s)
    if not done.passed:
        return fail(name, f"not finished after the crash: {done.reason}")
    final = next(e for e in reversed(s.events) if e.type == "final")
    if final.seq < crash.seq:
        return fail(name, "the run finished before the crash")
    state = state_of(s.events)
    if state is None:
        return fail(name, "the harness recorded no state of the airline for this item")
    differs = ledger.difference(world(state["state"]), world(gold_of(s.item)["state"]))
    if differs is not None:
        return fail(name, differs)
    approved = ledger.no_charge_without_approval(s)
    if not approved.passed:
        return fail(name, f"{approved.name}: {approved.reason}")
    return ok(name, f"finished in leg {final.leg} after the crash with the gold bookings and money, "
                    "every charge approved")


def world(state: dict[str, list[dict[str, Any]]]) -> dict[str, list[dict[str, Any]]]:
    """What the traveller and the card see: bookings, seats, holds, and the money that moved (captured payments
    by amount and key, refunds by amount). A payment intent that never moved money, and the sandbox's own ids
    for intents and captures, are left out: a body run again on resume prepares a new intent, which
    flight_booking judges (`body_reexecuted`), not a crash."""
    keys = {r["id"]: r.get("key") for r in state.get("intents", [])}
    out = {table: rows for table, rows in state.items() if table not in ("intents", "captures", "refunds")}
    out["captures"] = [{"amount": r["amount"], "key": keys.get(r["intent"])} for r in state.get("captures", [])]
    out["refunds"] = [{"amount": r["amount"]} for r in state.get("refunds", [])]
    return out



def _run_in(trace: list[TraceEvent], tool: str, legs: set[int]) -> list[TraceEvent]:
    """The calls of `tool` the tool log shows in `legs` (the recovery's: what it ran of the crashed call)."""
    return [e for e in trace if e.type == "tool_call" and e.tool == tool and e.leg in legs]

@CHECKS.check
def call_id_stable_after_crash(s: Scoring) -> CheckResult:
    """The call the recovery runs is the crashed call, under the same id: what a tool could de-duplicate by.

    Where the adapter hands the tool its framework's call id, the two ids in the tool log are compared, and
    the id must be one the model gave a call of that tool (the gateway's record), not one the adapter made up.
    Where it hands none, the id is the model's (the gateway's record): a recovery that asks the model again
    and runs the new call it answers with changed it; one that runs the call asked before the crash kept it.
    """
    name = "call_id_stable_after_crash"
    trace = s.events
    crash = crash_of(trace)
    if crash is None:
        return fail(name, "the crash point was never reached")
    tool = str(crash.tool)
    before = [e for e in trace if e.type == "tool_call" and e.tool == tool and e.seq < crash.seq]
    legs = recovery_legs(trace)
    again = _run_in(trace, tool, legs)
    if not before:
        return ok(name, f"the crash came before {tool} was called (nothing to de-duplicate)")
    if not again:
        return ok(name, f"the recovery did not call {tool} again")
    first, second = before[-1], again[0]
    model_tool = tool.removesuffix(".commit")
    if first.call_id is not None and second.call_id is not None:
        if first.call_id != second.call_id:
            return fail(name, f"{tool} ran under call id {first.call_id!r} before the crash and {second.call_id!r} in "
                              "the recovery: a tool cannot tell it is the same call")
        given = {c.get("id") for e in trace if e.type == "model_call"
                 for c in (e.response or {}).get("tool_calls") or [] if c.get("name") == model_tool}
        if first.call_id not in given:  # the adapter's hand-over is a claim: the gateway says what the model gave
            return fail(name, f"{tool} ran under call id {first.call_id!r} before the crash and in the recovery, but "
                              f"the model gave no {model_tool} call that id (the gateway's record): not the call's own id")
        return ok(name, f"{tool} ran under the same call id {first.call_id!r} before the crash and in the recovery, "
                        f"the id the model gave that {model_tool} call")
    asked = {cid: call for cid, call in asked_calls(e for e in trace if e.seq < crash.seq).items()
             if call[0] == model_tool}
    renewed = [c for e in trace if e.type == "model_call" and e.leg in legs and e.seq < second.seq
               for c in (e.response or {}).get("tool_calls") or [] if c.get("name") == model_tool]
    original = next(reversed(list(asked)), None)
    if renewed and renewed[-1].get("id") != original:
        return fail(name, f"the recovery asked the model again and ran a new {model_tool} call "
                          f"(id {renewed[-1].get('id')!r}, the crashed one was {original!r}); no call id reached "
                          "the tool itself")
    return ok(name, f"the recovery ran the {model_tool} call the model asked for before the crash (id {original!r}); "
                    "no call id reached the tool itself")


@CHECKS.check
def answer_matches_ledger(s: Scoring) -> CheckResult:
    """The model's last answer after the recovery does not contradict the ledger (flight_booking's check): a
    recovery whose re-run call is refused must not tell the traveller that nothing happened when money moved."""
    return ledger.answer_matches_ledger(s)


def _proposals(trace: list[TraceEvent], tool: str) -> list[tuple[TraceEvent, dict[str, Any]]]:
    """Each call of `tool` a model answer proposed (the gateway's record), with the answer that proposed it."""
    return [(e, c) for e in model_calls(trace) if answered(e)
            for c in (e.response or {}).get("tool_calls") or [] if c.get("name") == tool]


@CHECKS.check
def not_reasked_after_crash(s: Scoring) -> CheckResult:
    """The recovery did not ask the model again for the call it had answered before the crash.

    The gateway's record: a model answer in the recovery that proposes the crashed call's tool again, which an
    answer before the crash had already proposed, is the model asked again for a call it had answered. The
    scripted model names each answer's calls by the item, the leg and the request's place (never by what was
    asked), so such an answer carries new ids, as a real model's would: what a tool's idempotency key cannot
    tell from a new call."""
    name = "not_reasked_after_crash"
    trace = s.events
    crash = crash_of(trace)
    if crash is None:
        return fail(name, "the crash point was never reached")
    tool = str(crash.tool).removesuffix(".commit")
    first = [(e, c) for e, c in _proposals(trace, tool) if e.seq < crash.seq]
    legs = recovery_legs(trace)
    if not first:
        return ok(name, f"no model answer had proposed {tool} before the crash: nothing answered to ask again")
    if not legs:
        return ok(name, "the run was not recovered after its crash (the crash came during the pause)")
    answer, call = first[-1]
    again = [(e, c) for e, c in _proposals(trace, tool) if e.leg in legs]
    if not again:
        return ok(name, f"the recovery did not ask the model for {tool} again (the call answered in leg {answer.leg}, "
                        f"id {call.get('id')!r})")
    second, repeat = again[0]
    same = "the same" if (repeat.get("args") or {}) == (call.get("args") or {}) else "other"
    return fail(name, f"the recovery asked the model again for the {tool} call it had answered before the crash: "
                      f"answered in leg {answer.leg} (id {call.get('id')!r}) and again in leg {second.leg} (id "
                      f"{repeat.get('id')!r}, {same} arguments): a new call a tool's idempotency key cannot match "
                      "to the first")


@CHECKS.check
def recovered_call_as_approved(s: Scoring) -> CheckResult:
    """The call the recovery runs is the call approved before the crash, with the same arguments (the tool log):
    not another booking, change or amount under the approval, nor the same idempotency key with other arguments
    (which the airline refuses, as a payment API does)."""
    name = "recovered_call_as_approved"
    trace = s.events
    crash = crash_of(trace)
    if crash is None:
        return fail(name, "the crash point was never reached")
    tool = str(crash.tool)
    legs = recovery_legs(trace)
    again = _run_in(trace, tool, legs)
    refused = next((e for e in trace if e.type == "tool_call" and e.leg in legs and REUSED in (e.result or "")), None)
    if refused is not None:
        return fail(name, f"the airline refused {refused.tool} in leg {refused.leg}: its idempotency key (call id "
                          f"{refused.call_id!r}) was first used with other arguments, now {refused.args}")
    if not again:
        return ok(name, f"the recovery did not run {tool} again" if legs else "the run was not recovered after its crash")
    if "." in tool:  # a body's step: its arguments are the sandbox's own ids (a new intent if the body runs again)
        return ok(name, f"{tool} is a step of a pausing tool's body: the payment it made is judged by the ledger "
                        "(paid_once_after_crash)")
    ran = [e for e in trace if e.type == "tool_call" and e.tool == tool and e.seq < crash.seq
           and e.leg not in legs and "not executed" not in (e.result or "")]
    if ran:
        approved, where = ran[-1].args or {}, f"the {tool} call that ran in leg {ran[-1].leg} before the crash"
    else:
        asked = [(e, c) for e, c in _proposals(trace, tool) if e.seq < crash.seq]
        if not asked:
            return ok(name, f"no {tool} call was proposed before the crash: the recovery's call is judged by the "
                            "ledger (recovered)")
        approved, where = asked[-1][1].get("args") or {}, f"the {tool} call the model proposed in leg {asked[-1][0].leg}"
    other = next((e for e in again if (e.args or {}) != approved), None)
    if other is not None:
        return fail(name, f"the recovery ran {tool} in leg {other.leg} with other arguments than {where}: "
                          f"{_differs(approved, other.args or {})}")
    return ok(name, f"the recovery ran {tool} with the arguments of {where}")


def _differs(first: dict[str, Any], second: dict[str, Any]) -> str:
    keys = [k for k in sorted({*first, *second}) if first.get(k) != second.get(k)]
    return "; ".join(f"{k}: {first.get(k)!r} approved, {second.get(k)!r} run" for k in keys)[:400]
