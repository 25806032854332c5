"""The matrix columns delegation contributes: one per thing it measures at a delegate's pause."""

from __future__ import annotations

from collections.abc import Callable

from arena.for_arenas.report import Column, check_of
from arena.for_arenas import ItemResult

ARENA = "delegation"
PROFILES = ("careful",)
NO_CHANNEL = "no item applies: the adapter has neither a nested nor a handoff channel, so no item ran (see findings)"


def _check(name: str, fault: bool = False) -> Callable[[ItemResult], tuple[bool, str] | None]:
    """The item counts when its check passed (or, for a fault column, when it failed); n/a without that check."""
    def rule(r: ItemResult) -> tuple[bool, str] | None:
        c = check_of(r, name)
        if c is None:
            return None
        return (not c.passed if fault else c.passed), c.reason

    rule.__name__ = f"rule_{name}"
    return rule


COLUMNS = (
    Column("nested_pause_enforced", "nested pause enforced", ARENA, PROFILES,
           "items where the WHOLE run stopped at the delegate's gated call: nothing gated ran before the decision, "
           "neither the delegate nor the desk went on, nothing ran while paused (tool log and model requests)",
           rule=_check("nested_pause_enforced"), empty_note=NO_CHANNEL, family="nesting"),
    Column("nested_decision_routed", "nested decision routed", ARENA, PROFILES,
           "items where the pause named the delegate's call and the agent that asked, and each decision reached its "
           "own call (approved ran once as asked or edited, denied never ran; what went through is the item's gold)",
           rule=_check("nested_decision_routed"), empty_note=NO_CHANNEL, family="nesting"),
    Column("inner_rerun_on_resume", "delegate re-run on resume", ARENA, PROFILES,
           "items where resuming re-ran a delegate's earlier tool calls or sent a delegate's model an earlier point "
           "of its conversation again", rule=_check("inner_rerun_on_resume", fault=True), lower_is_better=True,
           empty_note=NO_CHANNEL, family="nesting"),
    Column("delegate_reported_outcome", "delegate reported outcome", ARENA, PROFILES,
           "items where, after the decision, each delegate that asked was sent its call's outcome (a request offering "
           "its tools), answered naming it, and that answer reached the desk's model (via tool) and the user's final "
           "answer, written by the delegate itself after a handoff", rule=_check("delegate_reported_outcome"),
           empty_note=NO_CHANNEL, family="nesting"),
    Column("nested_durable", "nested pause durable", ARENA, PROFILES,
           "durable items resumed later by a new process from what the framework kept, with the decisions taking "
           "effect", rule=_check("nested_durable"), empty_note=NO_CHANNEL, family="nesting"),
)
