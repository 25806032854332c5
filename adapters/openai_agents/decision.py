"""The human's decision applied to the restored RunState: `RunState.approve(item)` or
`RunState.reject(item, rejection_message=decision.as_text())`, `always` as the SDK's sticky decision."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from arena.for_adapters import Decision, DecisionKind, DecisionSet, kit

from .outcome import approval_item

if TYPE_CHECKING:
    from .adapter import OpenAIAgentsAdapter


def apply_decision(adapter: OpenAIAgentsAdapter, run_state: Any, interruptions: list[Any],
                   decision: Decision | DecisionSet) -> None:
    if isinstance(decision, DecisionSet):
        # One decision per held call, by call id. The SDK has no way to run a call with other arguments
        # (approve() takes none, and a call's arguments are fingerprinted in the state), so an edit is
        # carried as a rejection whose message is the human's edit: the call does not run as asked.
        # A held call without a decision gets neither approve() nor reject(), and so does a null decision
        # (the SDK's approval calls carry no value to make null); a decision naming a call that is not
        # held has no item to act on. What the SDK then does is what resume_safety measures.
        for item in interruptions:
            d = kit.decision_for(decision, item.call_id)
            if d is None or d.kind is DecisionKind.null:
                continue
            # in get_interruptions() order; `always` is the SDK's sticky decision (see the package docstring)
            if d.kind is DecisionKind.approve:
                run_state.approve(item, always_approve=bool(d.always))
            else:
                run_state.reject(item, always_reject=bool(d.always), rejection_message=d.as_text())
        return
    item = approval_item(adapter, interruptions)
    adapter._decision = decision
    gated = item.name in adapter._gated
    # An answer lets the approval tool return it; a gated tool executes only on an approval.
    # `always`: the SDK's sticky decision, which the runner applies to the tool's later calls in this run
    if decision.kind is DecisionKind.deny or (gated and not decision.approved):
        run_state.reject(item, always_reject=bool(decision.always), rejection_message=decision.as_text())
    else:
        run_state.approve(item, always_approve=bool(decision.always))
