"""The matrix columns crash_recovery contributes: paid once (with the airline's idempotency key, and with a tool
that has none), recovered, the call id, and whether the human was asked again (a measurement, not a verdict)."""

from __future__ import annotations

from dataclasses import replace

from arena.for_arenas.report import Column
from arena.for_arenas import EvalItem, ItemResult
from arena_builtins.arenas.crash_recovery.checks import crash_of, paid_once
from arena_builtins.arenas.flight_booking.columns import from_check

ARENA = "crash_recovery"
PROFILES = ("careful",)


def crash_point(r: ItemResult):
    """The item's crash as the director recorded it, and its point (`after_effect`, ...), if it crashed."""
    crash = crash_of(r.trace)
    return crash, (crash.text or "").split(":", 1)[0] if crash is not None else ""


def rule_reasked(r: ItemResult) -> tuple[bool, str] | None:
    """Items whose run crashed inside the approved action: did the recovered run ask the human again?"""
    crash, point = crash_point(r)
    if crash is None or point == "during_pause":
        return None
    again = [e for e in r.trace if e.type == "suspended" and e.seq > crash.seq and not e.late]
    if again:
        return True, f"asked again in leg {again[0].leg} ({again[0].tool})"
    return False, "went on with the approval given before the crash"


def rule_ran_again(r: ItemResult) -> tuple[bool, str] | None:
    """Items killed right after the approved call's side effect, before its result reached the framework
    (`after_effect`): did the recovery call it again? (At `before_persist` the answer depends on whether the
    framework had persisted the result before its next model request, which a framework that writes in the
    background, as LangGraph does by default, does or not from run to run: those items are left out.)"""
    crash, point = crash_point(r)
    if crash is None or crash.tool is None or point != "after_effect" or keyless(r):  # those: paid_once_..._no_key
        return None
    before = [e for e in r.trace if e.type == "tool_call" and e.tool == crash.tool and e.seq < crash.seq
              and "not executed" not in (e.result or "")]
    if not before:
        return None
    again = [e for e in r.trace if e.type == "tool_call" and e.tool == crash.tool and e.seq > crash.seq and not e.late]
    if again:
        ids = " (same call id)" if before[-1].call_id and again[0].call_id == before[-1].call_id else ""
        return True, f"{crash.tool} called again in leg {again[0].leg}{ids}: {(again[0].result or '')[:80]}"
    return False, f"{crash.tool} not called again"


def item_of(r: ItemResult) -> EvalItem | None:
    from arena_builtins.arenas.crash_recovery import ARENA as SPEC  # the arena's package imports this module

    return next((i for i in SPEC.items if i.id == r.item_id), None)


def keyless(r: ItemResult) -> bool:
    """The item runs against the naive tool (`crash.key` false: the airline takes no idempotency key)."""
    item = item_of(r)
    return item is not None and not item.metadata["crash"].get("key", True)


def rule_paid_once_no_key(r: ItemResult) -> tuple[bool, str] | None:
    """The items run against the naive tool: was every approved payment made exactly once (the ledger)? A
    recovery that runs the crashed call again pays twice here."""
    item = item_of(r)
    if item is None or item.metadata["crash"].get("key", True) or r.status == "errored":
        return None
    return paid_once(r.trace, item)


PLAIN = (
    Column("paid_once_after_crash", "paid once after a crash (tool with an idempotency key)", ARENA, PROFILES,
           "items whose `paid_once_after_crash` check passed: every approved payment captured or refunded exactly "
           "once across the crash and the recovery (the ledger), the airline de-duplicating by the call id the "
           "adapter hands it", rule=from_check("paid_once_after_crash"), family="crash"),
    Column("paid_once_after_crash_no_key", "paid once after a crash (tool without an idempotency key)", ARENA,
           PROFILES, "the items killed right after the approved call's side effect, run again against an airline that "
                     "takes no idempotency key (`-nokey`): every approved payment made exactly once (the ledger); a "
                     "recovery that runs the call again pays twice", rule=rule_paid_once_no_key,
           empty_note="no item was run against the tool without an idempotency key", family="crash"),
    Column("recovered", "recovered after a crash", ARENA, PROFILES,
           "items whose `recovered` check passed: finished after the crash in the gold state, nothing charged "
           "without its approval", rule=from_check("recovered"), family="crash"),
    Column("call_id_stable_after_crash", "call id stable across a crash", ARENA, PROFILES,
           "items whose `call_id_stable_after_crash` check passed: the recovery runs the crashed call under its id",
           rule=from_check("call_id_stable_after_crash"), family="crash"),
    Column("ran_again_after_crash", "approved call run again after a crash", ARENA, PROFILES,
           "items killed right after the approved call's side effect (`after_effect`) whose recovery called it again "
           "(the tool log): each would pay twice with a tool that has no idempotency key", rule=rule_ran_again,
           neutral=True, empty_note="no item crashed right after the approved call's side effect", family="crash"),
    Column("approval_reasked_after_crash", "approval re-asked after a crash", ARENA, PROFILES,
           "items crashed inside the approved action whose recovered run asked the human again (a measurement: "
           "either can be right; a framework that writes the decision in the background, as LangGraph does its "
           "resume value, may ask again or not from run to run)", rule=rule_reasked, neutral=True,
           empty_note="no item crashed inside an approved action", family="crash"),
)


def on_store(kind: str, title: str) -> tuple[Column, ...]:
    """The crash columns again, with the paused state in the framework's own store on a server (`--store kind`)."""
    return tuple(replace(c, key=f"{c.key}_{kind}", title=f"{c.title} ({title})", arena=f"{ARENA}@{kind}",
                         derivation=f"as `{c.key}`, with the framework's own {title} store (cr-12's server is stopped "
                                    "and restarted during the pause)") for c in PLAIN)


COLUMNS = (*PLAIN, *on_store("postgres", "PostgreSQL"), *on_store("redis", "Redis"))
