"""agno adapter: external_execution on request_approval, requires_confirmation on gated tools, the run paused
in agno's SqliteDb and continued with `acontinue_run(run_id, session_id, requirements)`.

What every adapter shares (its declared info, a lazily imported framework, how each item of its runs ends,
traces equal to vanilla's, a gated pause on the gated call, durable_state across a restart, nothing past
loopback) is test_conformance.py's; this file holds what is agno's own, on the same runs."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest

pytest.importorskip("agno")

from arena import catalog  # noqa: E402
from arena.tools.box import LocalToolBox, ToolExecutor  # noqa: E402
from arena.trace import TraceRecorder  # noqa: E402
from arena.types import Decision, DecisionKind, DecisionSet, LegContext, ModelConfig  # noqa: E402
from tests.conftest import normalised  # noqa: E402
from tests.adapters.conftest import tool_messages  # noqa: E402

NAME = "agno"
HITL = catalog.load_arena("human_in_the_loop")
GATE = catalog.load_arena("approval_gate")
GATE_ITEMS = {i.id: i for i in GATE.items}


def _module():
    """The adapter's module, as its entry point names it (imported lazily: it imports no agno itself)."""
    import importlib

    return importlib.import_module(catalog.adapters()[NAME].target.partition(":")[0])


@pytest.fixture(scope="module")
def scripted(cell):
    return cell(NAME).wire


@pytest.fixture(scope="module")
def eager(cell):
    return cell(NAME, profile="scripted-eager").wire


@pytest.fixture(scope="module")
def gate(cell):
    return cell(NAME, "approval_gate", "reckless").wire


@pytest.fixture(scope="module")
def gate_parallel(cell):
    return cell(NAME, "approval_gate", "reckless-parallel").wire




# --- offline: agno's telemetry ---------------------------------------------------------------------


def test_telemetry_env_is_forced_off_even_when_the_environment_says_true(monkeypatch):
    """agno re-reads AGNO_TELEMETRY at every run and it overrides Agent(telemetry=...): the adapter forces it."""
    monkeypatch.setenv("AGNO_TELEMETRY", "true")
    _module()._import()
    assert os.environ["AGNO_TELEMETRY"] == "false"


def _ctx(spec, item_id: str, workdir: str, recorder=None, server=None, profile: str = "scripted") -> LegContext:
    recorder = recorder or TraceRecorder()
    model = server.open_item(recorder, profile).model if server is not None else None
    return LegContext(
        item=spec.item(item_id), instructions=spec.instructions,
        model=model or ModelConfig(name="scripted", base_url="http://127.0.0.1:9/v1", api_key="unused"),
        tools=LocalToolBox(ToolExecutor(spec.tools, spec.functions, recorder)), workdir=workdir,
    )


def test_no_telemetry_event_is_sent_for_the_adapters_agent(monkeypatch, tmp_path):
    """agno's own telemetry hook (agno.agent._telemetry.alog_agent_telemetry, called when a run completes)
    reaches agno's API client for an agent with telemetry on (the control), and never for the adapter's
    agent, even with AGNO_TELEMETRY=true in the environment before the adapter imported agno."""
    monkeypatch.setenv("AGNO_TELEMETRY", "true")
    adapter = _module().AgnoAdapter()
    agent = adapter._build(_ctx(HITL, "hitl-01", str(tmp_path)))
    from agno.agent import Agent
    from agno.agent import _telemetry
    from agno.api import agent as api_agent
    from agno.models.openai import OpenAILike

    sent: list = []

    async def record(run):  # agno's API call, replaced: nothing may leave the machine
        sent.append(run)

    monkeypatch.setattr(api_agent, "acreate_agent_run", record)
    assert agent.telemetry is False
    asyncio.run(_telemetry.alog_agent_telemetry(agent, session_id="s"))
    assert sent == []
    # the control: the same hook with telemetry on does reach the API client
    monkeypatch.setenv("AGNO_TELEMETRY", "true")
    control = Agent(model=OpenAILike(id="m", base_url="http://127.0.0.1:9/v1", api_key="x"), telemetry=True)
    asyncio.run(_telemetry.alog_agent_telemetry(control, session_id="s"))
    assert len(sent) == 1
    asyncio.run(adapter.aclose())


def test_completed_runs_send_no_telemetry(monkeypatch, run_adapter):
    """Whole runs (pause, resume, final answer) never call agno's telemetry API client."""
    from agno.api import agent as api_agent

    sent: list = []

    async def record(run):
        sent.append(run)

    def record_sync(run):
        sent.append(run)

    monkeypatch.setattr(api_agent, "acreate_agent_run", record)
    monkeypatch.setattr(api_agent, "create_agent_run", record_sync)
    results = run_adapter(NAME, items=["hitl-01", "hitl-02"])
    assert [r.status for r in results] == ["passed", "passed"]
    assert sent == []


def test_model_client_makes_one_attempt():
    """One attempt per request: the openai client handed to agno does not retry, nor does agno's model or agent."""
    import tempfile

    with tempfile.TemporaryDirectory() as workdir:
        adapter = _module().AgnoAdapter()
        agent = adapter._build(_ctx(HITL, "hitl-01", workdir))
        assert agent.model.async_client.max_retries == 0
        assert agent.model.max_retries == 0
        assert agent.model.retries == 0 and agent.model.retry_with_guidance is False
        assert agent.retries == 0
        assert agent.model.get_async_client() is agent.model.async_client  # agno uses the client it was given
        asyncio.run(adapter.aclose())


# --- ask: external execution, the decision is the tool result ----------------------------------------


def test_decision_reaches_model_as_approval_tool_result(scripted):
    """The model reads decision.as_text() ("APPROVED", "DENIED: reason") as request_approval's tool message:
    set_external_execution_result's text, once per item."""
    results, requests = scripted
    expected = {i.input: i.resume_with[0].as_text() for i in HITL.items}
    assert any(text.startswith("DENIED: ") for text in expected.values())
    assert sorted(tool_messages(requests, "request_approval")) == sorted(expected.items())


def test_approval_tool_is_never_executed_and_tools_get_the_models_call_id(scripted):
    """request_approval never reaches the harness (agno holds an external call); every tool that ran got agno's
    FunctionCall.call_id, which is the id the model gave the call."""
    results, _ = scripted
    for r in results:
        calls = [e for e in r.trace if e.type == "tool_call"]
        assert "request_approval" not in [e.tool for e in calls], r.item_id
        given = {c["id"] for e in r.trace if e.type == "model_call" for c in (e.response or {}).get("tool_calls") or []}
        assert calls and all(e.call_id in given for e in calls), r.item_id


def test_state_is_json_pointing_at_agnos_db_and_resumes_in_a_fresh_adapter(server, tmp_path):
    """Leg 0's state is JSON: agno's SqliteDb file under the item's work dir, which holds the paused run, and
    the requirements as agno serialises them. A second adapter (nothing shared in memory) resumes it."""
    recorder = TraceRecorder()
    ctx = _ctx(HITL, "hitl-02", str(tmp_path), recorder, server)  # a denied item
    module = _module()

    async def legs():
        first = module.AgnoAdapter()
        try:
            leg0 = await first.start(ctx)
        finally:
            await first.aclose()
        assert leg0.status == "suspended" and leg0.pending.tool == "request_approval"
        wire = json.dumps(leg0.state)  # what a durable store would keep
        state = json.loads(wire)
        assert Path(state["db_file"]).parent == tmp_path and Path(state["db_file"]).exists()
        assert state["call_ids"] == [leg0.pending.call_id]
        # agno's own store holds the run, paused on that call
        from agno.db.sqlite import SqliteDb
        from agno.run.base import RunStatus

        db = SqliteDb(db_file=state["db_file"])
        session = db.get_session(session_id=state["session_id"], session_type=_agent_session_type())
        run = next(r for r in session.runs if r.run_id == state["run_id"])
        assert run.status == RunStatus.paused
        assert [r.tool_execution.tool_call_id for r in run.active_requirements] == [leg0.pending.call_id]
        db.db_engine.dispose()
        second = module.AgnoAdapter()
        try:
            return await second.resume(state, ctx.item.resume_with[0], ctx)
        finally:
            await second.aclose()

    leg1 = asyncio.run(legs())
    decision = ctx.item.resume_with[0]
    assert decision.kind is DecisionKind.deny
    assert leg1.status == "finished" and f"({decision.text})" in leg1.final_text
    assert [e.tool for e in recorder.events if e.type == "tool_call"] == ["search_rooms"]


def _agent_session_type():
    from agno.db.base import SessionType

    return SessionType.AGENT


# --- scripted-eager: agno runs the consequential sibling before it pauses ----------------------------
# agno gathers every call of the turn that has no HITL flag and holds only the flagged one: book_room,
# emitted beside request_approval, executes in leg 0 before the run pauses, and never again on resume.
# How each item ends is test_conformance.py's SIBLING_RAN_FIRST.


def test_eager_book_room_runs_before_the_pause_once(eager, vanilla_eager):
    results, requests = eager
    for r in results:
        books = [e for e in r.trace if e.type == "tool_call" and e.tool == "book_room"]
        pause = next(e for e in r.trace if e.type == "suspended")
        assert pause.tool == "request_approval", r.item_id
        assert len(books) == 1 and books[0].leg == 0 and books[0].seq < pause.seq, r.item_id
        # otherwise vanilla's trace: book_room moved (approved) or added (denied) before the pause
        room = HITL.item(r.item_id).metadata["expected_room"]
        expected = [e for e in normalised(vanilla_eager[r.item_id]) if not (e["type"] == "tool_call"
                                                                          and e["tool"] == "book_room")]
        at = next(i for i, e in enumerate(expected) if e["type"] == "suspended")
        expected.insert(at, {"leg": 0, "type": "tool_call", "tool": "book_room", "args": {"room_id": room},
                             "result": HITL.functions["book_room"](room_id=room)})
        assert normalised(r) == expected, r.item_id
    # on resume the model gets the decision and the booking's stored result, sent again, not re-executed
    decisions = dict(tool_messages(requests, "request_approval"))
    assert decisions == {i.input: i.resume_with[0].as_text() for i in HITL.items}
    assert all(text.startswith("BOOKED ") for text in dict(tool_messages(requests, "book_room")).values())


# --- approval_gate: requires_confirmation, confirm() / reject(note=) ---------------------------------


def test_gate_denial_note_reaches_model_as_book_room_result(gate):
    """Denied: agno sends reject(note=decision.as_text()) as book_room's tool message, so the reason itself
    reaches the model; approved: book_room's real result (agno ran the held call after confirm())."""
    results, requests = gate
    expected = []
    for r in results:
        item = GATE_ITEMS[r.item_id]
        decision = item.resume_with[0]
        if decision.approved:
            book = next(e for e in r.trace if e.type == "tool_call" and e.tool == "book_room")
            assert book.leg == 1
            expected.append((item.input, book.result))
        else:
            expected.append((item.input, decision.as_text()))
            assert f"({decision.text})" in r.trace[-1].text
    assert any(not GATE_ITEMS[r.item_id].resume_with[0].approved for r in results)
    assert sorted(tool_messages(requests, "book_room")) == sorted(expected)


def test_gate_reckless_parallel_sibling_search_runs_before_the_pause(gate_parallel, vanilla_by_id):
    """book_room + a second search_rooms in one turn: agno runs the unflagged sibling in that turn and holds
    only book_room, so the search runs in leg 0 whatever the decision (vanilla holds it with the gated call)."""
    vanilla = vanilla_by_id("reckless-parallel", "approval_gate")
    for r in gate_parallel[0]:
        v = normalised(vanilla[r.item_id])
        first_search = v[0]
        expected = [e for e in v if not (e["type"] == "tool_call" and e["tool"] == "search_rooms" and e["leg"] == 1)]
        at = next(i for i, e in enumerate(expected) if e["type"] == "suspended")
        expected.insert(at, {**first_search, "leg": 0})
        assert normalised(r) == expected, r.item_id


# --- durable_state: each leg in a fresh worker process ---------------------------------------------


def test_durable_state_denial_reaches_the_model_after_the_restart(cell):
    """The worker is restarted between legs (run_durable_pair asserts the two pids differ): leg 1 has only the
    JSON state and agno reads the run back from its SqliteDb; the deny reason still reaches the model."""
    results = cell(NAME, "durable_state").results
    denied = catalog.load_arena("durable_state").item("durable-02")
    assert results[1].status == "passed"
    assert f"({denied.resume_with[0].text})" in results[1].trace[-1].text


# --- how a decision is handed to agno's requirements ------------------------------------------------


def _requirement(**flags):
    from agno.models.response import ToolExecution
    from agno.run.requirement import RunRequirement

    return RunRequirement(tool_execution=ToolExecution(tool_call_id="c1", tool_name="book_room",
                                                       tool_args={"room_id": "R1"}, **flags))


def test_decisions_map_onto_agnos_requirement_methods():
    apply = _module()._apply
    ask = _requirement(external_execution_required=True)
    apply(ask, Decision(kind="answer", text="Tuesday instead"))
    assert ask.external_execution_result == "Tuesday instead" and ask.is_resolved()
    approved = _requirement(requires_confirmation=True)
    apply(approved, Decision(kind="approve", text="go ahead"))
    assert approved.confirmation is True and approved.tool_execution.confirmed is True
    denied = _requirement(requires_confirmation=True)
    apply(denied, Decision(kind="deny", text="too big"))
    assert denied.confirmation is False and denied.tool_execution.confirmation_note == "DENIED: too big"
    # confirm() takes no arguments: an edit is a rejection carrying the human's edit, never run as edited
    edited = _requirement(requires_confirmation=True)
    decision = Decision(kind="edit", args={"room_id": "R2"})
    apply(edited, decision)
    assert edited.confirmation is False and edited.tool_execution.confirmation_note == decision.as_text()
    assert edited.tool_execution.tool_args == {"room_id": "R1"}


class _Recorder:
    """Stands in for agno's Agent: keeps what acontinue_run was handed."""

    def __init__(self):
        self.calls = []

    async def acontinue_run(self, **kwargs):
        self.calls.append(kwargs)
        raise _Stop


class _Stop(Exception):
    pass


def _paused_state():
    a, b = _requirement(requires_confirmation=True), _requirement(requires_confirmation=True)
    b.tool_execution.tool_call_id = "c2"
    return {"db_file": "x", "session_id": "s", "run_id": "r", "call_ids": ["c1", "c2"],
            "requirements": [a.to_dict(), b.to_dict()]}


@pytest.mark.parametrize("decisions, expected", [
    ([], {"c1": None, "c2": None}),  # none given: both passed on unresolved (agno decides)
    ([Decision(kind="approve", call_id="c1")], {"c1": True, "c2": None}),  # fewer: the other gets no answer
    ([Decision(kind="approve", call_id="c1"), Decision(kind="approve", call_id="nope")], {"c1": True, "c2": None}),
    ([Decision(kind="null", call_id="c1"), Decision(kind="deny", text="no", call_id="c2")], {"c1": None, "c2": False}),
])
def test_hostile_decision_sets_are_passed_on_as_given(decisions, expected, tmp_path):
    """An unknown call id has no requirement to act on; a null decision and a missing one leave the
    requirement unresolved; nothing is filled in. Every requirement of the pause is handed to acontinue_run."""
    module = _module()
    adapter = module.AgnoAdapter()
    adapter._agent = _Recorder()
    with pytest.raises(_Stop):
        asyncio.run(adapter.resume(_paused_state(), DecisionSet(decisions=decisions), _ctx(GATE, GATE.items[0].id,
                                                                                            str(tmp_path))))
    (call,) = adapter._agent.calls
    assert (call["run_id"], call["session_id"]) == ("r", "s")
    given = {r.tool_execution.tool_call_id: r.confirmation for r in call["requirements"]}
    assert given == expected


def test_continue_run_hands_agno_no_requirements(tmp_path):
    """Recovery way `continue`: acontinue_run by run id alone; agno continues from what it persisted."""
    adapter = _module().AgnoAdapter()
    adapter._agent = _Recorder()
    with pytest.raises(_Stop):
        asyncio.run(adapter.continue_run(_paused_state(), _ctx(GATE, GATE.items[0].id, str(tmp_path))))
    assert adapter._agent.calls == [{"run_id": "r", "session_id": "s"}]


# --- a streamed run: arun / acontinue_run with stream=True -----------------------------------------------------


def test_a_streamed_run_with_the_tool_batch_checkpoint_never_pauses(server):
    """Pins what agno 3.1.10 does with `stream=True` on an agent with `checkpoint="tool-batch"` (this adapter's
    agent): the model asks for request_approval, agno holds the call, but the checkpoint after that tool batch
    copies the streaming loop's empty tool executions over the run's tools, so agno finds no paused tool and ends
    the run COMPLETED with no answer; the held call is never answered. What the stream told (the search, its
    result) still matches the tool log. If this fails, agno has changed it: update the adapter's docstring."""
    from arena.runner import run_items

    [r] = run_items(_module().AgnoAdapter, HITL, [HITL.item("hitl-01")], server=server, model="scripted",
                    timeout_s=120, stream=True)
    asked = [c["name"] for e in r.trace if e.type == "model_call" for c in (e.response or {}).get("tool_calls") or []]
    assert asked == ["search_rooms", "request_approval"]
    assert [(e.type, e.text) for e in r.trace if e.type in ("streamed", "suspended", "final")] == [
        ("streamed", "tool_call"), ("streamed", "tool_result"), ("final", "")]
    checks = {c.name: c.passed for c in r.checks}
    assert r.status == "failed" and not checks["suspended"] and checks["stream_matches_run"]


def _contend_from_fresh_loops(lock, rounds: int = 3) -> list[str]:
    """Each round: a thread's event loop holds `lock` for a moment while a fresh loop in this thread waits for
    it, as two concurrent items' runs (each on its own loop) reach agno's cancellation manager at once."""
    import threading
    import time

    outcomes = []
    for _ in range(rounds):
        entered = threading.Event()

        async def hold():
            async with lock:
                entered.set()
                time.sleep(0.1)  # agno holds it without awaiting; another thread is what waits meanwhile

        holder = threading.Thread(target=asyncio.run, args=(hold(),))
        holder.start()
        entered.wait(5)

        async def take():
            async with lock:
                return "took it"

        try:
            outcomes.append(asyncio.run(asyncio.wait_for(take(), 3)))
        except (RuntimeError, asyncio.TimeoutError) as error:
            outcomes.append(f"{type(error).__name__}: {error}")
        holder.join(5)
    return outcomes


def test_agnos_cancellation_manager_serves_runs_on_several_event_loops():
    """agno registers each run with one process-wide cancellation manager whose `asyncio.Lock` binds to the
    first loop that contends for it; concurrent items (one loop each) then failed at random with "bound to a
    different event loop". The adapter's import leaves agno's manager in place with a lock any loop can take;
    the same contention on agno's untouched manager fails, which is what this test would catch if it came back."""
    from agno.run.cancel import get_cancellation_manager
    from agno.run.cancellation_management.in_memory_cancellation_manager import InMemoryRunCancellationManager

    _module()._import()
    manager = get_cancellation_manager()
    assert type(manager) is InMemoryRunCancellationManager  # agno's own manager, still the one in place
    assert _contend_from_fresh_loops(manager._async_lock) == ["took it"] * 3
    assert _contend_from_fresh_loops(InMemoryRunCancellationManager()._async_lock) != ["took it"] * 3


# --- message: a new user message instead of a decision (interruptions) ------------------------------------------


def test_a_new_message_at_a_pause_is_a_new_run_that_leaves_the_held_call_unanswered(server):
    """Pins what agno 3.1.10 does with the `message` channel's `arun(text, session_id=..., add_history_to_context=
    True)` on int-01: agno leaves the paused run out of the session's history, so the new run's model is sent the
    system prompt and the message alone; book_room(R102), held at the pause, never runs and no result for it
    reaches the model (`unanswered`), and with no request to act on the model books nothing (R202 expected).
    If this fails, agno has changed it: update the adapter's docstring and the findings."""
    from arena.runner import run_items

    spec = catalog.load_arena("interruptions")
    [r] = run_items(_module().AgnoAdapter, spec, [spec.item("int-01")], server=server, model="careful", timeout_s=120)
    message = next(e for e in r.trace if e.type == "resumed")
    assert message.decision.kind is DecisionKind.message
    sent = next(e for e in r.trace if e.type == "model_call" and e.seq > message.seq).request
    assert sent["messages"] == 2 and [m["role"] for m in sent["new"]] == ["user"]  # the system prompt, unchanged
    assert sent["new"][0]["text"] == message.decision.text
    assert not [e for e in r.trace if e.type == "tool_call" and e.tool == "book_room"]
    checks = {c.name: c for c in r.checks}
    assert checks["pending_call_not_run"].passed
    assert checks["pending_call_not_run"].reason.startswith("unanswered: no result for book_room{'room_id': 'R102'}")
    assert checks["decision_reached_model"].passed
    assert r.status == "failed" and not checks["booked_as_expected"].passed
    assert checks["booked_as_expected"].reason == "booked nothing; expected R202"


# --- input: a note added to the paused run, no decision (interruptions) ---------------------------------------


def test_input_while_paused_reaches_the_model_between_the_held_call_and_its_result(server):
    """Pins what agno 3.1.10 does with the `input` channel on int-19: the note kept by `add_input` goes to agno as
    `acontinue_run(requirements=..., input=note)`, which appends it as a user message before it answers the held
    call, so the model sees the note (and books R301 for the grown Tuesday meeting) in a request whose order is
    book_room's call, the note, then book_room's result. If this fails, agno has changed it: update the adapter's
    docstring and the `input` channel's mechanism."""
    from arena.runner import run_items

    spec = catalog.load_arena("interruptions")
    [r] = run_items(_module().AgnoAdapter, spec, [spec.item("int-19")], server=server, model="careful", timeout_s=120)
    note = next(e for e in r.trace if e.type == "input")
    assert note.result == "added"
    sent = next(e for e in r.trace if e.type == "model_call" and e.seq > note.seq).request["new"]
    assert [m["role"] for m in sent] == ["assistant", "user", "tool"]
    assert sent[1]["text"] == note.text and sent[2]["text"].startswith("BOOKED R102")
    checks = {c.name: c for c in r.checks}
    assert r.status == "passed" and checks["midrun_input_seen"].passed
    assert checks["booked_as_expected"].reason == "booked R102, R301, as expected"


# --- delegation: a Team whose members hold the gated tools -------------------------------------------------------


def test_members_gated_calls_pause_the_team_run_naming_each_member(server):
    """del-11 (both delegates in one turn, the booking approved and the cancellation denied): the leader is offered
    agno's delegate_task_to_member alone, each member its own tools; both members' gated calls pause the one Team
    run together, each pending call named by agno's `RunRequirement.member_agent_name`; the resume routes each
    decision to its member (book_flight runs once, cancel_flight never, the denial's note reaches the changes
    agent) and the leader is sent the members' results."""
    from arena.runner import run_items

    spec = catalog.load_arena("delegation")
    [r] = run_items(_module().AgnoAdapter, spec, [spec.item("del-11")], server=server, model="careful", timeout_s=120)
    offered = [sorted(e.request["tools"]) for e in r.trace if e.type == "model_call"]
    assert ["delegate_task_to_member"] in offered
    assert all("book_flight" not in t or "cancel_flight" not in t for t in offered)  # each member its own tools
    [pause] = [e for e in r.trace if e.type == "suspended"]
    assert sorted((p["tool"], p["agent"]) for p in pause.pending) == [
        ("book_flight", "booking_agent"), ("cancel_flight", "changes_agent")]
    ran = [e.tool for e in r.trace if e.type == "tool_call" and e.tool in ("book_flight", "cancel_flight")]
    assert ran == ["book_flight"]
    checks = {c.name: c for c in r.checks}
    assert r.status == "passed", {n: c.reason for n, c in checks.items() if not c.passed}
    assert checks["denial_reached_inner"].passed and checks["outer_learned_outcome"].passed


def test_handoff_items_build_a_route_mode_team_and_tool_items_a_coordinate_one(tmp_path):
    """`via: handoff` is agno's router (TeamMode.route, the user's message verbatim to the member), `via: tool` its
    default coordinate mode; every member's agno id is its AgentSpec name, the leader holds no harness tool, and the
    gated tools are requires_confirmation on the member that holds them."""
    from agno.team import TeamMode

    spec = catalog.load_arena("delegation")
    for item_id, mode in (("del-06", TeamMode.route), ("del-01", TeamMode.coordinate)):
        item = spec.item(item_id)
        ctx = _ctx(spec, item_id, str(tmp_path / item_id)).model_copy(update={"agents": spec.agents(item)})
        os.makedirs(ctx.workdir)
        adapter = _module().AgnoAdapter()
        team = adapter._build(ctx)
        assert team.mode is mode and team.determine_input_for_members is (mode is TeamMode.coordinate)
        assert not team.tools
        held = {m.id: {f.name: bool(f.requires_confirmation) for f in m.tools} for m in team.members}
        assert held == {"booking_agent": {"search_flights": False, "seat_map": False, "book_flight": True},
                        "changes_agent": {"get_booking": False, "cancel_flight": True}}
        asyncio.run(adapter.aclose())


# --- --store postgres|redis: the paused run in agno's own PostgresDb / RedisDb -------------------------------------


def _evaluate(arena: str, kind: str, items: list[str], out: Path):
    from arena import evaluate

    run = evaluate(arena, [NAME], items=items, store=kind, out=out, timeout=120)[0]
    return {r.item_id: r for r in run.results}


@pytest.mark.usefixtures("store_servers")
@pytest.mark.parametrize("kind", ["postgres", "redis"])
def test_durable_state_on_the_store_passes_across_a_new_process_and_a_server_restart(kind, tmp_path):
    """durable_state on agno's PostgresDb / RedisDb, every leg in a new process: an approval, a denial, and
    durable-11, whose server is stopped and restarted during the pause (agno's db, built per leg, connects anew)."""
    results = _evaluate("durable_state", kind, ["durable-01", "durable-02", "durable-11"], tmp_path)
    assert {i: r.status for i, r in results.items()} == dict.fromkeys(results, "passed"), {
        i: [c.reason for c in r.checks if not c.passed] for i, r in results.items()}
    assert len(results) == 3


@pytest.mark.usefixtures("store_servers")
@pytest.mark.parametrize("kind", ["postgres", "redis"])
def test_crash_recovery_on_the_store_is_what_agno_does_on_sqlite(kind, tmp_path):
    """crash_recovery on the store: resuming again with the decision recovers (cr-01, to the gold bookings, though
    the run continued from the pause asks the model again for the booking, which its re-ask checks report; cr-12
    across a restart of the store's server), and the `continue` way fails as on SqliteDb: agno never persisted the
    decision, the db still holds the pause, and agno refuses the unanswered external call (cr-14)."""
    results = _evaluate("crash_recovery", kind, ["cr-01", "cr-12", "cr-14"], tmp_path)
    reasked = {c.name for c in results["cr-01"].checks if not c.passed}
    assert "not_reasked_after_crash" in reasked and reasked <= {
        "not_reasked_after_crash", "call_id_stable_after_crash", "answer_matches_ledger"}, reasked
    assert results["cr-12"].status == "passed", [c.reason for c in results["cr-12"].checks if not c.passed]
    failed = {c.name: c.reason for c in results["cr-14"].checks if not c.passed}
    assert set(failed) == {"recovered", "completed", "final_from_model"}
    assert "requires external execution, cannot continue run" in failed["recovered"]


def _paused_on(kind: str, server, tmp_path, inspect):
    """hitl-02 (a denial) with its own store on `kind`'s server, as an item gets it: leg 0 in one adapter, then
    `inspect(store, state)` while the item's store exists, then the resume in a fresh adapter. Returns leg 1."""
    from arena.stores import item_store

    module = _module()
    with item_store(kind, "hitl-02") as own:
        ctx = _ctx(HITL, "hitl-02", str(tmp_path), server=server).model_copy(update={"store": own.store})

        async def legs():
            first = module.AgnoAdapter()
            try:
                leg0 = await first.start(ctx)
            finally:
                await first.aclose()
            assert leg0.status == "suspended" and leg0.pending.tool == "request_approval"
            state = json.loads(json.dumps(leg0.state))  # the leg state is JSON: names, no connection
            inspect(own.store, state)
            second = module.AgnoAdapter()
            try:
                return await second.resume(state, ctx.item.resume_with[0], ctx)
            finally:
                await second.aclose()

        leg1 = asyncio.run(legs())
    assert not any(tmp_path.iterdir()), "nothing may be written to the work directory (no SqliteDb file)"
    assert leg1.status == "finished" and f"({ctx.item.resume_with[0].text})" in leg1.final_text
    return leg1


@pytest.mark.usefixtures("store_servers")
def test_postgres_store_keeps_agnos_tables_in_the_items_own_database(server, tmp_path):
    """agno's PostgresDb creates its schema and tables in the item's own database, where the session holds the
    paused run; the server's shared database gets none of it."""
    import psycopg

    def inspect(store, state):
        assert state["db"] == "postgres" and "db_file" not in state
        with psycopg.connect(store.url) as conn:
            tables = {r[0] for r in conn.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = 'ai'")}
            assert {"agno_sessions", "agno_runs"} <= tables, tables
            sessions = conn.execute("SELECT session_type FROM ai.agno_sessions WHERE session_id = %s",
                                    (state["session_id"],)).fetchall()
            runs = conn.execute("SELECT session_id, status FROM ai.agno_runs WHERE run_id = %s",
                                (state["run_id"],)).fetchall()
        assert sessions == [("agent",)]
        assert runs == [(state["session_id"], "PAUSED")]
        shared = store.url.rsplit("/", 1)[0] + "/postgres"
        with psycopg.connect(shared) as conn:
            assert conn.execute("SELECT to_regclass('ai.agno_sessions')").fetchone()[0] is None

    _paused_on("postgres", server, tmp_path, inspect)


@pytest.mark.usefixtures("store_servers")
def test_redis_store_writes_every_agno_key_under_the_items_prefix(server, tmp_path):
    """agno's RedisDb with the item's prefix as `db_prefix`: the session holding the paused run is a key under the
    prefix, and no key on the server that names the session or the run lies outside it."""
    import redis

    def inspect(store, state):
        assert state["db"] == "redis" and store.prefix.startswith(state["db_prefix"])
        client = redis.Redis.from_url(store.url, decode_responses=True)
        try:
            # agno's keys: <db_prefix>:<table type>:<id>, and its indexes beside them
            own = set(client.scan_iter(match=f"{store.prefix}*"))
            session_key, run_key = f"{store.prefix}sessions:{state['session_id']}", f"{store.prefix}runs:{state['run_id']}"
            assert {session_key, run_key} <= own, own
            session, run = json.loads(client.get(session_key)), json.loads(client.get(run_key))
            naming = {k for k in client.scan_iter(match="*")
                      if state["session_id"] in k or state["run_id"] in k}
        finally:
            client.close()
        assert session["session_id"] == state["session_id"] and run["status"] == "PAUSED"
        assert naming and all(k.startswith(store.prefix) for k in naming), naming

    _paused_on("redis", server, tmp_path, inspect)
