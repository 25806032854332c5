"""SmolagentsEmulatedAdapter (`emulated`): agent.interrupt() from a step callback taken as the pause, the live agent
its state, resumed with agent.run(task, reset=False); the run ends through the final_answer tool."""

from __future__ import annotations

import pytest

pytest.importorskip("smolagents")

from arena_builtins.adapters.smolagents import SmolagentsEmulatedAdapter  # noqa: E402
from arena_builtins.adapters.smolagents.tools import PENDING  # noqa: E402
from tests.adapters.smolagents.conftest import APPROVAL, ITEMS  # noqa: E402
from tests.adapters.smolagents.history import needs_text_history  # noqa: E402
from tests.conftest import normalised  # noqa: E402


# -- emulated: agent.interrupt() from a step callback, agent.run(task, reset=False) ----------------------


@needs_text_history
def test_emulated_scripted_model_finishes_through_final_answer(emulated, vanilla):
    """Tool calls, pause and final text equal vanilla's (test_conformance.py). The model side differs:
    smolagents' ToolCallingAgent makes the model finish through a `final_answer` tool call where
    vanilla's model answers in text."""
    results, _ = emulated
    for r in results:
        final = r.trace[-1]
        assert final.type == "final"
        last = [e for e in r.trace if e.type == "model_call"][-1].response
        assert not last.get("text") and last["tool_calls"] == [
            {**last["tool_calls"][0], "name": "final_answer", "args": {"answer": final.text}}
        ], r.item_id
        v_last = [e for e in vanilla[r.item_id].trace if e.type == "model_call"][-1].response
        assert v_last["text"] == final.text and not v_last.get("tool_calls"), r.item_id


@needs_text_history
def test_emulated_eager_sibling_runs_before_the_pause(emulated_eager, vanilla_eager):
    """scripted-eager: agent.interrupt() only takes effect between steps, so the book_room of the
    request_approval step has executed (leg 0) before the run stops. Exact difference from vanilla (which
    holds the sibling): approved items' book_room moves from leg 1 to leg 0 before `suspended`; denied
    items gain a leg-0 book_room before `suspended`. The model then sees the earlier BOOKED result and
    never books again; everything else is identical. This holds in both call orders of the step (book_room
    first on Tuesdays and Thursdays): the tool trace does not depend on the order.
    Approved items also fail args_as_requested: nothing consequential ran after the approval
    (test_conformance.py's SIBLING_RAN_FIRST)."""
    for r in emulated_eager:
        v = vanilla_eager[r.item_id]
        approved = ITEMS[r.item_id].resume_with[0].approved
        got, expected = normalised(r), normalised(v)
        if approved:
            i = next(k for k, e in enumerate(expected) if e["type"] == "tool_call" and e["tool"] == "book_room")
            book = {**expected.pop(i), "leg": 0}
        else:
            assert not any(e.get("tool") == "book_room" for e in expected)
            book = next(e for e in got if e.get("tool") == "book_room")
            assert book["leg"] == 0 and book["result"].startswith("BOOKED")
        s = next(k for k, e in enumerate(expected) if e["type"] == "suspended")
        expected.insert(s, book)
        assert got == expected, r.item_id
        assert sum(e.get("tool") == "book_room" for e in got) == 1


@needs_text_history
def test_emulated_state_is_the_live_agent(run_adapter):
    """The suspended state is the in-memory ToolCallingAgent (emulated): the same object is resumed."""
    from smolagents import ToolCallingAgent

    seen = []

    class Spy(SmolagentsEmulatedAdapter):
        async def resume(self, state, decision, ctx):
            seen.append(state)
            assert isinstance(state.agent, ToolCallingAgent)
            step = state.step
            assert [c.name for c in step.tool_calls] == [APPROVAL] and step.observations == PENDING
            return await super().resume(state, decision, ctx)

    (r,) = run_adapter(Spy, items=["hitl-01"])
    assert r.status == "passed" and len(seen) == 1
    assert ITEMS["hitl-01"].resume_with[0].as_text() == seen[0].step.observations
