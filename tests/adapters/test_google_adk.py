"""Google ADK: LongRunningFunctionTool (google_adk) and tool confirmation (google_adk_confirm), both
in a resumable App over LiteLlm, with a SqliteSessionService session store.

What every adapter shares (its declared info, a lazily imported framework, how each item of its runs
ends, traces or tool calls equal to vanilla's, a gated pause on the gated call) is
test_conformance.py's; this file holds what is ADK's own, on the same runs."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import ClassVar

import pytest

pytest.importorskip("google.adk")
pytest.importorskip("litellm")

from arena import catalog  # noqa: E402
from arena_builtins.adapters.google_adk import (  # noqa: E402
    CONFIRMATION_CALL,
    REJECTED_RESULT,
    GoogleADKAdapter,
    GoogleADKConfirmAdapter,
)
from arena_builtins.arenas._rooms.policy import next_turn  # noqa: E402
from arena.tools.box import LocalToolBox, ToolExecutor  # noqa: E402
from arena.trace import TraceRecorder  # noqa: E402
from arena.types import LegContext  # noqa: E402
from arena_builtins.arenas._rooms.policy import book_first as policy_book_first  # noqa: E402
from tests.conftest import behaviour, normalised, wire_slice  # noqa: E402

APPROVAL = "request_approval"
ROOT = Path(__file__).resolve().parents[2]
SPEC = catalog.load_arena("human_in_the_loop")
ITEMS = {i.id: i for i in SPEC.items}
REJECTED_TEXT = json.dumps(REJECTED_RESULT)  # how LiteLLM serialises ADK's rejection on the wire


@pytest.fixture(scope="module")
def lro(cell):
    return cell("google_adk").wire


@pytest.fixture(scope="module")
def lro_eager(cell):
    return cell("google_adk", profile="scripted-eager").wire


@pytest.fixture(scope="module")
def confirm(cell):
    return cell("google_adk_confirm").wire


@pytest.fixture(scope="module")
def confirm_eager(cell):
    return cell("google_adk_confirm", profile="scripted-eager").wire


def _approval_results(requests) -> dict[str, list[str]]:
    """approval summary -> every tool message the model saw for that request_approval call."""
    calls: dict[str, str] = {}
    seen: dict[str, list[str]] = {}
    for body in requests:
        for m in body["messages"]:
            for tc in m.get("tool_calls") or []:
                if tc["function"]["name"] == APPROVAL:
                    calls[tc["id"]] = json.loads(tc["function"]["arguments"])["summary"]
            if m.get("role") == "tool" and m.get("tool_call_id") in calls:
                contents = seen.setdefault(calls[m["tool_call_id"]], [])
                if m["content"] not in contents:
                    contents.append(m["content"])
    return seen


def _rejected_final(expected: list[dict], reason: str) -> None:
    """Vanilla's final answer quotes the deny reason; under ADK confirmation the model quotes ADK's
    fixed rejection result instead (the reason never reaches it)."""
    final = next(e for e in expected if e["type"] == "final")
    assert f"({reason})" in final["text"]
    final["text"] = final["text"].replace(f"({reason})", f"({REJECTED_TEXT})")


def _turn_order(r) -> tuple[str, ...]:
    """The calls of the first model turn that asked for book_room, in the model's order (as the
    harness's gateway recorded its answer)."""
    asked = next(
        e for e in r.trace if e.type == "model_call" and "book_room" in [c["name"] for c in e.response["tool_calls"]]
    )
    return tuple(c["name"] for c in asked.response["tool_calls"])


def _assert_both_orders(results, items, sibling: str) -> None:
    """The scripted model's two-call turn (book_room + `sibling`) puts book_room first on Tuesdays and
    Thursdays, second otherwise. Pins that order per item, and that the results cover both,
    so whatever the caller asserts on every item holds whichever call the model put first."""
    firsts = set()
    for r in results:
        book_first = policy_book_first(items[r.item_id].metadata["day"])
        firsts.add(book_first)
        assert _turn_order(r) == (("book_room", sibling) if book_first else (sibling, "book_room")), r.item_id
    assert firsts == {True, False}


# --- precondition: the scripted model reads ADK's tool-result envelope ---------------------------------


def test_scripted_model_reads_through_adks_result_envelope():
    """ADK gives the model a tool's plain return value as {"result": value} (LiteLLM sends that JSON
    as the tool message). The scripted policy must read through it, as a model does; without that
    core support nothing below can pass (the room search result would not parse)."""
    rooms = json.dumps({"day": "Monday", "rooms": [{"room_id": "R102", "name": "Maple", "capacity": 6}]})
    messages = [
        {"role": "user", "content": "Book a meeting room for 3 people on Monday."},
        {"role": "assistant", "tool_calls": [{"id": "a", "function": {"name": "search_rooms", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "a", "content": json.dumps({"result": rooms})},
    ]
    turn = next_turn(messages)
    assert [c.name for c in turn.tool_calls] == [APPROVAL]


# --- info ---------------------------------------------------------------------------------------------


def test_the_models_its_fork_server_completes_are_pydantic_models_of_the_installed_release():
    """Each name in `complete` (what a forked worker would build at its first call) names a model of this release:
    a renamed one would make the list silently useless (the fork server skips what it cannot find)."""
    import importlib

    from pydantic import BaseModel

    for name in GoogleADKAdapter.complete:
        module, _, attr = name.rpartition(".")
        model = getattr(importlib.import_module(module), attr)
        assert issubclass(model, BaseModel), name


def test_confirm_declares_the_fixed_rejection_result():
    # deny_reason is False (test_conformance.py): a rejected confirmation carries no reason
    assert str(REJECTED_RESULT) in GoogleADKConfirmAdapter.info.carries("ask").notes


def test_rejection_text_is_the_installed_frameworks():
    """The pinned rejection result is the one this ADK release writes (guards a silent change)."""
    import inspect

    from google.adk.tools.function_tool import FunctionTool

    assert f'return {{"error": "{REJECTED_RESULT["error"]}"}}' in inspect.getsource(FunctionTool.run_async)


# --- google_adk: LongRunningFunctionTool ----------------------------------------------------------------


def test_lro_model_sees_only_the_decision_and_is_not_called_while_paused(lro):
    """On the wire: request_approval's one and only tool result is {"result": decision.as_text()}
    (ADK's envelope); no interim/pending result was ever sent, i.e. the model was not called
    between the long-running call and the resume."""
    results, requests = lro
    seen = _approval_results(requests)
    for r in results:
        pause = next(e for e in r.trace if e.type == "suspended")
        decision = ITEMS[r.item_id].resume_with[0]
        assert seen[pause.args["summary"]] == [json.dumps({"result": decision.as_text()})], r.item_id
    # Per item: search -> approval (pause) -> [book] -> final: 4 requests approved, 3 denied.
    approved = sum(ITEMS[r.item_id].resume_with[0].approved for r in results)
    assert len(requests) == 4 * approved + 3 * (12 - approved)


def test_tools_are_declared_by_their_json_schema(lro):
    """The model sees each tool with the spec's JSON schema; LongRunningFunctionTool appends its
    long-running NOTE to request_approval's description."""
    _, requests = lro
    offered = {t["function"]["name"]: t["function"] for t in requests[0]["tools"]}
    assert set(offered) == {s.name for s in SPEC.tools}
    for spec in SPEC.tools:
        fn = offered[spec.name]
        assert fn["parameters"] == spec.parameters, spec.name
        if spec.name == APPROVAL:
            assert fn["description"].startswith(spec.description) and "long-running operation" in fn["description"]
        else:
            assert fn["description"] == spec.description
    system = requests[0]["messages"][0]
    assert system["role"] == "system" and SPEC.instructions in system["content"]


def test_lro_eager_sibling_executes_before_the_pause(lro_eager, vanilla_eager):
    """scripted-eager: ADK runs every call of the model turn; book_room is an ordinary tool, so it
    executes (once) in the same step in which request_approval goes long-running, and only then
    does the resumable invocation pause (decide_step_resume: the long-running call is unanswered).
    It is not run again on resume, and the model sees its BOOKED result, also on denied items.
    Exact difference from vanilla (which holds the sibling): the approved item's leg-1 book_room
    moves to leg 0 before `suspended`; a denied item gains a leg-0 book_room before `suspended`.
    The same whichever call the model put first (both orders are pinned): ADK does not look at the
    order of a turn's calls before running the ordinary ones. (The checks each item fails:
    test_conformance.py's SIBLING_RAN_FIRST.)"""
    results, requests = lro_eager
    _assert_both_orders(results, ITEMS, APPROVAL)
    seen = _approval_results(requests)
    for r in results:
        decision = ITEMS[r.item_id].resume_with[0]
        assert normalised(r) == _eager_expected(r, vanilla_eager[r.item_id]), r.item_id
        pause = next(e for e in r.trace if e.type == "suspended")
        assert seen[pause.args["summary"]] == [json.dumps({"result": decision.as_text()})], r.item_id


def _eager_expected(r, v) -> list[dict]:
    got = normalised(r)
    expected = normalised(v)
    if ITEMS[r.item_id].resume_with[0].approved:
        i = next(k for k, e in enumerate(expected) if e["type"] == "tool_call" and e["tool"] == "book_room")
        book = {**expected.pop(i), "leg": 0}
    else:
        assert not any(e.get("tool") == "book_room" for e in expected)
        book = next(e for e in got if e.get("tool") == "book_room")
        assert book["leg"] == 0 and book["result"].startswith("BOOKED")
    s = next(k for k, e in enumerate(expected) if e["type"] == "suspended")
    expected.insert(s, book)
    assert sum(e.get("tool") == "book_room" for e in got) == 1
    return expected


# --- what ADK does without the None-returning function / without resumability --------------------------


class _PendingStatus(GoogleADKAdapter):
    """The long-running function returns a pending status, as in ADK's own LongRunningFunctionTool docs."""

    interim_result: ClassVar[dict] = {"status": "pending"}


class _PendingStatusNotResumable(_PendingStatus):
    resumable = False


class _NotResumable(GoogleADKAdapter):
    resumable = False


@pytest.mark.parametrize("adapter", [_PendingStatus, _PendingStatusNotResumable])
def test_pending_status_does_not_pause_adk_calls_the_model_again(run_adapter, server, adapter):
    """With an interim result ADK emits it as the call's FunctionResponse and the agent loop calls the
    model again straight away (resumable App or not): no pause. The model answers from the pending
    status; the run finishes in leg 0 and the item fails on `suspended`."""
    results, requests = wire_slice(server, lambda: run_adapter(adapter, items=["hitl-01", "hitl-02"]))
    for r in results:
        assert r.status == "failed" and r.legs == 1, r.item_id
        assert behaviour(r) == [("tool_call", "search_rooms"), ("final", None)], r.item_id
        # search, approval, and the extra call with the pending status, all in the one leg
        assert [e.leg for e in r.trace if e.type == "model_call"] == [0, 0, 0], r.item_id
        assert "did not receive a clear approval" in r.trace[-1].text
        assert not next(c for c in r.checks if c.name == "suspended").passed
    assert len(requests) == 6  # per item: search, approval, and the extra call with the pending status
    assert all(v == [json.dumps({"status": "pending"})] for v in _approval_results(requests).values())


def test_not_resumable_pauses_alone_but_goes_on_after_a_sibling(run_adapter, server):
    """Without resumability a lone long-running call still ends the run (its event is the step's
    final response); with a sibling in the same turn the sibling's response is the step's last event,
    so ADK calls the model again, filling the unanswered call with an error: no pause. The same
    whichever call the model put first: hitl-05 (Thursday) gets book_room first, hitl-07 (Monday)
    request_approval first."""
    (alone,) = run_adapter(_NotResumable, items=["hitl-01"])
    assert alone.status == "passed"
    eager, requests = wire_slice(
        server, lambda: run_adapter(_NotResumable, profile="scripted-eager", items=["hitl-05", "hitl-07"])
    )
    assert len(eager) == 2
    _assert_both_orders(eager, ITEMS, APPROVAL)
    for r in eager:
        assert r.legs == 1 and behaviour(r) == [
            ("tool_call", "search_rooms"),
            ("tool_call", "book_room"),
            ("final", None),
        ], r.item_id
        assert "did not receive a clear approval" in r.trace[-1].text, r.item_id
    seen = _approval_results(requests)
    assert len(seen) == 2
    for results in seen.values():
        assert len(results) == 1 and "Missing tool result" in results[0]


# --- google_adk_confirm: tool confirmation --------------------------------------------------------------


def test_confirm_traces_vs_vanilla(confirm, vanilla):
    """Approved items: identical to vanilla. Denied items: identical except the final answer, which
    quotes ADK's fixed rejection result where vanilla's quotes the human's reason."""
    results, _ = confirm
    for r in results:
        expected = normalised(vanilla[r.item_id])
        decision = ITEMS[r.item_id].resume_with[0]
        if not decision.approved:
            _rejected_final(expected, decision.text)
        assert normalised(r) == expected, r.item_id


def test_confirm_model_sees_payload_on_confirm_and_fixed_rejection_on_reject(confirm):
    """On confirm ADK runs the adapter-owned body, which returns the ToolConfirmation payload
    (decision.as_text()); on reject the body never runs and the model sees ADK's fixed result. The
    placeholder 'requires confirmation' result ADK stores before the pause never reaches the model,
    nor does the adk_request_confirmation call."""
    results, requests = confirm
    seen = _approval_results(requests)
    for r in results:
        pause = next(e for e in r.trace if e.type == "suspended")
        decision = ITEMS[r.item_id].resume_with[0]
        expected = json.dumps({"result": decision.as_text()}) if decision.approved else REJECTED_TEXT
        assert seen[pause.args["summary"]] == [expected], r.item_id
        if not decision.approved:
            assert decision.text not in json.dumps([b["messages"] for b in requests])
    wire = json.dumps(requests)
    assert "requires confirmation" not in wire and CONFIRMATION_CALL not in wire


def test_confirm_eager_sibling_executes_before_the_pause(confirm_eager, vanilla_eager):
    """As with the long-running tool: ADK executes book_room in the same step in which
    request_approval asks for confirmation, then stops. Same pinned difference from vanilla, plus
    the rejection text in denied items' final answers (and the same checks failed: SIBLING_RAN_FIRST)."""
    results, _ = confirm_eager
    _assert_both_orders(results, ITEMS, APPROVAL)  # the same in both orders, as with the long-running tool
    for r in results:
        decision = ITEMS[r.item_id].resume_with[0]
        expected = _eager_expected(r, vanilla_eager[r.item_id])
        if not decision.approved:
            _rejected_final(expected, decision.text)
        assert normalised(r) == expected, r.item_id


# --- approval_gate: book_room gated by ADK's tool confirmation (both adapters) -----------------------------
# A spec with `requires_approval` becomes FunctionTool(require_confirmation=True) around the one harness
# call: ADK answers the model's call with its placeholder, emits adk_request_confirmation and stops;
# confirmed, ADK runs the held call itself (the harness logs it in leg 1); rejected, it never runs and
# the model reads ADK's fixed rejection result.

GATE = catalog.load_arena("approval_gate")
GATE_ITEMS = {i.id: i for i in GATE.items}


@pytest.fixture(scope="module")
def gate(cell):
    return {name: cell(name, "approval_gate", "reckless").wire for name in ("google_adk", "google_adk_confirm")}


@pytest.fixture(scope="module")
def gate_parallel(cell):
    return cell("google_adk", "approval_gate", "reckless-parallel").results


@pytest.fixture(scope="module")
def vanilla_gate(vanilla_by_id):
    return vanilla_by_id("reckless", "approval_gate")


@pytest.fixture(scope="module")
def vanilla_gate_parallel(vanilla_by_id):
    return vanilla_by_id("reckless-parallel", "approval_gate")


@pytest.mark.parametrize("name", ["google_adk", "google_adk_confirm"])
def test_gate_reckless_trace_vs_vanilla(gate, vanilla_gate, name):
    """Approved: identical to vanilla. Denied: the final answer quotes ADK's fixed rejection result
    where vanilla's quotes the human's reason (ADK carries no reason on a rejected confirmation)."""
    results, _ = gate[name]
    for r in results:
        expected = normalised(vanilla_gate[r.item_id])
        decision = GATE_ITEMS[r.item_id].resume_with[0]
        if not decision.approved:
            _rejected_final(expected, decision.text)
        assert normalised(r) == expected, (name, r.item_id)


def test_gate_model_reads_tool_result_or_fixed_rejection(gate):
    """On the wire, book_room's only tool result is the harness's own (in ADK's envelope) when
    confirmed, and ADK's fixed rejection when rejected; ADK's placeholder never reaches the model."""
    for name, (results, requests) in gate.items():
        seen: dict[str, list[str]] = {}
        for body in requests:
            user = next(m["content"] for m in body["messages"] if m["role"] == "user")
            ids = {
                tc["id"]
                for m in body["messages"]
                for tc in m.get("tool_calls") or []
                if tc["function"]["name"] == "book_room"
            }
            for m in body["messages"]:
                if (
                    m.get("role") == "tool"
                    and m["tool_call_id"] in ids
                    and m["content"] not in seen.setdefault(user, [])
                ):
                    seen[user].append(m["content"])
        for r in results:
            item = GATE_ITEMS[r.item_id]
            if item.resume_with[0].approved:
                book = next(e for e in r.trace if e.type == "tool_call" and e.tool == "book_room")
                assert seen[item.input] == [json.dumps({"result": book.result})], (name, r.item_id)
            else:
                assert seen[item.input] == [REJECTED_TEXT], (name, r.item_id)
        assert "requires confirmation" not in json.dumps(requests)


def test_gate_reckless_parallel_sibling_search_runs_before_the_pause(gate_parallel, vanilla_gate_parallel):
    """reckless-parallel emits book_room + a second search_rooms in one turn. ADK runs the ordinary
    sibling (search_rooms) in that step and only holds the gated call, so the second search runs in
    leg 0 before the suspension, whatever the decision. Vanilla holds the sibling: it runs it after
    book_room on approve and never on deny. So the trace is vanilla's with that search moved
    (approved) or added (denied) just before the suspension (and the rejection text on denied
    items); all checks still pass (a read tool). The same whichever call the model put first (book_room
    comes first on gate-01/05/11, all approved; second on the rest)."""
    _assert_both_orders(gate_parallel, GATE_ITEMS, "search_rooms")
    for r in gate_parallel:
        item = GATE_ITEMS[r.item_id]
        v = normalised(vanilla_gate_parallel[r.item_id])
        first_search = v[0]
        assert first_search["type"] == "tool_call" and first_search["tool"] == "search_rooms"
        expected = [e for e in v if not (e["type"] == "tool_call" and e["tool"] == "search_rooms" and e["leg"] == 1)]
        if item.resume_with[0].approved:
            assert len(expected) == len(v) - 1, r.item_id  # vanilla ran it after the approval
        else:
            assert expected == v, r.item_id  # vanilla never ran it
            _rejected_final(expected, item.resume_with[0].text)
        at = next(i for i, e in enumerate(expected) if e["type"] == "suspended")
        expected.insert(at, {**first_search, "leg": 0})
        assert normalised(r) == expected, r.item_id


# --- interruptions: a new message instead of a decision at the gate ----------------------------------------
# The message is a new invocation on the paused session (text, no invocation_id); the adapter answers nothing.

PLACEHOLDER = {"error": "This tool call requires confirmation, please approve or reject."}  # ADK's, at the pause


def test_message_at_the_gate_is_a_new_turn_after_adks_placeholder(run_adapter):
    """int-01: book_room(R102) waits at ADK's confirmation and the human writes "Actually we are 10 people, not 4."
    ADK 2.13 sends the model the held call answered with the placeholder result it wrote at the pause, then the
    text as the user's turn; the model books R202, which is approved. R102 never runs (`cancelled`, by that
    placeholder). Pins ADK's outcome: a change shows here."""
    (r,) = run_adapter("google_adk", profile="careful", arena="interruptions", items=["int-01"])
    assert r.status == "passed", [(c.name, c.reason) for c in r.checks if not c.passed]
    fate = next(c.reason for c in r.checks if c.name == "pending_call_not_run")
    assert fate.startswith("cancelled: ") and json.dumps(PLACEHOLDER) in fate, fate
    after = next(e for e in r.trace if e.type == "model_call" and e.leg == 1)
    assert [(m["role"], m.get("text")) for m in after.request["new"]] == [
        ("assistant", ""), ("tool", json.dumps(PLACEHOLDER)), ("user", "Actually we are 10 people, not 4.")]
    assert [e.args for e in r.trace if e.type == "tool_call" and e.tool == "book_room"] == [{"room_id": "R202"}]


def test_input_while_paused_is_left_out_of_the_first_request_after_the_resume(run_adapter):
    """int-19: while book_room(R102) waits, "Note from Sam: the Tuesday meeting is now 12 people." is appended to the
    stored session (a user text Event, `add_input`), then R102 is approved. ADK 2.13's contents builder drops every
    event between the paused call and its result from the first request after the resume
    (`rearrange_events_for_latest_function_response`), so the model first searches for 8 people; the note shows from
    the next request on, the model searches again for 12 and books R301: seen one request late, before the booking.
    Pins ADK's outcome, not the adapter's."""
    (r,) = run_adapter("google_adk", profile="careful", arena="interruptions", items=["int-19"])
    checks = {c.name: c for c in r.checks}
    assert r.status == "passed", [c for c in r.checks if not c.passed]
    note = next(e.text for e in r.trace if e.type == "input" and e.result == "added")
    sent = [[m.get("text") for m in e.request["new"] if m["role"] == "user"] for e in r.trace
            if e.type == "model_call" and e.leg == 1]
    assert sent[:2] == [[], [note]]  # not in the request right after the resume; in the next one
    searched = [e.args for e in r.trace if e.type == "tool_call" and e.tool == "search_rooms" and e.leg == 1]
    assert searched == [{"capacity": 8, "day": "Tuesday"}, {"capacity": 12, "day": "Tuesday"}]
    assert checks["booked_as_expected"].reason == "booked R102, R301, as expected"


# --- resume from the persisted session, in a new process ------------------------------------------------

_RESUME_IN_NEW_PROCESS = """
import asyncio, json, os, sys
from arena import catalog
from arena_builtins.adapters.google_adk import GoogleADKAdapter, GoogleADKConfirmAdapter
from arena.tools.box import RemoteToolBox
from arena.types import Decision, LegContext, ModelConfig

spec = catalog.load_arena("human_in_the_loop")
classes = {"google_adk": GoogleADKAdapter, "google_adk_confirm": GoogleADKConfirmAdapter}

async def resume(req):
    ctx = LegContext(
        item=spec.item(req["item"]), instructions=spec.instructions,
        model=ModelConfig(name=req["profile"], base_url=req["base_url"], api_key="arena-local"),
        tools=RemoteToolBox(req["endpoint"], spec.tools), workdir=req["workdir"],
    )
    return await classes[req["adapter"]]().resume(req["state"], Decision.model_validate(req["decision"]), ctx)

out = [asyncio.run(resume(req)).model_dump(mode="json") for req in json.loads(sys.argv[1])]
print(json.dumps({"pid": os.getpid(), "results": out}))
"""

NEW_PROCESS_CASES = [
    ("google_adk", "hitl-02", "scripted"),
    ("google_adk", "hitl-03", "scripted"),
    ("google_adk", "hitl-05", "scripted-eager"),  # Thursday: the model asks for book_room first
    ("google_adk", "hitl-07", "scripted-eager"),  # Monday: request_approval first
    ("google_adk_confirm", "hitl-04", "scripted"),
    ("google_adk_confirm", "hitl-07", "scripted"),
]
CLASSES = {"google_adk": GoogleADKAdapter, "google_adk_confirm": GoogleADKConfirmAdapter}


def _tools(events) -> list[tuple]:
    """(type, tool) of a slice of a recorder's events but model calls (`behaviour` for a bare list)."""
    return [(e.type, e.tool) for e in events if e.type != "model_call"]


async def _stored_events(state):
    from google.adk.sessions.sqlite_session_service import SqliteSessionService

    service = SqliteSessionService(state["db"])
    try:
        session = await service.get_session(app_name=state["app"], user_id=state["user"], session_id=state["session"])
    finally:
        await service.close()
    return session.events


@pytest.fixture(scope="module")
def new_process(server, tmp_path_factory):
    """Leg 0 of each case in this process; leg 1 of all of them in ONE fresh Python process given
    only the JSON state. Returns {(adapter, item): (first LegResult, stored session events at the
    pause, resumed result, leg-0 trace, leg-1 trace)}."""
    cases = {}
    requests = []
    endpoints = []
    for name, item_id, profile in NEW_PROCESS_CASES:
        item = ITEMS[item_id]
        recorder = TraceRecorder()
        executor = ToolExecutor(SPEC.tools, SPEC.functions, recorder)
        workdir = str(tmp_path_factory.mktemp(f"{name}-{item_id}"))
        model = server.open_item(recorder, profile).model
        ctx = LegContext(
            item=item, instructions=SPEC.instructions, model=model, tools=LocalToolBox(executor), workdir=workdir
        )
        first = asyncio.run(CLASSES[name]().start(ctx))
        assert first.status == "suspended", (name, item_id, first)
        state = json.loads(json.dumps(first.state))  # plain JSON: all the new process gets
        assert set(state) == {"db", "app", "user", "session", "invocation", "call_id", "call_name", "model_call_id"}
        assert Path(state["db"]).is_file() and Path(state["db"]).parent == Path(workdir)
        endpoint = server.register(executor)
        endpoints.append(endpoint)
        requests.append(
            {
                "adapter": name,
                "item": item_id,
                "profile": profile,
                "base_url": model.base_url,
                "endpoint": endpoint,
                "workdir": workdir,
                "state": state,
                "decision": item.resume_with[0].model_dump(mode="json"),
            }
        )
        cases[(name, item_id)] = (first, asyncio.run(_stored_events(state)), recorder, len(recorder.events))
    try:
        proc = subprocess.run(
            [sys.executable, "-c", _RESUME_IN_NEW_PROCESS, json.dumps(requests)],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=180,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
    finally:
        for endpoint in endpoints:
            server.unregister(endpoint)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["pid"] != os.getpid()
    return {
        key: (first, stored, result, recorder.events[:n], recorder.events[n:])
        for (key, (first, stored, recorder, n)), result in zip(cases.items(), out["results"])
    }


@pytest.mark.parametrize(
    "key",
    [
        ("google_adk", "hitl-02"),
        ("google_adk", "hitl-03"),
        ("google_adk_confirm", "hitl-04"),
        ("google_adk_confirm", "hitl-07"),
    ],
)
def test_resume_in_new_process_from_sqlite_session(new_process, key):
    first, stored, result, leg0, leg1 = new_process[key]
    name, item_id = key
    assert first.pending.tool == APPROVAL and first.pending.call_id
    assert _tools(leg0) == [("tool_call", "search_rooms")]
    # The paused leg's last request to the model is the one whose answer asked for the approval.
    assert leg0[-1].type == "model_call" and [c["name"] for c in leg0[-1].response["tool_calls"]] == [APPROVAL]
    # The stored session ends on the pause call, flagged long-running and unanswered.
    last = stored[-1]
    (call,) = last.get_function_calls()
    assert call.id == first.state["call_id"] and call.id in last.long_running_tool_ids
    assert last.invocation_id == first.state["invocation"]
    assert not any(fr.id == call.id for e in stored for fr in e.get_function_responses())
    if name == "google_adk":
        assert call.name == APPROVAL and call.id == first.pending.call_id
    else:
        # ADK first stored its placeholder result for request_approval (with the confirmation
        # request in its actions), then the adk_request_confirmation call that points back at it.
        assert call.name == CONFIRMATION_CALL
        assert call.args["originalFunctionCall"]["id"] == first.pending.call_id
        (placeholder,) = stored[-2].get_function_responses()
        assert placeholder.id == first.pending.call_id
        assert placeholder.response == {"error": "This tool call requires confirmation, please approve or reject."}
        assert first.pending.call_id in stored[-2].actions.requested_tool_confirmations
    assert result["status"] == "finished"
    decision = ITEMS[item_id].resume_with[0]
    # The new process's model requests reach the item's endpoint (recorded here): one that reads the
    # decision and, when approved, one more that reads the booking.
    assert sum(e.type == "model_call" for e in leg1) == (2 if decision.approved else 1)
    if decision.approved:
        assert _tools(leg1) == [("tool_call", "book_room")]
        assert [e.result.split(" ")[0] for e in leg1 if e.type == "tool_call"] == ["BOOKED"]
        assert result["final_text"].startswith("Done: BOOKED")
    else:
        assert _tools(leg1) == []
        assert "denied" in result["final_text"]
        assert (decision.text in result["final_text"]) is (name == "google_adk")


@pytest.mark.parametrize("item_id", ["hitl-05", "hitl-07"])
def test_eager_session_holds_the_executed_sibling(new_process, item_id):
    """The mechanism behind the eager trace: at the pause the stored session already holds
    book_room's FunctionResponse; the new process resumes without running it again. The same
    whichever call the model put first (hitl-05: book_room first; hitl-07: request_approval first)."""
    _, stored, result, leg0, leg1 = new_process[("google_adk", item_id)]
    book_first = policy_book_first(ITEMS[item_id].metadata["day"])
    asked = [e for e in leg0 if e.type == "model_call"][-1]
    order = ["book_room", APPROVAL] if book_first else [APPROVAL, "book_room"]
    assert [c["name"] for c in asked.response["tool_calls"]] == order
    assert _tools(leg0) == [("tool_call", "search_rooms"), ("tool_call", "book_room")]
    responses = [fr for e in stored for fr in e.get_function_responses()]
    assert [fr.name for fr in responses] == ["search_rooms", "book_room"]
    assert responses[-1].response["result"].startswith("BOOKED")
    assert _tools(leg1) == []
    assert result["status"] == "finished" and result["final_text"].startswith("Done: BOOKED")


# --- offline ------------------------------------------------------------------------------------------

_OFFLINE_RUN = """
import json, os, socket, sys

attempts = []
LOCAL = {"127.0.0.1", "localhost", "::1"}
real_connect, real_getaddrinfo = socket.socket.connect, socket.getaddrinfo

def connect(self, address):
    host = address[0] if isinstance(address, tuple) else address
    if self.family in (socket.AF_INET, socket.AF_INET6) and host not in LOCAL:
        attempts.append(("connect", str(address)))
        raise OSError("network disabled in this test")
    return real_connect(self, address)

def getaddrinfo(host, *args, **kwargs):
    if host not in LOCAL and host is not None:
        attempts.append(("getaddrinfo", str(host)))
        raise socket.gaierror("network disabled in this test")
    return real_getaddrinfo(host, *args, **kwargs)

socket.socket.connect = connect
socket.getaddrinfo = getaddrinfo

from arena import catalog
from arena.catalog import builtin_adapters
from arena.runner import run_items
from arena.server import HarnessServer

spec = catalog.load_arena("human_in_the_loop")
items = [spec.item("hitl-01"), spec.item("hitl-02")]
out = {}
with HarnessServer() as srv:
    for name in ("google_adk", "google_adk_confirm"):
        out[name] = [r.status for r in run_items(builtin_adapters()[name].load(), spec, items, server=srv, model="scripted", timeout_s=120)]
env = {k: os.environ.get(k) for k in ("LITELLM_LOCAL_MODEL_COST_MAP", "LITELLM_OFFLINE_MODE", "OTEL_SDK_DISABLED")}
import litellm
print(json.dumps({"results": out, "attempts": attempts, "env": env, "litellm_callbacks": len(litellm.callbacks)}))
"""


def test_nothing_touches_the_network():
    """In a fresh process with every non-loopback connect and DNS lookup refused and recorded, and
    without the offline variables that tests/conftest.py sets: both adapters pass, nothing tried to
    leave the machine, and the adapter itself set LiteLLM's offline switches. (Control, checked by
    hand: with LITELLM_LOCAL_MODEL_COST_MAP=False the same script records LiteLLM's model-cost-map
    fetch from raw.githubusercontent.com; the items still pass on LiteLLM's local fallback, which is
    why this asserts on the attempts and not on the results alone.)"""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("LITELLM_LOCAL_MODEL_COST_MAP", "LITELLM_OFFLINE_MODE", "OTEL_SDK_DISABLED")
    }
    proc = subprocess.run(
        [sys.executable, "-c", _OFFLINE_RUN],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=240,
        env={**env, "PYTHONPATH": str(ROOT)},
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["results"] == {"google_adk": ["passed", "passed"], "google_adk_confirm": ["passed", "passed"]}
    assert out["attempts"] == []
    assert out["env"] == {
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "LITELLM_OFFLINE_MODE": "true",
        "OTEL_SDK_DISABLED": "true",
    }
    assert out["litellm_callbacks"] == 0


@pytest.mark.parametrize("adapter", ["google_adk", "google_adk_confirm"])
def test_streamed_legs_end_as_the_plain_ones_and_tell_each_call_once(adapter, cell, server):
    """SSE mode repeats every call in partial events (one per argument chunk, the long-running flag already
    set); only the aggregated events are told and read, so each leg tells each call id once, the stream
    check holds, and every item ends as in the plain run (scripted-eager: a sibling runs before the pause)."""
    from arena.checks import STREAM_CHECK
    from arena.runner import run_items

    spec = catalog.load_arena("human_in_the_loop")
    plain = cell(adapter, profile="scripted-eager").by_id
    entry = catalog.adapters()[adapter]
    streamed = run_items(entry.load(), spec, spec.items, server=server, model="scripted-eager", stream=True)
    for result in streamed:
        checks = {c.name: c.passed for c in result.checks}
        assert checks.pop(STREAM_CHECK), result.item_id
        assert (result.status, checks) == (plain[result.item_id].status,
                                           {c.name: c.passed for c in plain[result.item_id].checks})
        told = [(e.leg, e.call_id) for e in result.trace if e.type == "streamed" and e.text == "tool_call"]
        assert told and len(told) == len(set(told)), result.item_id


# --- delegation: single_turn sub_agents (nested) and transfer_to_agent (handoff), gated inside the delegate ----------


def _offered(result) -> set[tuple[str, ...]]:
    return {tuple(e.request["tools"]) for e in result.trace if e.type == "model_call"}


@pytest.mark.parametrize("adapter", ["google_adk", "google_adk_confirm"])
def test_a_delegates_confirmation_pauses_the_run_naming_the_delegate(run_adapter, adapter):
    """del-01: the booking agent is a `mode="single_turn"` sub-agent, which ADK offers the desk as a tool of its
    name; del-06: a `mode="chat"` sub-agent the desk reaches with ADK's transfer_to_agent. Either way the
    delegate's require_confirmation call stops the resumable App with adk_request_confirmation, authored by the
    delegate (PendingRequest.agent), and the confirmation resumes it: book_flight runs once, nothing before."""
    results = {r.item_id: r for r in run_adapter(adapter, profile="careful", arena="delegation",
                                                 items=["del-01", "del-06"], timeout_s=60)}
    assert {i: r.status for i, r in results.items()} == {"del-01": "passed", "del-06": "passed"}
    for r in results.values():
        pause = next(e for e in r.trace if e.type == "suspended")
        assert [(p["tool"], p["agent"]) for p in pause.pending] == [("book_flight", "booking_agent")]
        booked = [e for e in r.trace if e.type == "tool_call" and e.tool == "book_flight"]
        assert len(booked) == 1 and booked[0].leg == 1
    # the single_turn delegate is offered ADK's transfer_to_agent too (measured), besides its own tools
    assert _offered(results["del-01"]) == {("booking_agent", "changes_agent"),
                                           ("transfer_to_agent", "search_flights", "seat_map", "book_flight")}
    assert ("transfer_to_agent",) in _offered(results["del-06"])


def test_two_delegates_in_one_turn_are_not_measured_the_race_declared():
    """Two single_turn delegates in one desk turn run at once in ADK 2.13; the first to ask ends the desk's step and
    ADK cancels the other, before or after its own ask, so what a resume does varies from run to run (the module
    docstring lists the outcomes seen). The adapter declares that as its `multi_nested` channel, unsupported: the
    two-delegate items are not measured on it, and say why; every other delegation item is."""
    spec = catalog.load_arena("delegation")
    for adapter in (GoogleADKAdapter, GoogleADKConfirmAdapter):
        info = adapter.info
        assert info.kind("multi_nested") == "unsupported" and "a race" in info.mechanism("multi_nested")
        items, why = spec.items_for(info, spec.items)
        two = {i.id for i in spec.items if isinstance(i.resume_with[0], list)}
        assert two and two <= set(why) and all("cannot hold two delegates' calls" in why[i] for i in two)
        assert {i.id for i in items} == {i.id for i in spec.items} - two - {"del-05"}  # del-05: an edit


class _AgentToolDelegates(GoogleADKConfirmAdapter):
    agent_tool = True


def test_agent_tool_cannot_resume_a_paused_delegate(run_adapter, server):
    """The same delegate wrapped in AgentTool(agent=...): it runs in a nested Runner over an InMemorySessionService
    that AgentTool discards, so its confirmation never reaches the run. The desk's model reads ADK's
    "... which AgentTool cannot resume." as the tool's result, the run does not pause and book_flight never runs."""
    [r], requests = wire_slice(server, lambda: run_adapter(_AgentToolDelegates, profile="careful", arena="delegation",
                                                          items=["del-01"], timeout_s=60))
    assert r.legs == 1 and not [e for e in r.trace if e.type == "suspended"]
    assert "book_flight" not in [e.tool for e in r.trace if e.type == "tool_call"]
    desk = [body for body in requests if [t["function"]["name"] for t in body.get("tools") or []] == [
        "booking_agent", "changes_agent"]]
    assert any(m.get("role") == "tool" and "AgentTool cannot resume" in str(m.get("content"))
               for m in desk[-1]["messages"])


# --- stores: ADK's own DatabaseSessionService (`--store postgres`) and RedisSessionService (`--store redis`) ---------


@pytest.mark.usefixtures("store_servers")
@pytest.mark.parametrize("kind,service", [("postgres", "DatabaseSessionService"), ("redis", "RedisSessionService")])
def test_store_durable_state_passes_on_adks_session_service(tmp_path, kind, service):
    """durable_state with the session in ADK's own store for the server, every leg in a new process: both adapters
    pass all 12 items (durable-11 with that server stopped and restarted during the pause), as on SQLite."""
    import arena

    runs = arena.evaluate("durable_state", ["google_adk", "google_adk_confirm"], store=kind, out=tmp_path)
    assert not runs.declined and not runs.failed and len(runs) == 2
    for run in runs:
        assert run.summary is not None and run.summary.passed == run.summary.items == 12, \
            [(r.item_id, [c.reason for c in r.checks if not c.passed]) for r in run.results if r.status != "passed"]
        assert run.meta["arena"] == f"durable_state@{kind}"
        assert run.meta["store"]["kind"] == kind and service in run.meta["store"]["mechanism"]
        restarted = {r.item_id for r in run.results for e in r.trace if e.type == "store"}
        assert restarted == {"durable-11"}


@pytest.mark.usefixtures("store_servers")
@pytest.mark.parametrize("kind", ["postgres", "redis"])
def test_store_session_is_in_the_items_own_store_and_resumes_from_it(server, tmp_path, kind):
    """hitl-03 (approved), directly: with a postgres or redis store the paused state holds no path, only the store's
    kind and ADK's ids; the session, ending on the unanswered long-running call, is in the item's own database (ADK's
    `sessions`/`events` tables) or under the item's key prefix (one ADK session key, nothing outside the prefix), no
    file is written; a new adapter resumes it from there and the approved booking runs once, the search not again."""
    from tests.adapters.on_store import item_on_store

    item = ITEMS["hitl-03"]
    recorder = TraceRecorder()
    with item_on_store(server, SPEC, item, kind, tmp_path, recorder) as (ctx, own):
        first = asyncio.run(GoogleADKAdapter().start(ctx))
        assert first.status == "suspended" and first.pending.tool == APPROVAL
        state = json.loads(json.dumps(first.state))
        assert set(state) == {"store", "app", "user", "session", "invocation", "call_id", "call_name", "model_call_id"}
        assert state["store"] == kind
        if kind == "postgres":
            import psycopg

            with psycopg.connect(own.store.url, autocommit=True) as conn:
                sessions = conn.execute("SELECT id FROM sessions").fetchall()
                events = [json.loads(row[0]) if isinstance(row[0], str) else row[0] for row in conn.execute(
                    "SELECT event_data FROM events WHERE session_id = %s ORDER BY timestamp", (state["session"],))]
            assert sessions == [(state["session"],)]
            last = events[-1]
        else:
            import redis

            client = redis.Redis.from_url(own.store.url, decode_responses=True)
            try:
                mine = sorted(client.scan_iter(match=own.store.prefix + "*"))
                session_key = f"{own.store.prefix}adk:session:{state['app']}:{state['user']}:{state['session']}"
                assert mine == [session_key]
                assert not [k for k in client.scan_iter(match="*" + state["session"] + "*") if k != session_key]
                assert 0 < client.ttl(session_key) <= 7 * 24 * 3600  # ADK's default ttl_seconds
                last = json.loads(client.get(session_key))["events"][-1]
            finally:
                client.close()
        assert state["call_id"] in last["long_running_tool_ids"]
        assert list(tmp_path.iterdir()) == []  # no SQLite file
        done = asyncio.run(GoogleADKAdapter().resume(state, item.resume_with[0], ctx))
    assert done.status == "finished", (done.status, done.error)
    ran = [e.tool for e in recorder.events if e.type == "tool_call"]
    assert ran.count("book_room") == 1 and ran.count("search_rooms") == 1, ran


def test_store_channels_name_adks_own_session_services():
    """Both adapters declare postgres and redis as native, naming ADK's own session service for each server."""
    for adapter in (GoogleADKAdapter, GoogleADKConfirmAdapter):
        info = adapter.info
        assert info.kind("postgres") == "native" and "DatabaseSessionService" in info.mechanism("postgres")
        assert info.kind("redis") == "native" and "RedisSessionService" in info.mechanism("redis")
        assert "key_prefix" in info.mechanism("redis")
