"""strands adapter: interrupts raised in a tool body (request_approval, purchase_hold) or a BeforeToolCallEvent hook
(gated tools), resumed with interruptResponse's from a FileSessionManager session.

What every adapter shares (its declared info, a lazily imported framework, how each item of its runs ends, traces
equal to vanilla's, a gated pause on the gated call, durable_state across a restart) is test_conformance.py's; this
file holds what is strands' own, on the same runs."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("strands")

from arena import catalog  # noqa: E402
from arena.tools.box import LocalToolBox, ToolExecutor  # noqa: E402
from arena.trace import TraceRecorder  # noqa: E402
from arena.types import Decision, DecisionKind, DecisionSet, LegContext  # noqa: E402
from tests.adapters.conftest import tool_messages  # noqa: E402

NAME = "strands"
ROOT = Path(__file__).resolve().parents[2]




def _ctx(server, arena: str, item_id: str, workdir: Path, profile: str | None = None):
    spec = catalog.load_arena(arena)
    item = spec.item(item_id)
    recorder = TraceRecorder()
    ctx = LegContext(
        item=item,
        instructions=spec.instructions,
        model=server.open_item(recorder, profile or spec.profiles[0]).model,
        tools=LocalToolBox(ToolExecutor(spec.tools, spec.functions, recorder)),
        workdir=str(workdir),
    )
    return item, recorder, ctx


def _cls():
    return catalog.builtin_adapters()[NAME].load()


async def _leg(coro_factory):
    adapter = _cls()()
    try:
        return await coro_factory(adapter)
    finally:
        await adapter.aclose()


# --- offline ----------------------------------------------------------------------------------------

_SWITCHES = """
import json, os, sys
for var in ("AWS_EC2_METADATA_DISABLED", "OTEL_SDK_DISABLED"):
    os.environ.pop(var, None)
from arena_builtins.adapters import strands as adapter
before = "strands" in sys.modules
adapter._import()
from opentelemetry import trace
from arena.types import ModelConfig
provider = type(trace.get_tracer_provider()).__module__ + "." + type(trace.get_tracer_provider()).__name__
print(json.dumps({"before": before, "ec2": os.environ.get("AWS_EC2_METADATA_DISABLED"),
                  "otel": os.environ.get("OTEL_SDK_DISABLED"), "provider": provider,
                  "boto": [m for m in ("boto3", "botocore") if m in sys.modules]}))
"""


def test_network_switches_are_off_after_the_adapter_imports_strands():
    """In a fresh process with neither switch set: importing the adapter's module imports no strands; its
    `_import()` turns off the EC2 metadata lookup and the OpenTelemetry SDK before strands loads, and strands'
    tracer is left on OpenTelemetry's no-op (proxy) provider: nothing is exported."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)}
    env.pop("AWS_EC2_METADATA_DISABLED", None)
    env.pop("OTEL_SDK_DISABLED", None)
    proc = subprocess.run([sys.executable, "-c", _SWITCHES], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["before"] is False
    assert out["ec2"] == "true"
    assert out["otel"] == "true"
    assert "sdk" not in out["provider"], out["provider"]  # no SDK tracer provider: no exporter at all


def test_the_agent_uses_the_openai_model_on_the_harness_endpoint_not_bedrock(server, tmp_path):
    """`model=` is always passed: an Agent without it builds a BedrockModel (boto3, EC2 metadata); no printing."""
    _, _, ctx = _ctx(server, "human_in_the_loop", "hitl-01", tmp_path)
    adapter = _cls()()
    agent = adapter._agent(ctx, "s-test", str(tmp_path / "strands"))
    from strands.models.openai import OpenAIModel

    assert isinstance(agent.model, OpenAIModel)
    assert str(adapter._client.base_url).rstrip("/") == ctx.model.base_url.rstrip("/")
    assert adapter._client.max_retries == 0
    from strands.handlers.callback_handler import null_callback_handler

    assert agent.callback_handler is null_callback_handler  # callback_handler=None: nothing printed
    asyncio.run(adapter.aclose())


# --- human_in_the_loop: the decision is the request_approval body's return -----------------------------


@pytest.fixture(scope="module")
def scripted(cell):
    return cell(NAME).wire


@pytest.fixture(scope="module")
def eager(cell):
    return cell(NAME, profile="scripted-eager").wire


def test_decision_reaches_model_as_approval_tool_result(scripted):
    """The interrupt's response, decision.as_text(), is what the re-run body returns: the model reads it as
    request_approval's result, once per item (approve notes, deny reasons)."""
    results, requests = scripted
    spec = catalog.load_arena("human_in_the_loop")
    expected = {i.input: i.resume_with[0].as_text() for i in spec.items}
    seen = tool_messages(requests, "request_approval")
    assert sorted(seen) == sorted(expected.items())
    assert any(text.startswith("DENIED: ") and len(text) > len("DENIED: ") for _, text in seen)


def test_state_is_json_pointing_at_the_session_and_resumes_in_a_fresh_adapter(server, tmp_path):
    """The state is JSON: the FileSessionManager session under the item's work directory and the interrupt ids.
    strands itself wrote the pause into the session's agent.json (interrupt state activated, the held id); a new
    adapter (a new Agent) restores it from there and finishes."""
    item, recorder, ctx = _ctx(server, "human_in_the_loop", "hitl-03", tmp_path)
    leg0 = asyncio.run(_leg(lambda a: a.start(ctx)))
    assert leg0.status == "suspended"
    wire = json.dumps(leg0.state)
    state = json.loads(wire)
    assert state["storage_dir"].startswith(str(tmp_path))
    [(interrupt_id, held)] = state["interrupts"].items()
    assert held == {"kind": "ask", "call_id": leg0.pending.call_id}
    [agent_json] = list(Path(state["storage_dir"]).rglob("agent.json"))
    persisted = json.loads(agent_json.read_text())["_internal_state"]["interrupt_state"]
    assert persisted["activated"] is True
    assert list(persisted["interrupts"]) == [interrupt_id]
    leg1 = asyncio.run(_leg(lambda a: a.resume(state, item.resume_with[0], ctx)))
    assert leg1.status == "finished"
    assert leg1.final_text.startswith("Done: BOOKED R201")
    assert [e.tool for e in recorder.events if e.type == "tool_call"] == ["search_rooms", "book_room"]
    # strands moved its session on: the pause is over, and it says so if resumed again (no second booking)
    persisted = json.loads(agent_json.read_text())["_internal_state"]["interrupt_state"]
    assert persisted["activated"] is False
    with pytest.raises(ValueError, match="not in interrupt state"):
        asyncio.run(_leg(lambda a: a.resume(state, item.resume_with[0], ctx)))
    assert [e.tool for e in recorder.events if e.type == "tool_call"] == ["search_rooms", "book_room"]


# --- scripted-eager: the sibling book_room runs in leg 0 --------------------------------------------------
# strands' ConcurrentToolExecutor runs every call of the turn; only request_approval interrupts. The sibling
# book_room executes before the run stops; its result is kept in the paused tool execution and is not run
# again on resume. How each item ends: test_conformance.py's SIBLING_RAN_FIRST.


def test_eager_book_room_runs_once_before_the_pause(eager):
    results, requests = eager
    spec = catalog.load_arena("human_in_the_loop")
    for r in results:
        books = [e for e in r.trace if e.type == "tool_call" and e.tool == "book_room"]
        pause = next(e for e in r.trace if e.type == "suspended")
        assert len(books) == 1, r.item_id  # never re-executed on resume
        assert books[0].leg == 0 and books[0].seq < pause.seq, r.item_id
        assert pause.tool == "request_approval"
    bookings = dict(tool_messages(requests, "book_room"))
    decisions = dict(tool_messages(requests, "request_approval"))
    assert decisions == {i.input: i.resume_with[0].as_text() for i in spec.items}
    assert set(bookings) == set(decisions) and all(t.startswith("BOOKED ") for t in bookings.values())


# --- approval_gate: the BeforeToolCallEvent hook --------------------------------------------------------

GATE = catalog.load_arena("approval_gate")
GATE_ITEMS = {i.id: i for i in GATE.items}


@pytest.fixture(scope="module")
def gate(cell):
    return cell(NAME, "approval_gate", "reckless").wire


def test_gate_denial_reason_reaches_model_as_cancel_tool_text(gate):
    """Denied: `event.cancel_tool = decision.as_text()` is book_room's tool result, verbatim ("DENIED: reason");
    approved: book_room's own result (strands ran it after the hook returned)."""
    results, requests = gate
    seen = tool_messages(requests, "book_room")
    expected = []
    for r in results:
        item = GATE_ITEMS[r.item_id]
        decision = item.resume_with[0]
        if decision.approved:
            book = next(e for e in r.trace if e.type == "tool_call" and e.tool == "book_room")
            expected.append((item.input, book.result))
        else:
            assert decision.as_text().startswith("DENIED: ")
            expected.append((item.input, decision.as_text()))
            assert f"({decision.text})" in r.trace[-1].text  # the reason itself came back to the model
    assert sorted(seen) == sorted(expected)


def test_gate_edit_runs_the_call_with_the_humans_arguments(server, tmp_path):
    """An edit rewrites `event.tool_use` in the hook: strands runs book_room with the human's arguments."""
    item = next(i for i in GATE.items if i.resume_with[0].approved)
    _, recorder, ctx = _ctx(server, "approval_gate", item.id, tmp_path)
    leg0 = asyncio.run(_leg(lambda a: a.start(ctx)))
    assert leg0.status == "suspended" and leg0.pending.tool == "book_room"
    other = "R999" if leg0.pending.args.get("room_id") != "R999" else "R998"
    edit = Decision(kind=DecisionKind.edit, args={"room_id": other}, call_id=leg0.pending.call_id)
    asyncio.run(_leg(lambda a: a.resume(leg0.state, DecisionSet(decisions=[edit]), ctx)))
    books = [e for e in recorder.events if e.type == "tool_call" and e.tool == "book_room"]
    assert [b.args for b in books] == [{"room_id": other}]


def test_a_decision_for_a_call_not_held_is_refused_by_strands(server, tmp_path):
    """A decision naming a call the pause does not hold goes as that id's interruptResponse: strands refuses it
    (KeyError: no interrupt found) and nothing runs."""
    item = next(i for i in GATE.items if i.resume_with[0].approved)
    _, recorder, ctx = _ctx(server, "approval_gate", item.id, tmp_path)
    leg0 = asyncio.run(_leg(lambda a: a.start(ctx)))
    stray = DecisionSet(decisions=[Decision(kind=DecisionKind.approve, call_id="call_not_pending")])
    with pytest.raises(KeyError, match="no interrupt found"):
        asyncio.run(_leg(lambda a: a.resume(leg0.state, stray, ctx)))
    assert [e.tool for e in recorder.events if e.type == "tool_call" and e.tool == "book_room"] == []


def test_a_held_call_without_a_decision_pauses_again(server, tmp_path):
    """No response for the held call: strands runs the hook again, whose interrupt has no response, and stops
    on the same interrupt; the call never runs."""
    item = next(i for i in GATE.items if i.resume_with[0].approved)
    _, recorder, ctx = _ctx(server, "approval_gate", item.id, tmp_path)
    leg0 = asyncio.run(_leg(lambda a: a.start(ctx)))
    null = DecisionSet(decisions=[Decision(kind=DecisionKind.null, call_id=leg0.pending.call_id)])
    leg1 = asyncio.run(_leg(lambda a: a.resume(leg0.state, null, ctx)))
    assert leg1.status == "suspended"
    assert leg1.pending.call_id == leg0.pending.call_id and leg1.state["interrupts"] == leg0.state["interrupts"]
    assert [e.tool for e in recorder.events if e.type == "tool_call" and e.tool == "book_room"] == []


# --- flight_booking: purchase_hold pauses inside its body; strands re-runs the body from the top -------------


def test_body_pause_runs_prepare_again_on_resume(run_adapter):
    """fb-10: the body prepares (PI4) and interrupts; on resume strands runs it again from the top, so prepare
    runs a second time (PI5) in the resumed leg before the commit: the orphaned first intent is what fails
    final_state. Measured, not hidden."""
    [r] = run_adapter(NAME, profile="careful", arena="flight_booking", items=["fb-10"], timeout_s=120)
    calls = [(e.leg, e.tool) for e in r.trace if e.type == "tool_call" and e.tool.startswith("purchase_hold")]
    pause = [e for e in r.trace if e.type == "suspended" and e.tool == "purchase_hold"]
    assert len(pause) == 1 and pause[0].args["amount"] == 178
    assert calls == [(1, "purchase_hold.prepare"), (2, "purchase_hold.prepare"), (2, "purchase_hold.commit")]
    failed = {c.name for c in r.checks if not c.passed}
    assert failed == {"final_state"}


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


# --- durable_state: each leg in a fresh worker process --------------------------------------------------------


def test_durable_state_denial_reaches_the_model_after_the_restart(cell):
    """The worker is restarted between legs (test_conformance.py): leg 1 has only the JSON state, rebuilds the
    agent on the FileSessionManager session and the deny reason still comes back to the model."""
    results = cell(NAME, "durable_state").results
    assert [r.status for r in results] == ["passed", "passed"]
    denied = catalog.load_arena("durable_state").item("durable-02")
    assert f"({denied.resume_with[0].text})" in results[1].trace[-1].text


# --- a streamed run: stream_async on every leg ---------------------------------------------------------------


def test_a_streamed_run_tells_the_calls_the_pause_and_the_results(server):
    """approval_gate streamed: every leg reads `agent.stream_async(...)`. The items end as in a plain run, and what
    the stream told holds against the tool log: the model's calls from its messages, the gated call's pause from
    its tool_interrupt_event, and in the resumed leg the held call's result (the tool's own, or the denial)."""
    from arena.runner import run_items

    spec = catalog.load_arena("approval_gate")
    items = [spec.item("gate-01"), spec.item("gate-02")]
    results = run_items(_cls(), spec, items, server=server, model="reckless", timeout_s=120, stream=True)
    told = {r.item_id: [(e.leg, e.text, e.tool, e.result) for e in r.trace if e.type == "streamed"] for r in results}
    for r in results:
        assert r.status == "passed" and {c.name: c.passed for c in r.checks}["stream_matches_run"]
        assert [t[:3] for t in told[r.item_id]] == [
            (0, "tool_call", "search_rooms"), (0, "tool_result", "search_rooms"), (0, "tool_call", "book_room"),
            (0, "pause", "book_room"), (1, "tool_result", "book_room")]
    assert told["gate-01"][-1][3].startswith("BOOKED")
    assert told["gate-02"][-1][3] == spec.item("gate-02").resume_with[0].as_text()


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
    ctx = LegContext(item=item, instructions=spec.instructions, agents=spec.agents(item), workdir=str(tmp_path),
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


# --- --store postgres|redis -----------------------------------------------------------------------------


@pytest.mark.usefixtures("store_servers")
@pytest.mark.parametrize(("store", "why"), [
    ("postgres", "strands-agents 1.62.0 has no PostgreSQL session manager"),
    ("redis", "no key prefix option) and needs RedisJSON (JSON.GET)"),
])
def test_a_store_run_is_declined_strands_has_no_session_manager_there(tmp_path, store, why):
    """strands ships file, S3 and snapshot session managers only: the run on PostgreSQL or Redis is not measured,
    with that reason, and nothing runs on its FileSessionManager instead."""
    from arena import evaluate
    from arena_builtins.adapters.strands import StrandsAdapter

    done = evaluate("durable_state", [NAME], items=["durable-01"], store=store, out=tmp_path)
    assert not list(done) and not done.failed
    channel = StrandsAdapter.info.channel(store)
    assert channel is not None and channel.kind == "unsupported"
    assert done.declined[NAME] == f"{NAME} has no {store} store: {channel.mechanism}"
    assert why in channel.mechanism
