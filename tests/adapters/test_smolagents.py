"""smolagents: no pause primitive. `SmolagentsAdapter` is `unsupported` (request_approval is just a tool and
the run goes to completion); `SmolagentsEmulatedAdapter` is `emulated` (step callback + agent.interrupt(),
resumed with agent.run(task, reset=False) on the live agent).

smolagents sends its tool history as TEXT ("Calling tools:\\n[...]" assistant messages answered by
"Observation:\\n..." user messages), never as native tool_calls / role "tool" messages. The tests that need
the scripted policy to follow that history (to get past search_rooms) are skipped, with that reason, while
the policy cannot read it; the wire-format and unsupported-never-suspends tests run regardless.

What every adapter shares (its declared info, a lazily imported framework, how each item of its runs
ends, traces equal to vanilla's, nothing past loopback) is test_conformance.py's; this file holds what
is smolagents' own, on the same runs.
"""

from __future__ import annotations

import json

import pytest

pytest.importorskip("smolagents")

from arena import catalog  # noqa: E402
from arena_builtins.adapters.smolagents import PENDING, SmolagentsEmulatedAdapter  # noqa: E402
from arena_builtins.arenas._rooms.policy import book_first as policy_book_first  # noqa: E402
from tests.conftest import behaviour, normalised  # noqa: E402

APPROVAL = "request_approval"
ITEMS = {i.id: i for i in catalog.load_arena("human_in_the_loop").items}
NOT_APPROVED = "NOT APPROVED: request_approval was executed instead of pausing for a human"


def _policy_reads_smolagents_history() -> bool:
    """Feed the real policy smolagents' own serialisation of 'task, then one search_rooms step'."""
    from smolagents.memory import ActionStep, TaskStep, ToolCall
    from smolagents.models import get_clean_message_list, tool_role_conversions
    from smolagents.monitoring import Timing

    from arena_builtins.arenas._rooms.policy import next_turn
    from arena_builtins.arenas._rooms.tools import search_rooms

    steps = TaskStep(task="Book a meeting room for 3 people on Monday.").to_messages() + ActionStep(
        step_number=1,
        timing=Timing(start_time=0.0),
        tool_calls=[ToolCall(name="search_rooms", arguments={"capacity": 3, "day": "Monday"}, id="call_0")],
        observations=search_rooms(3, "Monday"),
    ).to_messages()
    messages = json.loads(json.dumps(get_clean_message_list(steps, role_conversions=tool_role_conversions)))
    turn = next_turn([{"role": "system", "content": "x"}, *messages])
    return [c.name for c in turn.tool_calls] == [APPROVAL]


needs_text_history = pytest.mark.skipif(
    not _policy_reads_smolagents_history(),
    reason="the scripted policy does not read smolagents' text tool history ('Calling tools:' / 'Observation:') yet",
)


# Every run's connections stay on loopback: test_conformance.py's test_nothing_left_loopback, per run.


@pytest.fixture(scope="module")
def emulated(cell):
    return cell("smolagents_emulated").wire


@pytest.fixture(scope="module")
def emulated_eager(cell):
    return cell("smolagents_emulated", profile="scripted-eager").results


@pytest.fixture(scope="module")
def unsupported(cell):
    return cell("smolagents").wire


@pytest.fixture(scope="module")
def unsupported_eager(cell):
    return cell("smolagents", profile="scripted-eager").results


def _text(message: dict) -> str:
    content = message.get("content")
    if isinstance(content, list):
        return "\n".join(p.get("text", "") for p in content)
    return content or ""


# -- what goes over the wire (independent of the policy) ---------------------------------------------


@pytest.mark.parametrize("which", ["emulated", "unsupported"])
def test_wire_format_is_text_history(which, request):
    """smolagents' real OpenAIServerModel: list-of-text-parts content, tool_choice "required", a final_answer
    tool, stop sequences, and tool history as text only (no assistant tool_calls, no role "tool").
    A policy that follows that history ends each run through the final_answer tool; one that could not
    would make every run hit max_steps=20 and end with smolagents' tool-less final-answer request."""
    _, requests = request.getfixturevalue(which)
    assert requests
    saw_text_calls = saw_observation = False
    for body in requests:
        if "tools" in body:
            assert body["tool_choice"] == "required"
            assert {t["function"]["name"] for t in body["tools"]} == {"search_rooms", APPROVAL, "book_room", "final_answer"}
            assert body["stop"] == ["Observation:", "Calling tools:"]
        else:  # only after max_steps: smolagents' provide_final_answer asks for a plain-text answer
            assert "Based on the above, please provide an answer" in _text(body["messages"][-1])
        for m in body["messages"]:
            assert m["role"] in ("system", "user", "assistant")
            assert "tool_calls" not in m
            assert isinstance(m["content"], list) and all(p["type"] == "text" for p in m["content"])
            text = _text(m)
            saw_text_calls |= m["role"] == "assistant" and text.startswith("Calling tools:\n[{'id': ")
            saw_observation |= m["role"] == "user" and text.startswith("Observation:\n")
    assert saw_text_calls and saw_observation


# -- unsupported: never pauses ------------------------------------------------------------------------


@pytest.mark.parametrize("which", ["unsupported", "unsupported_eager"])
def test_unsupported_never_suspends(which, request):
    """Every item fails, in one leg, never errored (test_conformance.py's NEVER_PAUSES): no pause at all."""
    results = request.getfixturevalue(which)
    results = results[0] if isinstance(results, tuple) else results
    for r in results:
        assert not any(e.type in ("suspended", "resumed") for e in r.trace), r.item_id
        checks = {c.name: c for c in r.checks}
        assert checks["suspended"].reason == "no suspended state was observed: the run never paused"


@needs_text_history
def test_unsupported_trace_and_checks(unsupported, vanilla):
    """request_approval is executed by the harness ("NOT APPROVED: ..."), the model reads that as a
    denial and finishes: no booking on any item, so approved items fail tool_called_once_after_resume
    and denied items still pass tool_not_used and acknowledged. With no pause and no resume, every
    check about the pause and the decision fails too (args_as_requested on approved items,
    decision_reached_model and no_replay on all); the universal checks pass (those sets:
    test_conformance.py's NEVER_PAUSES)."""
    results, _ = unsupported
    for r in results:
        v = normalised(vanilla[r.item_id])
        got = normalised(r)
        summary = next(e for e in v if e["type"] == "suspended")["args"]["summary"]
        assert got[0] == v[0] and got[0]["tool"] == "search_rooms", r.item_id
        assert got[1] == {
            "leg": 0,
            "type": "tool_call",
            "tool": APPROVAL,
            "args": {"summary": summary},
            "result": f"{NOT_APPROVED} ({summary})",
        }
        assert got[2]["type"] == "final" and got[2]["text"].startswith("Understood: the booking was denied (")
        assert len(got) == 3


@needs_text_history
def test_unsupported_eager_books_alongside_the_approval_call(unsupported_eager, vanilla_eager):
    """scripted-eager: smolagents runs every call of a step, one after the other in the model's order
    (the adapter sets max_tool_threads=1), so every item books: denied items now fail tool_not_used as
    well. The model asks for book_room first on Tuesdays and Thursdays and second otherwise, and the
    executed order follows it: book_room runs right before or right after the (executed)
    request_approval. Both orders are pinned. With no pause and no resume, args_as_requested (approved),
    decision_reached_model and no_replay fail too; tool_called_once_after_resume fails on approved items
    because nothing was ever approved, although book_room did run once (those sets:
    test_conformance.py's NEVER_PAUSES_AND_BOOKS)."""
    for r in unsupported_eager:
        got = normalised(r)
        book_first = policy_book_first(ITEMS[r.item_id].metadata["day"])
        step = ["book_room", APPROVAL] if book_first else [APPROVAL, "book_room"]
        assert behaviour(r) == [
            ("tool_call", "search_rooms"),
            *(("tool_call", tool) for tool in step),
            ("final", None),
        ], r.item_id
        asked = [e for e in r.trace if e.type == "model_call"][1]
        assert [c["name"] for c in asked.response["tool_calls"]] == step, r.item_id
        assert got[0] == normalised(vanilla_eager[r.item_id])[0]
        approval, book = (got[2], got[1]) if book_first else (got[1], got[2])
        assert approval["result"].startswith(NOT_APPROVED) and book["result"].startswith("BOOKED ")


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
def test_emulated_decision_is_the_approval_observation(emulated):
    """On the wire: the user message answering the request_approval step is "Observation:\\n" + the
    decision text, followed by the task again (run(task, reset=False) appends a TaskStep). The
    placeholder observation never reaches the model: the interrupt stops the run before the next call."""
    results, requests = emulated
    answered: dict[str, str] = {}  # approval summary -> the observation the model saw
    for body in requests:
        messages = body["messages"]
        assert PENDING not in json.dumps(body)
        for m, nxt in zip(messages, messages[1:]):
            text = _text(m)
            if m["role"] == "assistant" and f"'name': '{APPROVAL}'" in text:
                summary = text.split("'summary': '", 1)[1].split("'}", 1)[0]
                answered[summary] = _text(nxt)
    for r in results:
        item = ITEMS[r.item_id]
        pause = next(e for e in r.trace if e.type == "suspended")
        expected = f"Observation:\n{item.resume_with[0].as_text()}\nNew task:\n{item.input}"
        assert answered[pause.args["summary"]] == expected, r.item_id


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


def test_cli_reports_unsupported_and_still_runs_every_item(tmp_path):
    import json
    import subprocess
    import sys

    r = subprocess.run(
        [sys.executable, "-m", "arena", "run", "human_in_the_loop", "--adapter", "smolagents", "--json", "--out", str(tmp_path)],
        capture_output=True, text=True, timeout=600,
    )
    assert r.returncode == 0, r.stderr[-2000:]
    summary = json.loads(r.stdout)
    assert summary["pause_kind"] == "unsupported" and summary["items"] == 12 and summary["errors"] == 0
    assert summary["checks"]["suspended"] == {"passed": 0, "total": 12}
    assert "has no pause primitive (pause kind unsupported)" in r.stderr


# --- --store postgres|redis -----------------------------------------------------------------------------


@pytest.mark.usefixtures("store_servers")
@pytest.mark.parametrize("store", ["postgres", "redis"])
def test_a_store_run_is_declined_smolagents_persists_no_run(tmp_path, store):
    """smolagents keeps no run anywhere (its to_dict()/save() are the agent's definition): both adapters' runs on
    PostgreSQL or Redis are not measured, with that reason."""
    from arena import evaluate
    from arena_builtins.adapters.smolagents import SmolagentsAdapter

    done = evaluate("durable_state", ["smolagents", "smolagents_emulated"], items=["durable-01"], store=store,
                    out=tmp_path)
    assert not list(done) and not done.failed
    for name, info in (("smolagents", SmolagentsAdapter.info), ("smolagents_emulated", SmolagentsEmulatedAdapter.info)):
        channel = info.channel(store)
        assert channel is not None and channel.kind == "unsupported"
        assert done.declined[name] == f"{name} has no {store} store: {channel.mechanism}"
        assert "smolagents 1.26.0 cannot persist a run" in channel.mechanism
