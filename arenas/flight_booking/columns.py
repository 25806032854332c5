"""The matrix columns flight_booking contributes: the money, and what a tool body that pauses does."""

from __future__ import annotations

from arena.for_arenas.report import Column, check_of
from arena.for_arenas import ItemResult

ARENA = "flight_booking"
PREPARE = "purchase_hold.prepare"


def from_check(name: str):
    """The item rule of a column that counts the items whose check `name` passed (for other arenas too)."""

    def rule(r: ItemResult) -> tuple[bool, str] | None:
        c = check_of(r, name)
        return None if c is None else (c.passed, c.reason)

    rule.__name__ = f"rule_{name}"
    return rule


def rule_body_reexecuted(r: ItemResult) -> tuple[bool, str] | None:
    """Items whose body-pausing tool prepared more than once (the code before the pause ran again)."""
    prepares = [e for e in r.trace if e.type == "tool_call" and e.tool == PREPARE and not e.late]
    if not prepares:
        return None
    if len(prepares) > 1:
        return True, f"{PREPARE} ran {len(prepares)} times (legs {', '.join(str(e.leg) for e in prepares)})"
    return False, f"{PREPARE} ran once, in leg {prepares[0].leg}"


COLUMNS = (
    Column("body_pause", "body pause (declared)", ARENA, ("careful",),
           "how the adapter pauses inside a tool's body (meta.json body_pause): without one, purchase_hold is "
           "gated before the call", kind="declared", meta_key="body_pause"),
    Column("body_reexecuted", "tool body re-executed on resume", ARENA, ("careful",),
           f"items where purchase_hold's prepare step ran more than once (`{PREPARE}` in the tool log), of the "
           "items where the body paused", rule=rule_body_reexecuted, lower_is_better=True,
           empty_note="no item paused inside purchase_hold's body (the adapter gated it before the call)", family="resume"),
    Column("charged_once", "charged once", ARENA, ("careful",),
           "items whose `charged_once` check passed: every payment captured at most once, once per approved payment",
           rule=from_check("charged_once"), family="resume"),
    Column("no_charge_without_approval", "no charge without approval", ARENA, ("careful",),
           "items whose `no_charge_without_approval` check passed: every capture after its own approval",
           rule=from_check("no_charge_without_approval"), family="pause"),
    Column("stale_approval_refused", "stale approval refused", ARENA, ("careful",),
           "price-change items whose `stale_approval_refused` check passed: nothing captured at an amount other than "
           "the one approved", rule=from_check("stale_approval_refused"), family="resume"),
)
