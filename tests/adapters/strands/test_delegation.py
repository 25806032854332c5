"""strands delegation: delegates as tools (`as_tool`) and a handoff Swarm, each pausing on a delegate's gated call
(adapters/strands/delegation.py)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

pytest.importorskip("strands")

from arena import catalog  # noqa: E402
from arena.tools.box import LocalToolBox, ToolExecutor  # noqa: E402
from arena.trace import TraceRecorder  # noqa: E402
from arena.types import Decision, DecisionKind, DecisionSet, LegContext  # noqa: E402
from tests.adapters.strands.conftest import NAME, _leg  # noqa: E402


# --- delegation: agents as tools (nested) and a Swarm (handoff) -------------------------------------------------


def test_a_delegates_gated_call_pauses_the_desk_named_and_its_turn_kept_in_the_desks_session(server, tmp_path):
    """del-10 (via tool): each delegate is `Agent.as_tool()` in the desk's tools. Both delegates reach their own
    gated call in one desk turn; strands propagates each delegate's interrupt to the desk's result, renamed under
    the desk's call (`v1:agent_as_tool:<desk toolUseId>:`), and the pause names the delegate whose call it holds.
    The delegates' interrupted turns are in the desk's persisted interrupt state (agent.json): a new adapter resumes
    each delegate from its held call (no earlier step runs again), and each decision reaches its own call."""
    from arena.model.script import Draw, bind

    spec = catalog.load_arena("delegation")
    item = spec.item("del-11")  # booking approved, cancellation denied
    recorder = TraceRecorder()
    (tmp_path / "airline").mkdir()
    backend = spec.backend(item, tmp_path / "airline")  # the item's airline sandbox, as the runner makes it
    ctx = LegContext(item=item, instructions=spec.instructions, extra=spec.leg_context(item), workdir=str(tmp_path),
                     model=server.open_item(recorder, "careful", bind(spec.all_policies, Draw(item.id, 1, 0))).model,
                     tools=LocalToolBox(ToolExecutor(spec.tools, spec.functions, recorder, backend)))
    leg0 = asyncio.run(_leg(lambda a: a.start(ctx)))
    assert leg0.status == "suspended"
    assert sorted((p.tool, p.agent) for p in leg0.all_pending) == [("book_flight", "booking_agent"),
                                                                   ("cancel_flight", "changes_agent")]
    state = json.loads(json.dumps(leg0.state))
    assert all(i.startswith("v1:agent_as_tool:") for i in state["interrupts"])
    [agent_json] = list(Path(state["storage_dir"]).rglob("agent.json"))
    persisted = json.loads(agent_json.read_text())["_internal_state"]["interrupt_state"]
    assert persisted["activated"] is True and len(persisted["context"]["sub_agent_interrupted_turns"]) == 2
    before = [e.tool for e in recorder.events if e.type == "tool_call"]
    assert "book_flight" not in before and "cancel_flight" not in before
    by_tool = {p.tool: p.call_id for p in leg0.all_pending}
    decisions = DecisionSet(decisions=[
        Decision(kind=DecisionKind.approve, call_id=by_tool["book_flight"]),
        Decision(kind=DecisionKind.deny, text="keep the outbound", call_id=by_tool["cancel_flight"])])
    leg1 = asyncio.run(_leg(lambda a: a.resume(state, decisions, ctx)))
    assert leg1.status == "finished"
    after = [e.tool for e in recorder.events if e.type == "tool_call"][len(before):]
    assert after == ["book_flight"]  # the approved call alone; nothing of the delegates' earlier steps again
    assert "keep the outbound" in leg1.final_text  # the changes agent's answer, with the denial, reached the desk


def test_a_handoff_is_a_swarm_whose_node_interrupt_pauses_the_run(run_adapter):
    """del-07 (via handoff): a strands Swarm of the desk and the delegates; the desk hands off by the Swarm's handoff
    tool (its own handoff_to_agent), the changes agent's cancel_flight interrupts in its hook, the Swarm stops
    INTERRUPTED and the pause names the changes agent; denied, it never runs and the reason reaches that agent."""
    [r] = run_adapter(NAME, profile="careful", arena="delegation", items=["del-07"], timeout_s=120)
    assert r.status == "passed", [(c.name, c.reason) for c in r.checks if not c.passed]
    [pause] = [e for e in r.trace if e.type == "suspended"]
    assert [(p["tool"], p["agent"]) for p in pause.pending] == [("cancel_flight", "changes_agent")]
    desk = [e for e in r.trace if e.type == "model_call"][0]
    assert [t for t in desk.request["tools"]] == ["handoff_to_agent"]
    assert not [e for e in r.trace if e.type == "tool_call" and e.tool == "cancel_flight"]
