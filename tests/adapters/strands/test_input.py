"""strands input at a pause: a new message is refused by strands at its interrupt; input added while paused is folded
in by the ContextInjector; and (t)rust, an approve marked always (adapters/strands/input.py, tools.py)."""

from __future__ import annotations

import pytest

pytest.importorskip("strands")

from tests.adapters.strands.conftest import NAME  # noqa: E402


# --- interruptions: a new message instead of a decision -------------------------------------------------------


def test_a_new_message_at_the_gate_is_refused_by_strands(run_adapter):
    """int-01: the message goes to the restored agent as a new prompt, strands' way of taking user input; at a pause
    strands takes only interruptResponse's and raises TypeError, so the leg ends in that error. The held book_room
    never runs and the model never sees the message: pending_call_not_run's fate is `refused`."""
    [r] = run_adapter(NAME, profile="careful", arena="interruptions", items=["int-01"], timeout_s=60)
    checks = {c.name: c for c in r.checks}
    assert r.status == "failed"
    assert checks["pending_call_not_run"].passed
    assert checks["pending_call_not_run"].reason.startswith("refused: ")
    assert "must resume from interrupt with list of interruptResponse's" in checks["pending_call_not_run"].reason
    error = next(e for e in r.trace if e.type == "error")
    assert error.leg == 1 and error.text.startswith("TypeError: prompt_type=<class 'str'>")
    assert not [e for e in r.trace if e.type in ("tool_call", "model_call") and e.leg >= 1]
    assert not checks["decision_reached_model"].passed


def test_trust_stands_for_later_calls_and_overrides_a_siblings_denial_input_is_folded_in(run_adapter):
    """always: an approve marked always is strands' documented (t)rust, the tool recorded in agent.state and checked
    before the hook interrupts: int-15's Tuesday booking runs without a pause. At one pause holding both bookings
    (int-17) the R102 hook's trust is set before the R301 hook checks it, so R301 runs despite its explicit
    denial (strands' own HumanInTheLoop(enable_trust=True) does the same). input (emulated): the note, kept in
    agent.state, is folded by the ContextInjector after the held call's result, before the next booking (int-19)."""
    results = run_adapter(NAME, profile="careful", arena="interruptions", items=["int-15", "int-17", "int-19"],
                          timeout_s=60)
    by_id = {r.item_id: r for r in results}
    checks = {i: {c.name: c for c in r.checks} for i, r in by_id.items()}
    assert by_id["int-15"].status == "passed"
    assert checks["int-15"]["sticky_approval_scoped"].reason == "paused 1 time(s), booked R102, R202"
    assert by_id["int-17"].status == "failed"
    assert checks["int-17"]["sticky_approval_scoped"].reason == (
        "paused 1 time(s), booked R102, R301; expected R102 booked")
    assert not checks["int-17"]["denied_not_executed"].passed
    assert by_id["int-19"].status == "passed" and checks["int-19"]["midrun_input_seen"].passed
    note = next(e for e in by_id["int-19"].trace if e.type == "input")
    seen = next(e for e in by_id["int-19"].trace if e.type == "model_call" and e.seq > note.seq)
    assert [m.get("role") for m in seen.request["new"]][-2:] == ["tool", "user"]  # after the held call's result
    assert seen.request["new"][-1]["text"] == note.text
