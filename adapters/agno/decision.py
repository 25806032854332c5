"""A Decision / DecisionSet as agno's resume input: each decision handed to the requirement of the call it names,
through agno's own methods, and the arguments of `acontinue_run`."""

from __future__ import annotations

from typing import Any

from arena.for_adapters import Decision, DecisionKind, DecisionSet


def continue_args(state: dict[str, Any], decision: Decision | DecisionSet) -> dict[str, Any]:
    """`acontinue_run`'s arguments for a resume: the run, and the pause's requirements (agno's own serialisation,
    rebuilt with `RunRequirement.from_dict`) with each decision applied to the requirement it names."""
    from agno.run.requirement import RunRequirement

    requirements = [RunRequirement.from_dict(d) for d in state["requirements"]]
    held = {r.tool_execution.tool_call_id: r for r in requirements
            if r.tool_execution is not None and r.tool_execution.tool_call_id in state["call_ids"]}
    if isinstance(decision, DecisionSet):
        # One decision per held requirement, by the call id it names, as given: a held call without one is
        # passed on unresolved, a decision naming a call the pause does not hold has no requirement to act
        # on (agno's API acts on held requirements), a null decision carries no value and is no decision.
        for d in decision.decisions:
            key = d.call_id if d.call_id is not None else (state["call_ids"][0] if len(held) == 1 else None)
            requirement = held.get(key) if key is not None else None
            if requirement is not None and d.kind is not DecisionKind.null:
                apply(requirement, d)
    else:
        requirement = held.get(state["call_ids"][0])
        if requirement is None:
            raise ValueError(f"the saved state holds no requirement for {state['call_ids'][0]!r}")
        if decision.kind is not DecisionKind.null:
            apply(requirement, decision)
    run = {"run_id": state["run_id"], "session_id": state["session_id"], "requirements": requirements}
    if state.get("inputs"):  # input added while paused (`add_input`): agno's own `input` of acontinue_run
        run["input"] = "\n\n".join(state["inputs"])
    return run


def apply(requirement: Any, decision: Decision) -> None:
    """Hand one decision to its requirement through agno's own methods."""
    if requirement.needs_external_execution:  # the approval tool: the decision is its result
        requirement.set_external_execution_result(decision.as_text())
    elif requirement.needs_confirmation:  # a gated tool: agno runs it only once confirmed
        if decision.kind is DecisionKind.approve:
            requirement.confirm()
        else:  # deny, or an edit agno cannot run: the text is the call's result
            requirement.reject(note=decision.as_text())
    else:
        raise ValueError(f"requirement for {requirement.tool_execution.tool_name!r} takes no decision "
                         f"(pause type {requirement.pause_type!r})")
