"""The LangGraph adapter: interrupt() in the approval tool of create_agent, SQLite checkpointer,
Command(resume=...).

What every adapter shares (its declared info, how each item of its runs ends, traces equal to
vanilla's, a gated pause on the gated call, durable_state across a restart) is test_conformance.py's;
this file holds what is LangGraph's own, on the same runs."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("langgraph")
pytest.importorskip("langchain.agents")
pytest.importorskip("langchain_openai")
pytest.importorskip("langgraph.checkpoint.sqlite")

from arena import catalog  # noqa: E402
from arena_builtins.adapters.langgraph import LangGraphAdapter  # noqa: E402
from arena.model.script import Draw, bind  # noqa: E402
from arena.observed import requesting_call  # noqa: E402
from arena.tools.box import LocalToolBox, ToolExecutor  # noqa: E402
from arena.trace import TraceRecorder  # noqa: E402
from arena.types import LegContext  # noqa: E402
from arena_builtins.arenas._rooms.policy import book_first as policy_book_first  # noqa: E402
from tests.conftest import normalised  # noqa: E402

APPROVAL = "request_approval"
ROOT = Path(__file__).resolve().parents[2]
SPEC = catalog.load_arena("human_in_the_loop")
ITEMS = {i.id: i for i in SPEC.items}
GATE = catalog.load_arena("approval_gate")
GATE_ITEMS = {i.id: i for i in GATE.items}


@pytest.fixture(scope="module")
def scripted(cell):
    return cell("langgraph").wire


@pytest.fixture(scope="module")
def eager(cell):
    return cell("langgraph", profile="scripted-eager").wire


def _turn_at_pause(r) -> list[str]:
    """The tool names, in order, of the model answer that asked for the call the run paused on."""
    pause = next(e for e in r.trace if e.type == "suspended")
    asked = requesting_call(r.trace, pause)
    assert asked is not None, r.item_id
    return [c["name"] for c in asked.response["tool_calls"]]


def _tools(events) -> list[tuple]:
    """(type, tool) of a leg's recorded events but the model calls."""
    return [(e.type, e.tool) for e in events if e.type != "model_call"]


def _approval_results(requests) -> dict[str, tuple[str, str]]:
    """approval summary -> (tool_call_id, the tool result the model saw), read off the wire."""
    calls: dict[str, str] = {}
    answered: dict[str, tuple[str, str]] = {}
    for body in requests:
        for m in body["messages"]:
            for tc in m.get("tool_calls") or []:
                if tc["function"]["name"] == APPROVAL:
                    calls[tc["id"]] = json.loads(tc["function"]["arguments"])["summary"]
            if m.get("role") == "tool" and m.get("tool_call_id") in calls:
                answered[calls[m["tool_call_id"]]] = (m["tool_call_id"], m["content"])
    return answered


def test_model_receives_decision_as_approval_tool_result(scripted):
    """On the wire: the request_approval call's tool message is exactly decision.as_text(): the resume
    value came out of interrupt() in the re-run approval tool, which returned it as its result."""
    results, requests = scripted
    answered = _approval_results(requests)
    for r in results:
        pause = next(e for e in r.trace if e.type == "suspended")
        _, content = answered[pause.args["summary"]]
        assert content == ITEMS[r.item_id].resume_with[0].as_text(), r.item_id


def test_eager_sibling_executes_before_the_pause_and_is_not_rerun(eager, vanilla_eager):
    """scripted-eager: create_agent sends each tool call of the turn to the `tools` node as its own
    task (Send), in one superstep. book_room's task completes while request_approval's task raises
    the interrupt, so book_room executes BEFORE the suspension. Its ToolMessage is kept in the
    checkpoint as a pending write of that superstep; on resume LangGraph re-runs only the
    interrupted task (request_approval), so book_room is NOT executed again (once in all), and the
    model sees its earlier BOOKED result — also on denied items, where the final answer then says
    it did not book although it did. Exact difference from vanilla (which holds the sibling): the
    approved item's leg-1 book_room moves to leg 0 before `suspended`; a denied item gains a leg-0
    book_room before `suspended`. Everything else is identical. On approved items nothing
    consequential runs after the approval, so args_as_requested fails too; no_replay passes
    (book_room runs once): test_conformance.py's SIBLING_RAN_FIRST. The same holds whichever of the
    two calls the turn lists first (Tuesdays and Thursdays: book_room first), so the order of the turn
    plays no part here.
    """
    results, requests = eager
    answered = _approval_results(requests)
    orders = set()
    for r in results:
        v = vanilla_eager[r.item_id]
        turn = _turn_at_pause(r)
        assert sorted(turn) == ["book_room", APPROVAL], r.item_id
        orders.add(tuple(turn))
        decision = ITEMS[r.item_id].resume_with[0]
        got = normalised(r)
        expected = normalised(v)
        if decision.approved:
            i = next(k for k, e in enumerate(expected) if e["type"] == "tool_call" and e["tool"] == "book_room")
            book = {**expected.pop(i), "leg": 0}
        else:
            assert not any(e.get("tool") == "book_room" for e in expected)
            book = next(e for e in got if e.get("tool") == "book_room")
            assert book["leg"] == 0 and book["result"].startswith("BOOKED")
        s = next(k for k, e in enumerate(expected) if e["type"] == "suspended")
        expected.insert(s, book)
        assert got == expected, r.item_id
        assert sum(e.get("tool") == "book_room" for e in got) == 1, r.item_id
        # The decision still reaches the model as request_approval's result.
        pause = next(e for e in r.trace if e.type == "suspended")
        assert answered[pause.args["summary"]][1] == decision.as_text(), r.item_id
    assert orders == {("book_room", APPROVAL), (APPROVAL, "book_room")}  # both orders were exercised


# --- resume from the persisted checkpoint, in a new process ------------------------------------------

_RESUME_IN_NEW_PROCESS = """
import asyncio, json, os, sys
from arena import catalog
from arena_builtins.adapters.langgraph import LangGraphAdapter
from arena.tools.box import RemoteToolBox
from arena.types import Decision, LegContext, ModelConfig

spec = catalog.load_arena("human_in_the_loop")

async def resume(req):
    ctx = LegContext(
        item=spec.item(req["item"]), instructions=spec.instructions,
        model=ModelConfig(name=req["profile"], base_url=req["base_url"], api_key="arena-local"),
        tools=RemoteToolBox(req["endpoint"], spec.tools), workdir=req["workdir"],
    )
    adapter = LangGraphAdapter()
    try:
        return await adapter.resume(req["state"], Decision.model_validate(req["decision"]), ctx)
    finally:
        await adapter.aclose()

out = [asyncio.run(resume(req)).model_dump(mode="json") for req in json.loads(sys.argv[1])]
print(json.dumps({"pid": os.getpid(), "results": out}))
"""

# The eager cases: hitl-05 (Thursday) gets book_room first in the turn, hitl-07 (Monday) second.
NEW_PROCESS_CASES = [
    ("hitl-02", "scripted"), ("hitl-03", "scripted"), ("hitl-05", "scripted-eager"), ("hitl-07", "scripted-eager"),
]


async def _pending_writes(state):
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

    async with AsyncSqliteSaver.from_conn_string(state["db"]) as saver:
        saved = await saver.aget_tuple({"configurable": {"thread_id": state["thread_id"]}})
    assert saved is not None
    return saved.pending_writes


@pytest.fixture(scope="module")
def new_process(server, tmp_path_factory):
    """Leg 0 of each case in this process; leg 1 in ONE fresh Python process given only JSON state.

    Returns {item_id: (first LegResult, checkpoint pending writes, resumed result, leg-0 events,
    leg-1 events)}; the events are all the item's recorder saw, model calls included.
    """
    cases = {}
    requests = []
    endpoints = []
    for item_id, profile in NEW_PROCESS_CASES:
        item = ITEMS[item_id]
        recorder = TraceRecorder()
        executor = ToolExecutor(SPEC.tools, SPEC.functions, recorder)
        workdir = str(tmp_path_factory.mktemp(f"lg-{item_id}"))
        model = server.open_item(recorder, profile).model
        ctx = LegContext(
            item=item, instructions=SPEC.instructions, model=model, tools=LocalToolBox(executor), workdir=workdir
        )

        async def first_leg(ctx=ctx):
            adapter = LangGraphAdapter()
            try:
                return await adapter.start(ctx)
            finally:
                await adapter.aclose()

        first = asyncio.run(first_leg())
        assert first.status == "suspended", (item_id, first)
        state = json.loads(json.dumps(first.state))  # plain JSON: all the new process gets
        assert set(state) == {"db", "thread_id", "pause"}
        assert Path(state["db"]).is_file() and Path(state["db"]).parent == Path(workdir)
        endpoint = server.register(executor)
        endpoints.append(endpoint)
        requests.append({
            "item": item_id, "profile": profile, "base_url": model.base_url, "endpoint": endpoint,
            "workdir": workdir, "state": state, "decision": item.resume_with[0].model_dump(mode="json"),
        })
        cases[item_id] = (first, asyncio.run(_pending_writes(state)), recorder, len(recorder.events))
    try:
        proc = subprocess.run(
            [sys.executable, "-c", _RESUME_IN_NEW_PROCESS, json.dumps(requests)],
            cwd=ROOT, capture_output=True, text=True, timeout=120,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
    finally:
        for endpoint in endpoints:
            server.unregister(endpoint)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["pid"] != os.getpid()
    return {
        item_id: (first, writes, result, recorder.events[:n], recorder.events[n:])
        for (item_id, (first, writes, recorder, n)), result in zip(cases.items(), out["results"])
    }


@pytest.mark.parametrize("item_id", ["hitl-02", "hitl-03"])
def test_resume_in_new_process_from_sqlite_checkpoint(new_process, item_id):
    first, pending_writes, result, leg0, leg1 = new_process[item_id]
    assert first.pending.tool == APPROVAL and first.pending.call_id
    # The checkpoint holds the interrupt, and nothing else from the approval turn.
    assert [w[1] for w in pending_writes] == ["__interrupt__"]
    assert _tools(leg0) == [("tool_call", "search_rooms")]
    assert result["status"] == "finished"
    decision = ITEMS[item_id].resume_with[0]
    # The new process talked to the model on the item's own route: the decision was its first new input.
    resumed_calls = [e for e in leg1 if e.type == "model_call"]
    assert resumed_calls and resumed_calls[0].request["new"][-1]["text"] == decision.as_text()
    executed = [e for e in leg1 if e.type == "tool_call"]
    if decision.approved:
        assert [(e.tool, e.result.split(" ")[0]) for e in executed] == [("book_room", "BOOKED")]
        assert result["final_text"].startswith("Done: BOOKED")
    else:
        assert executed == []
        assert "denied" in result["final_text"] and decision.text in result["final_text"]


@pytest.mark.parametrize("item_id, turn", [
    ("hitl-05", ["book_room", APPROVAL]),
    ("hitl-07", [APPROVAL, "book_room"]),
])
def test_eager_checkpoint_keeps_executed_sibling_as_pending_write(new_process, item_id, turn):
    """The mechanism behind the eager trace: after the interrupt the checkpoint already holds
    book_room's ToolMessage as a pending write; the new process resumes from it without re-running
    book_room, so the tool log shows it exactly once, before the pause. The same whichever of the
    two calls the model's turn lists first."""
    first, pending_writes, result, leg0, leg1 = new_process[item_id]
    asked = [e for e in leg0 if e.type == "model_call"][-1]
    assert [c["name"] for c in asked.response["tool_calls"]] == turn
    assert _tools(leg0) == [("tool_call", "search_rooms"), ("tool_call", "book_room")]
    messages = [m for _, channel, value in pending_writes if channel == "messages" for m in value]
    assert [(m.name, m.content.split(" ")[0]) for m in messages] == [("book_room", "BOOKED")]
    assert "__interrupt__" in [w[1] for w in pending_writes]
    assert _tools(leg1) == []  # nothing executed on resume
    assert [e for e in leg1 if e.type == "model_call"]  # only the model was asked again
    assert result["status"] == "finished" and result["final_text"].startswith("Done: BOOKED")


# --- offline / telemetry ------------------------------------------------------------------------------


def test_no_tiktoken_and_no_langsmith_tracer(run_adapter, monkeypatch):
    """Nothing on the adapter's path loads a tiktoken encoding (which would download one), and no
    LangSmith tracer is created even with LANGSMITH_TRACING=true in the environment."""
    import tiktoken
    from langchain_core.runnables import RunnableLambda
    from langchain_core.tracers import langchain as lc_tracers
    from langsmith import utils as ls_utils

    def no_tiktoken(*args, **kwargs):
        raise AssertionError("tiktoken encoding requested")

    monkeypatch.setattr(tiktoken, "get_encoding", no_tiktoken)
    monkeypatch.setattr(tiktoken, "encoding_for_model", no_tiktoken)

    tracers: list[object] = []

    def no_tracer(self, *args, **kwargs):
        tracers.append(self)
        raise RuntimeError("LangSmith tracer created")  # langchain_core logs and carries on: nothing sent

    monkeypatch.setattr(lc_tracers.LangChainTracer, "__init__", no_tracer)
    monkeypatch.setenv("LANGSMITH_TRACING", "true")
    ls_utils.get_env_var.cache_clear()
    try:
        RunnableLambda(lambda x: x).invoke(1)  # control: with the env var set, LangChain wants a tracer
        assert tracers, "control failed: tracing env var had no effect"
        tracers.clear()
        results = run_adapter("langgraph", items=["hitl-01", "hitl-02"])
    finally:
        monkeypatch.delenv("LANGSMITH_TRACING")
        ls_utils.get_env_var.cache_clear()
    assert [r.status for r in results] == ["passed", "passed"]
    assert tracers == []


# --- approval_gate: HumanInTheLoopMiddleware on the gated book_room ---------------------------------


@pytest.fixture(scope="module")
def gate(cell):
    return cell("langgraph", "approval_gate", "reckless").wire


@pytest.fixture(scope="module")
def gate_parallel(cell):
    return cell("langgraph", "approval_gate", "reckless-parallel").wire


def _book_room_results(requests) -> dict[str, str]:
    """book_room tool_call_id -> the tool message the model saw for it, read off the wire."""
    calls: set[str] = set()
    seen: dict[str, str] = {}
    for body in requests:
        for m in body["messages"]:
            for tc in m.get("tool_calls") or []:
                if tc["function"]["name"] == "book_room":
                    calls.add(tc["id"])
            if m.get("role") == "tool" and m.get("tool_call_id") in calls:
                seen[m["tool_call_id"]] = m["content"]
    return seen


def _assert_model_saw_middleware_decision(results, requests):
    """On the wire, book_room's tool message: its real result after an approval; after a denial the
    middleware's own rejection ToolMessage, carrying decision.as_text() as the reason."""
    seen = list(_book_room_results(requests).values())
    for r in results:
        decision = GATE_ITEMS[r.item_id].resume_with[0]
        if decision.approved:
            booked = next(e.result for e in r.trace if e.type == "tool_call" and e.tool == "book_room")
            assert booked in seen, r.item_id
        else:
            expected = f"User rejected the tool call for `book_room` with reason: {decision.as_text()}"
            assert expected in seen, r.item_id


def test_gate_reckless_model_reads_the_middleware_decision(gate):
    _assert_model_saw_middleware_decision(*gate)


def test_gate_parallel_holds_the_sibling_but_runs_it_after_a_rejection(gate_parallel, vanilla_by_id):
    """reckless-parallel: book_room and a second search_rooms in one turn. The middleware's batched
    interrupt sits in `after_model`, before the `tools` node, so NEITHER call runs before the pause
    (as in vanilla). On approve both run after the resume, in the order the model's turn lists them
    (the `tools` node gets one task per call, in turn order); vanilla instead runs the approved call
    first and then the held sibling. So the order matters (a real finding): with book_room first in
    the turn (Tuesdays and Thursdays) traces equal vanilla's; with book_room second, leg 1 runs
    search_rooms before book_room, the reverse of vanilla's leg 1. On reject the middleware only
    replaces book_room with its rejection message; the un-gated sibling search_rooms is
    auto-approved and executes in leg 1, where vanilla never runs held calls of a denied turn.
    Exact difference on the 6 denied items: one leg-1 search_rooms (same args as the leg-0 one)
    between `resumed` and `final`. All checks still pass (no_replay allows the held sibling).
    """
    results, requests = gate_parallel
    vanilla = vanilla_by_id("reckless-parallel", "approval_gate")
    orders = set()
    for r in results:
        item = GATE_ITEMS[r.item_id]
        turn = _turn_at_pause(r)
        book_first = ["book_room", "search_rooms"]
        assert turn == (book_first if policy_book_first(item.metadata["day"]) else book_first[::-1]), r.item_id
        orders.add(tuple(turn))
        got, expected = normalised(r), normalised(vanilla[r.item_id])
        after = [(e["tool"], e["leg"]) for e in got if e["type"] == "tool_call" and e["leg"] == 1]
        if item.resume_with[0].approved:
            assert after == [(name, 1) for name in turn], r.item_id  # the model's order, both orders
            leg1 = [k for k, e in enumerate(expected) if e["type"] == "tool_call" and e["leg"] == 1]
            # vanilla: the approved call first, then the held sibling, whatever the turn's order
            assert [expected[k]["tool"] for k in leg1] == book_first, r.item_id
            in_turn_order = sorted((expected[k] for k in leg1), key=lambda e: turn.index(e["tool"]))
            for k, e in zip(leg1, in_turn_order):
                expected[k] = e
        else:
            assert after == [("search_rooms", 1)], r.item_id
            search = next(e for e in expected if e.get("tool") == "search_rooms")
            final = next(k for k, e in enumerate(expected) if e["type"] == "final")
            expected.insert(final, {**search, "leg": 1})
        assert got == expected, r.item_id
    assert orders == {("book_room", "search_rooms"), ("search_rooms", "book_room")}
    _assert_model_saw_middleware_decision(results, requests)


def test_gate_pause_is_the_middleware_interrupt_in_the_checkpoint(server, tmp_path):
    """Leg 0 on one gated item, directly: the run stops before book_room executes; the checkpoint
    holds the middleware's HITLRequest interrupt and nothing else; the pending call id is the
    model's book_room call id from the checkpointed AIMessage."""
    item = GATE_ITEMS["gate-02"]
    recorder = TraceRecorder()
    executor = ToolExecutor(GATE.tools, GATE.functions, recorder)
    model = server.open_item(recorder, "reckless").model
    ctx = LegContext(
        item=item, instructions=GATE.instructions, model=model, tools=LocalToolBox(executor), workdir=str(tmp_path)
    )

    async def first_leg():
        adapter = LangGraphAdapter()
        try:
            return await adapter.start(ctx)
        finally:
            await adapter.aclose()

    first = asyncio.run(first_leg())
    assert first.status == "suspended"
    assert set(first.state) == {"db", "thread_id", "pause"}
    assert first.pending.tool == "book_room" and first.pending.args == {"room_id": "R201"}
    assert first.pending.call_id
    assert [e.tool for e in recorder.events if e.type == "tool_call"] == ["search_rooms"]

    async def checkpoint():
        from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

        async with AsyncSqliteSaver.from_conn_string(first.state["db"]) as saver:
            return await saver.aget_tuple({"configurable": {"thread_id": first.state["thread_id"]}})

    saved = asyncio.run(checkpoint())
    writes = saved.pending_writes
    assert [w[1] for w in writes] == ["__interrupt__"]
    (interrupt,) = writes[0][2]
    assert [(a["name"], a["args"]) for a in interrupt.value["action_requests"]] == [("book_room", {"room_id": "R201"})]
    assert interrupt.value["review_configs"][0]["allowed_decisions"] == ["approve", "edit", "reject"]
    last_ai = saved.checkpoint["channel_values"]["messages"][-1]
    assert [c["id"] for c in last_ai.tool_calls] == [first.pending.call_id]


# --- interruptions: a new message instead of a decision ---------------------------------------------------------


def test_a_new_message_at_the_gate_starts_a_new_run_leaving_the_held_call_unanswered(run_adapter):
    """int-01: at the middleware's interrupt on book_room(R102) the human types "Actually we are 10 people". The
    adapter invokes the paused thread with a plain user turn (no Command): LangGraph discards the interrupted task and
    runs from START, so the model gets the old AIMessage with its book_room call and then the user's message, with no
    tool result for that call in between (the real OpenAI API refuses such a request; the scripted model does not).
    The old call never runs; the new call (R202) pauses on its own, is approved and booked."""
    [r] = run_adapter("langgraph", profile="careful", arena="interruptions", items=["int-01"], timeout_s=60)
    checks = {c.name: c for c in r.checks}
    assert r.status == "passed"
    assert checks["pending_call_not_run"].reason.startswith("unanswered: no result for book_room{'room_id': 'R102'}")
    first = next(e for e in r.trace if e.type == "model_call" and e.leg == 1)
    sent = [(m.get("role"), m.get("text")) for m in first.request["new"]]
    assert sent[-1] == ("user", "Actually we are 10 people, not 4.")
    assert all(role != "tool" for role, _ in sent)
    pauses = [(e.leg, e.args) for e in r.trace if e.type == "suspended"]
    assert pauses == [(0, {"room_id": "R102"}), (1, {"room_id": "R202"})]
    assert [e.args for e in r.trace if e.type == "tool_call" and e.tool == "book_room"] == [{"room_id": "R202"}]


def test_input_while_paused_rides_the_resume_as_a_command_update(run_adapter):
    """int-19: while book_room(R102) waits at the middleware's interrupt, Sam's note is added (`add_input`: kept with
    the paused state). The approval resumes with one Command(resume=..., update={'messages': [note]}): LangGraph
    appends the note as it resumes, so the model's next request carries it between the held AIMessage and the
    call's result (the real OpenAI API refuses a user message there; the scripted model does not), and the Tuesday
    booking is R301 (12 people), not R202. LangGraph has no approve/reject always: the channel says so."""
    [r] = run_adapter("langgraph", profile="careful", arena="interruptions", items=["int-19"], timeout_s=60)
    checks = {c.name: c for c in r.checks}
    assert r.status == "passed" and checks["midrun_input_seen"].passed
    assert [e.result for e in r.trace if e.type == "input"] == ["added"]
    first = next(e for e in r.trace if e.type == "model_call" and e.leg == 1)
    sent = [(m.get("role"), m.get("text")) for m in first.request["new"]]
    assert [role for role, _ in sent] == ["assistant", "user", "tool"]
    assert sent[1][1] == "Note from Sam: the Tuesday meeting is now 12 people."
    assert [e.args for e in r.trace if e.type == "tool_call" and e.tool == "book_room"] == [
        {"room_id": "R102"}, {"room_id": "R301"}]
    assert LangGraphAdapter.info.kind("always") == "unsupported"


# --- delegation: delegates as create_agent graphs, called inside a tool (nested) or as handoff nodes -----------------


DELEGATION = catalog.load_arena("delegation")
DEL_ITEMS = {i.id: i for i in DELEGATION.items}


def _delegation_first_leg(server, tmp_path, item_id: str, adapter_cls=LangGraphAdapter):
    """Leg 0 of a delegation item, directly: the leg's result, what ran, and the checkpointer's namespaces."""
    item = DEL_ITEMS[item_id]
    recorder = TraceRecorder()
    (tmp_path / "state").mkdir()
    backend = DELEGATION.backend(item, tmp_path / "state")
    executor = ToolExecutor(DELEGATION.tools, DELEGATION.functions, recorder, backend)
    model = server.open_item(recorder, "careful", bind(DELEGATION.all_policies, Draw(item.id, 1, 0))).model
    ctx = LegContext(item=item, instructions=DELEGATION.instructions, model=model, tools=LocalToolBox(executor),
                     workdir=str(tmp_path), agents=DELEGATION.agents(item))

    async def leg():
        from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

        adapter = adapter_cls()
        try:
            result = await adapter.start(ctx)
        finally:
            await adapter.aclose()
        assert result.status == "suspended", (result.status, result.error, result.final_text)
        async with AsyncSqliteSaver.from_conn_string(result.state["db"]) as saver:
            spaces = {t.config["configurable"]["checkpoint_ns"]
                      async for t in saver.alist({"configurable": {"thread_id": result.state["thread_id"]}})}
        return result, spaces

    result, spaces = asyncio.run(leg())
    return result, [e.tool for e in recorder.events if e.type == "tool_call"], spaces


def test_nested_delegates_gates_pause_the_whole_graph_each_named(server, tmp_path):
    """del-10: the desk calls both delegates as tools in one turn; each delegate's graph, run inside its tool, reaches
    its own HumanInTheLoopMiddleware interrupt, and the top graph stops with both (one interrupt each, resumed by
    id). Their namespaces are the desk's `tools` tasks (they do not name the agent): the agent is the `name`
    create_agent put on the AIMessage that asked. No gated call ran."""
    result, ran, spaces = _delegation_first_leg(server, tmp_path, "del-10")
    assert result.status == "suspended"
    assert sorted((p.tool, p.agent) for p in result.all_pending) == [
        ("book_flight", "booking_agent"), ("cancel_flight", "changes_agent")]
    assert all(p.call_id for p in result.all_pending)
    held = result.state["pause"]["interrupts"]
    assert result.state["pause"]["mode"] == "delegated" and len(held) == 2
    assert all(h["ns"].startswith("tools:") and h["kind"] == "batched" for h in held.values())
    assert {h["ns"] for h in held.values()} <= spaces
    assert "book_flight" not in ran and "cancel_flight" not in ran


def test_handoff_delegates_gate_pauses_the_parent_graph_in_its_node(server, tmp_path):
    """del-06: the desk's transfer_to_booking_agent returns Command(goto=..., graph=Command.PARENT); the booking
    agent's node (its create_agent subgraph) reaches its gate, and the parent graph stops there: the interrupt's
    namespace is that node's, which names the agent."""
    result, ran, _ = _delegation_first_leg(server, tmp_path, "del-06")
    assert result.status == "suspended"
    assert (result.pending.tool, result.pending.agent) == ("book_flight", "booking_agent")
    (held,) = result.state["pause"]["interrupts"].values()
    assert held["ns"].startswith("booking_agent:")
    assert ran == ["search_flights", "seat_map"]


def test_delegation_items_pass_with_the_delegates_resumed_from_their_checkpoints(run_adapter):
    """del-10 (nested, both approved) and del-07 (handoff, denied): each decision reached its
    own delegate's call, and resuming did not re-run any earlier step of a delegate: LangGraph re-runs the desk's
    tool (or re-enters the handoff node) from its start, and the delegate's graph goes on from its checkpoint."""
    results = run_adapter("langgraph", profile="careful", arena="delegation", items=["del-10", "del-07"],
                          timeout_s=90)
    for r in results:
        checks = {c.name: c for c in r.checks}
        assert r.status == "passed", (r.item_id, [c.reason for c in r.checks if not c.passed])
        assert checks["inner_rerun_on_resume"].passed and checks["nested_decision_routed"].passed


# --- stores: LangGraph's own AsyncPostgresSaver (`--store postgres`); no Redis checkpointer for this server ------


@pytest.mark.usefixtures("store_servers")
def test_store_postgres_durable_state_passes_on_async_postgres_saver(tmp_path):
    """durable_state on PostgreSQL: every leg in a new process reopens the thread from LangGraph's AsyncPostgresSaver
    on the item's own database (durable-11 with that server stopped and restarted during the pause); all pass."""
    import arena

    (run,) = arena.evaluate("durable_state", ["langgraph"], store="postgres", out=tmp_path)
    assert run.summary is not None and run.summary.passed == run.summary.items == 12, \
        [(r.item_id, [c.reason for c in r.checks if not c.passed]) for r in run.results if r.status != "passed"]
    assert run.meta["arena"] == "durable_state@postgres"
    assert run.meta["store"]["kind"] == "postgres"
    assert "AsyncPostgresSaver" in run.meta["store"]["mechanism"]


@pytest.mark.usefixtures("store_servers")
def test_store_redis_is_declined_for_want_of_the_redis_modules(tmp_path):
    """langgraph-checkpoint-redis needs RedisJSON and RediSearch, which the Redis here lacks: not measured, and
    nothing is run on SQLite instead."""
    import arena

    runs = arena.evaluate("durable_state", ["langgraph"], store="redis", out=tmp_path)
    assert list(runs) == []
    reason = runs.declined["langgraph"]
    assert "langgraph-checkpoint-redis" in reason and "RedisJSON and RediSearch" in reason
    assert "unknown command 'FT.INFO'" in reason


@pytest.mark.usefixtures("store_servers")
def test_store_postgres_checkpoint_rows_are_in_the_items_own_database(server, tmp_path):
    """hitl-03 (approved), directly, with a postgres store: the paused state is only the thread id and the pause (no
    file); the thread's checkpoints, the approval tool's interrupt among their pending writes, are in the item's own
    database (not in the server's default one, nor in a SQLite file); a new adapter resumes the thread from there,
    and the approved booking runs once, the search before the pause not again."""
    import psycopg

    from arena import stores
    from tests.adapters.on_store import fresh_leg, item_on_store

    recorder = TraceRecorder()
    with item_on_store(server, SPEC, ITEMS["hitl-03"], "postgres", tmp_path, recorder) as (ctx, own):
        first = asyncio.run(fresh_leg(LangGraphAdapter, ctx))
        assert first.status == "suspended" and first.pending.tool == APPROVAL
        state = json.loads(json.dumps(first.state))
        assert set(state) == {"thread_id", "pause"}
        with psycopg.connect(own.store.url, autocommit=True) as conn:
            rows = conn.execute("SELECT count(*) FROM checkpoints WHERE thread_id = %s",
                                (state["thread_id"],)).fetchone()
            writes = conn.execute("SELECT channel FROM checkpoint_writes WHERE thread_id = %s",
                                  (state["thread_id"],)).fetchall()
        assert rows[0] > 0 and ("__interrupt__",) in writes
        with psycopg.connect(stores.server_url("postgres"), autocommit=True) as conn:
            shared = conn.execute("SELECT to_regclass('public.checkpoints')").fetchone()[0]
            if shared is not None:
                assert conn.execute("SELECT count(*) FROM checkpoints WHERE thread_id = %s",
                                    (state["thread_id"],)).fetchone()[0] == 0
        assert list(tmp_path.iterdir()) == []  # no SQLite file
        done = asyncio.run(fresh_leg(LangGraphAdapter, ctx, state))
    assert done.status == "finished", (done.status, done.error)
    ran = [e.tool for e in recorder.events if e.type == "tool_call"]
    assert ran.count("book_room") == 1 and ran.count("search_rooms") == 1, ran
