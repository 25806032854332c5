"""The CrewAI adapter: a Flow step with @human_feedback whose provider raises HumanFeedbackPending,
SQLiteFlowPersistence, Flow.from_pending(...).resume_async(feedback).

CrewAI cannot share the harness's environment (it pins openai<3), so these tests run only where
`crewai` is importable: in its own environment, with the repository root on PYTHONPATH. The harness
builds that environment from adapters/envs/crewai.txt on first use (`arena run ... -a crewai`), and
tests/adapters/test_crewai_worker.py drives crewai through it from the main environment. To run
these tests there (pytest, and python-docx for the doc_review arena the harness loads, added for
the run only; the environment stays as built):

    uv run arena run human_in_the_loop -a crewai --item hitl-01   # builds the environment once
    PYTHONPATH=. uv run --no-project --with pytest --with python-docx \
        --python "$(uv run python -c 'from arena.worker.envs import env_python; print(env_python("crewai"))')" \
        python -m pytest tests/adapters/test_crewai.py

What every adapter shares (its declared info, a lazily imported framework, how each item of its
human_in_the_loop runs ends, traces equal to vanilla's) is test_conformance.py's, which runs crewai
through a worker on that environment from the main one; this file holds what is CrewAI's own.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest

from arena_builtins.adapters.crewai import NOT_EXECUTED, OFFLINE_ENV

os.environ.update(OFFLINE_ENV)  # before CrewAI is imported: no telemetry, traces or version check
crewai = pytest.importorskip("crewai", reason=(
    "crewai is not in this environment, by design: it needs openai<3, so it lives in an environment of its own, built "
    "by the harness from adapters/envs/crewai.txt on first use (tests/adapters/test_crewai_worker.py runs it through "
    "that environment). To run these tests there: PYTHONPATH=. uv run --no-project --with pytest --with python-docx "
    "--python <its python: arena.worker.envs.env_python('crewai')> python -m pytest tests/adapters/test_crewai.py "
    "(this file's docstring has the whole command)"))

from arena import catalog  # noqa: E402
from arena_builtins.adapters.crewai import DB_NAME, CrewAIAdapter  # noqa: E402
from arena_builtins.arenas._rooms.policy import book_first as policy_book_first  # noqa: E402
from arena.tools.box import LocalToolBox, ToolExecutor  # noqa: E402
from arena.trace import TraceRecorder  # noqa: E402
from arena.types import LegContext  # noqa: E402
from tests.conftest import behaviour, normalised, wire_slice  # noqa: E402

APPROVAL = "request_approval"
ROOT = Path(__file__).resolve().parents[2]
SPEC = catalog.load_arena("human_in_the_loop")
ITEMS = {i.id: i for i in SPEC.items}
REGISTRY = catalog.builtin_adapters()
# Through the registry (and so its worker) once the entry exists; the class itself until then.
ADAPTER = "crewai" if "crewai" in REGISTRY else CrewAIAdapter


@pytest.fixture(scope="module")
def scripted(run_adapter, server):
    return wire_slice(server, lambda: run_adapter(ADAPTER, timeout_s=120))


@pytest.fixture(scope="module")
def eager(run_adapter, server):
    return wire_slice(server, lambda: run_adapter(ADAPTER, profile="scripted-eager", timeout_s=120))


def _tool_results(requests) -> dict[str, dict[str, str]]:
    """approval summary -> {tool name: the tool result the model saw}, for the approval turn's calls."""
    turns: dict[str, dict[str, str]] = {}  # call id -> summary of its approval turn
    names: dict[str, str] = {}
    seen: dict[str, dict[str, str]] = {}
    for body in requests:
        for m in body["messages"]:
            calls = m.get("tool_calls") or []
            approval = next((tc for tc in calls if tc["function"]["name"] == APPROVAL), None)
            if approval is not None:
                summary = json.loads(approval["function"]["arguments"])["summary"]
                for tc in calls:
                    turns[tc["id"]] = summary
                    names[tc["id"]] = tc["function"]["name"]
            if m.get("role") == "tool" and m.get("tool_call_id") in turns:
                seen.setdefault(turns[m["tool_call_id"]], {})[names[m["tool_call_id"]]] = m["content"]
    return seen


def test_the_pinned_version_is_the_installed_one():
    assert metadata.version("crewai") == crewai.__version__
    if "crewai" in REGISTRY:  # an isolated entry reports the pinned version: it must be the one installed
        assert REGISTRY["crewai"].version == metadata.version("crewai")


def test_model_receives_decision_as_approval_tool_result(scripted):
    """On the wire: request_approval's tool message is exactly decision.as_text(), the flow's feedback."""
    results, requests = scripted
    seen = _tool_results(requests)
    for r in results:
        pause = next(e for e in r.trace if e.type == "suspended")
        assert seen[pause.args["summary"]] == {APPROVAL: ITEMS[r.item_id].resume_with[0].as_text()}, r.item_id


def _approval_turn(r) -> tuple[str, ...]:
    """The calls of the model turn that asked for approval, in the model's order (as the harness's
    gateway recorded its answer)."""
    asked = next(
        e for e in r.trace if e.type == "model_call" and APPROVAL in [c["name"] for c in e.response["tool_calls"]]
    )
    return tuple(c["name"] for c in asked.response["tool_calls"])


def _without_books(events: list[dict], leg: int) -> list[dict]:
    return [e for e in events if not (e["type"] == "tool_call" and e["tool"] == "book_room" and e["leg"] == leg)]


# What the harness's checks fail when book_room has already run at the pause (the rest, `completed`
# included, pass: CrewAI itself ran to the end, nothing errored).
BOOK_FIRST_FAILS = {
    True: {"suspended", "no_tool_before_suspend", "tool_called_once_after_resume", "args_as_requested"},
    False: {"suspended", "no_tool_before_suspend", "tool_not_used"},
}


def test_eager_sibling_runs_in_the_paused_turn_only_when_listed_first(eager, vanilla_eager):
    """scripted-eager emits request_approval and book_room in one turn, book_room FIRST on Tuesdays and
    Thursdays and second otherwise (policy.book_first). CrewAI runs a turn's native tool calls one by
    one, in the model's order (no parallel batch when a result_as_answer tool is among them), and stops
    at request_approval. So what happens to the sibling depends on the model's order (a real finding,
    pinned here for both orders, and through the worker in test_crewai_worker.py):

    - approval first (Mon/Wed/Fri): book_room never runs in the paused turn, neither before the pause
      nor on resume. The model is told so (NOT EXECUTED) next to the decision; on approval it asks for
      book_room again and it executes once, after the resume. The trace is identical to vanilla's,
      which holds the sibling and executes it itself on approval: the same calls, in the same legs.
    - book_room first (Tue/Thu): book_room has ALREADY EXECUTED in leg 0 when the flow pauses, whatever
      the human later decides; the model gets its real BOOKED result next to the decision and never
      asks again (booked once, not twice). The item fails the checks that forbid a consequential call
      before the approval; on a denial the booking stands while the final text still says it was not
      made. Apart from that book_room moving to leg 0 (or appearing at all, when denied) the trace is
      vanilla's."""
    results, requests = eager
    assert len(results) == 12
    seen = _tool_results(requests)
    orders: set[tuple[bool, bool]] = set()
    for r in results:
        item = ITEMS[r.item_id]
        decision = item.resume_with[0]
        book_first = policy_book_first(item.metadata["day"])
        orders.add((decision.approved, book_first))
        assert _approval_turn(r) == (("book_room", APPROVAL) if book_first else (APPROVAL, "book_room")), r.item_id
        assert r.error is None and r.legs == 2, (r.item_id, r.error)
        pause = next(e for e in r.trace if e.type == "suspended")
        room = pause.args["summary"].split()[2]
        books = [e for e in r.trace if e.type == "tool_call" and e.tool == "book_room"]
        asked = [
            c for e in r.trace if e.type == "model_call" for c in e.response["tool_calls"] if c["name"] == "book_room"
        ]
        if not book_first:
            assert r.status == "passed", (r.item_id, r.error, [c for c in r.checks if not c.passed])
            assert r.checks and all(c.passed for c in r.checks), r.item_id
            assert normalised(r) == normalised(vanilla_eager[r.item_id]), r.item_id
            assert seen[pause.args["summary"]] == {APPROVAL: decision.as_text(), "book_room": NOT_EXECUTED}, r.item_id
            expected_books = [(1, {"room_id": room})] if decision.approved else []
            assert [(e.leg, e.args) for e in books] == expected_books, r.item_id
            assert len(asked) == (2 if decision.approved else 1), r.item_id  # asked again after the approval
            continue
        assert r.status == "failed", (r.item_id, r.checks)
        failed = {c.name for c in r.checks if not c.passed}
        assert failed == BOOK_FIRST_FAILS[decision.approved], (r.item_id, failed)
        assert {"completed", "final_from_model", "nothing_after_final", "decision_reached_model", "no_replay"} <= {
            c.name for c in r.checks if c.passed
        }, r.item_id
        suspended = next(c for c in r.checks if c.name == "suspended")
        assert suspended.reason == "book_room executed before the run suspended", r.item_id
        assert behaviour(r) == [
            ("tool_call", "search_rooms"), ("tool_call", "book_room"), ("suspended", APPROVAL), ("resumed", None),
            ("final", None),
        ], r.item_id
        assert [(e.leg, e.args) for e in books] == [(0, {"room_id": room})], r.item_id  # once, before the pause
        assert books[0].result.startswith(f"BOOKED {room} "), r.item_id
        assert len(asked) == 1, r.item_id  # never asked again: no second booking
        # The model saw the booking's real result beside the decision.
        assert seen[pause.args["summary"]] == {APPROVAL: decision.as_text(), "book_room": books[0].result}, r.item_id
        if decision.approved:
            assert r.trace[-1].text.startswith(f"Done: BOOKED {room} "), r.item_id
        else:
            assert decision.text in r.trace[-1].text and f"not booked room {room}" in r.trace[-1].text, r.item_id
        expected = _without_books(normalised(vanilla_eager[r.item_id]), leg=1)
        assert _without_books(normalised(r), leg=0) == expected, r.item_id
    # both orders of an approved and of a denied item were exercised
    assert orders == {(True, True), (True, False), (False, True), (False, False)}


# --- the pause is CrewAI's own pending feedback, persisted by CrewAI ------------------------------


def _context(item_id: str, profile: str, server, workdir: str) -> tuple[LegContext, TraceRecorder, ToolExecutor]:
    recorder = TraceRecorder()
    executor = ToolExecutor(SPEC.tools, SPEC.functions, recorder)
    model = server.open_item(recorder, profile).model
    ctx = LegContext(
        item=ITEMS[item_id], instructions=SPEC.instructions, model=model, tools=LocalToolBox(executor), workdir=workdir
    )
    return ctx, recorder, executor


def _pending_row(workdir: str, flow_id: str):
    from crewai.flow.persistence import SQLiteFlowPersistence

    return SQLiteFlowPersistence(os.path.join(workdir, DB_NAME)).load_pending_feedback(flow_id)


def test_suspended_state_is_a_json_handle_to_crewais_pending_feedback(server, tmp_path):
    # hitl-03 is a Wednesday: the model lists request_approval before book_room, so nothing ran yet
    assert not policy_book_first(ITEMS["hitl-03"].metadata["day"])
    ctx, recorder, _ = _context("hitl-03", "scripted-eager", server, str(tmp_path))
    first = asyncio.run(CrewAIAdapter().start(ctx))
    assert first.status == "suspended", first
    assert first.pending.tool == APPROVAL and first.pending.call_id
    state = json.loads(json.dumps(first.state))
    assert state == {"db": DB_NAME, "flow_id": state["flow_id"]}
    row = _pending_row(str(tmp_path), state["flow_id"])
    assert row is not None, "CrewAI saved no pending feedback for the flow"
    flow_state, context = row
    assert context.method_name == "agent_step"
    assert context.method_output["call"] == {"id": first.pending.call_id, "name": APPROVAL, "args": first.pending.args}
    # The persisted conversation ends on the approval turn: neither the approval nor book_room has a result.
    last = flow_state["conversation"][-1]
    assert last["role"] == "assistant"
    assert [c["function"]["name"] for c in last["tool_calls"]] == [APPROVAL, "book_room"]
    assert [(e.type, e.tool) for e in recorder.events if e.type != "model_call"] == [("tool_call", "search_rooms")]
    # ...and the model was asked exactly twice: the search turn, then the approval turn persisted above
    turns = [[c["name"] for c in e.response["tool_calls"]] for e in recorder.events if e.type == "model_call"]
    assert turns == [["search_rooms"], [APPROVAL, "book_room"]]


_RESUME_IN_NEW_PROCESS = """
import asyncio, json, os, sys
from arena import catalog
from arena_builtins.adapters.crewai import CrewAIAdapter
from arena.tools.box import RemoteToolBox
from arena.types import Decision, LegContext, ModelConfig

spec = catalog.load_arena("human_in_the_loop")

def resume(req):
    ctx = LegContext(
        item=spec.item(req["item"]), instructions=spec.instructions,
        model=ModelConfig(name=req["profile"], base_url=req["base_url"], api_key="arena-local"),
        tools=RemoteToolBox(req["endpoint"], spec.tools), workdir=req["workdir"],
    )
    return asyncio.run(CrewAIAdapter().resume(req["state"], Decision.model_validate(req["decision"]), ctx))

out = [resume(req).model_dump(mode="json") for req in json.loads(sys.argv[1])]
print(json.dumps({"pid": os.getpid(), "results": out}))
"""

NEW_PROCESS_CASES = [("hitl-02", "scripted"), ("hitl-03", "scripted-eager")]


@pytest.fixture(scope="module")
def new_process(server, tmp_path_factory):
    """Leg 0 of each case here; leg 1 in ONE fresh Python process given only the JSON state."""
    cases, requests, endpoints = {}, [], []
    for item_id, profile in NEW_PROCESS_CASES:
        workdir = str(tmp_path_factory.mktemp(f"crewai-{item_id}"))
        ctx, recorder, executor = _context(item_id, profile, server, workdir)
        first = asyncio.run(CrewAIAdapter().start(ctx))
        assert first.status == "suspended", (item_id, first)
        endpoint = server.register(executor)
        endpoints.append(endpoint)
        requests.append({
            "item": item_id, "profile": profile, "base_url": ctx.model.base_url, "endpoint": endpoint,
            "workdir": workdir, "state": json.loads(json.dumps(first.state)),
            "decision": ITEMS[item_id].resume_with[0].model_dump(mode="json"),
        })
        cases[item_id] = (first, recorder, len(recorder.events), workdir)
    try:
        proc = subprocess.run(
            [sys.executable, "-c", _RESUME_IN_NEW_PROCESS, json.dumps(requests)],
            cwd=ROOT, capture_output=True, text=True, timeout=180, check=False,
            env={**os.environ, **OFFLINE_ENV, "PYTHONPATH": str(ROOT)},
        )
    finally:
        for endpoint in endpoints:
            server.unregister(endpoint)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["pid"] != os.getpid()
    return {
        item_id: (first, result, recorder.events[:n], recorder.events[n:], workdir)
        for (item_id, (first, recorder, n, workdir)), result in zip(cases.items(), out["results"])
    }


@pytest.mark.parametrize("item_id", [case[0] for case in NEW_PROCESS_CASES])
def test_resume_in_new_process_from_crewai_persistence(new_process, item_id):
    first, result, leg0, leg1, workdir = new_process[item_id]
    decision = ITEMS[item_id].resume_with[0]
    assert [(e.type, e.tool) for e in leg0 if e.type != "model_call"] == [("tool_call", "search_rooms")]
    # leg 1's model calls went to this item's own endpoint on the gateway, from the new process
    assert [e for e in leg1 if e.type == "model_call"], "the resumed flow never called the model"
    leg1 = [e for e in leg1 if e.type != "model_call"]
    assert result["status"] == "finished", result
    room = first.pending.args["summary"].split()[2]
    if decision.approved:
        assert [(e.tool, e.args) for e in leg1] == [("book_room", {"room_id": room})]
        assert result["final_text"].startswith("Done: BOOKED " + room)
    else:
        assert leg1 == []
        assert decision.text in result["final_text"] and room in result["final_text"]
    # CrewAI's resume consumed the pending feedback it had saved.
    assert _pending_row(workdir, first.state["flow_id"]) is None


# --- --store postgres|redis -----------------------------------------------------------------------------


@pytest.mark.usefixtures("store_servers")
@pytest.mark.parametrize("store", ["postgres", "redis"])
def test_a_store_run_is_declined_crewai_persists_flows_in_sqlite_only(store):
    """CrewAI's one FlowPersistence is SQLiteFlowPersistence: a run on PostgreSQL or Redis is not measured, with that
    reason (never run on SQLite instead). Asked of `stores.why_not_kept`, the rule `arena.evaluate` declines by:
    evaluate itself cannot run here, crewai's environment has no store drivers (psycopg, redis) to reach the server
    with; `arena run durable_state -a crewai --store postgres` from the main environment shows the same reason."""
    from arena import stores

    channel = CrewAIAdapter.info.channel(store)
    assert channel is not None and channel.kind == "unsupported"
    assert stores.why_not_kept(CrewAIAdapter.info, store) == f"crewai has no {store} store: {channel.mechanism}"
    assert "crewai 1.15.30" in channel.mechanism and "SQLiteFlowPersistence" in channel.mechanism
    assert channel.mechanism.endswith(f"no {'PostgreSQL' if store == 'postgres' else 'Redis'} flow persistence")
