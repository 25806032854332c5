"""What an arena's own channel adds works with no edit of the core (issue 52: adding a channel edits nothing of
arena/types.py, arena/worker/ or the runner): its hook reaches the adapter wherever it runs, in the harness's process
through `Adapter.run_hook` and in a worker over the protocol's generic `hook` request; the trace events it lists
are recorded, and a type no channel lists is refused; so are the decision kinds it uses, which reach the adapter as they
were made, and an unknown kind is refused where an item names it and where a resume is recorded."""

from __future__ import annotations

import asyncio
import sys

import pytest

from arena.adapter import AdapterContractError, HookNotSupported, check_adapter
from arena.checks import validate_checks
from arena.spec import ArenaSpec
from arena.tools.box import LocalToolBox, ToolExecutor
from arena.trace import TraceRecorder
from arena.trace import TraceError
from arena.types import Decision, DecisionKind, EvalItem, LegContext, ModelConfig
from arena.worker.client import WorkerAdapter
from tests.channel_hooks import Elicits, ElicitsNot

APPROVE = Decision(kind=DecisionKind.approve)
DECLINE = Decision(kind="decline_elicitation", text="not now")  # the channel's own kind


def _ctx(tmp_path) -> LegContext:
    return LegContext(item=EvalItem(id="i", input="go"), instructions="",
                      model=ModelConfig(name="scripted", base_url="http://127.0.0.1:1/v1", api_key="k"),
                      tools=LocalToolBox(ToolExecutor([], {}, TraceRecorder())), workdir=str(tmp_path))


async def _legs(adapter, ctx, decision: Decision = APPROVE) -> str:
    paused = await adapter.start(ctx)
    state = await adapter.run_hook("answer_elicitation", paused.state, "Alice", ctx=ctx)
    state = await adapter.run_hook("answer_elicitation", state, "Paris", ctx=ctx)
    done = await adapter.resume(state, decision, ctx)
    return done.final_text


def test_a_hook_of_an_arenas_channel_runs_in_process(tmp_path):
    check_adapter(Elicits)
    assert asyncio.run(_legs(Elicits(), _ctx(tmp_path))) == "answers: Alice, Paris; approve"
    assert asyncio.run(_legs(Elicits(), _ctx(tmp_path), DECLINE)) == "answers: Alice, Paris; decline_elicitation"


@pytest.mark.parametrize("restart", [False, True], ids=["same worker", "a new worker per leg"])
def test_a_hook_of_an_arenas_channel_runs_in_a_worker(server, tmp_path, restart):
    async def run(decision: Decision) -> str:
        worker = WorkerAdapter("tests.channel_hooks:Elicits", Elicits.info, sys.executable, server,
                               restart_between_legs=restart)
        try:
            return await _legs(worker, _ctx(tmp_path), decision)
        finally:
            await worker.aclose()

    assert asyncio.run(run(APPROVE)) == "answers: Alice, Paris; approve"
    # a new worker's first request is this resume: its decision's kind is read before the channel is imported there
    assert asyncio.run(run(DECLINE)) == "answers: Alice, Paris; decline_elicitation"


def test_run_hook_refuses_what_no_channel_has_and_what_the_adapter_lacks(tmp_path):
    ctx = _ctx(tmp_path)
    with pytest.raises(HookNotSupported, match="does not implement start"):
        asyncio.run(Elicits().run_hook("start", None, ctx=ctx))
    with pytest.raises(HookNotSupported, match="does not implement add_input"):
        asyncio.run(Elicits().run_hook("add_input", None, "text", ctx=ctx))
    with pytest.raises(AdapterContractError, match="'elicitation_hook_test' channel but does not implement "
                                                   "answer_elicitation"):
        check_adapter(ElicitsNot)


def test_a_trace_event_of_a_registered_channel_is_recorded_and_an_unknown_one_refused():
    recorder = TraceRecorder()
    assert recorder.record("elicited", text="Alice").type == "elicited"
    with pytest.raises(ValueError, match="unknown trace event type 'telepathy'"):
        recorder.record("telepathy")


def test_a_decision_kind_is_a_built_in_member_or_a_channels_own_string():
    assert Decision.model_validate({"kind": "approve"}).kind is DecisionKind.approve
    assert Decision.model_validate_json(DECLINE.model_dump_json()) == DECLINE
    assert DECLINE.kind == "decline_elicitation" and DECLINE.kind_name == "decline_elicitation"
    assert APPROVE.kind_name == "approve"


def test_a_decision_of_a_registered_channels_kind_is_recorded_and_an_unknown_one_refused():
    recorder = TraceRecorder()
    assert recorder.record("resumed", decision=DECLINE).decision == DECLINE
    assert recorder.record("resumed", decisions=[APPROVE, DECLINE]).decisions == [APPROVE, DECLINE]
    with pytest.raises(TraceError, match="a decision of unknown kind 'telepathy'"):
        recorder.record("resumed", decision=Decision(kind="telepathy"))
    with pytest.raises(TraceError, match="unknown kind 'telepathy'"):
        recorder.record("resumed", decisions=[APPROVE, Decision(kind="telepathy")])


def test_an_item_that_decides_an_unknown_kind_is_refused_when_its_arena_loads():
    def arena(*decisions: Decision | list[Decision]) -> ArenaSpec:
        return ArenaSpec(name="kinds", description="", instructions="", tools=[], functions={},
                         items=[EvalItem(id="k-1", input="go", resume_with=list(decisions))])

    validate_checks(arena(APPROVE, DECLINE, [APPROVE, DECLINE]))
    with pytest.raises(ValueError, match="item 'k-1' decides 'telepathy', a kind no registered channel uses"):
        validate_checks(arena(APPROVE, [DECLINE, Decision(kind="telepathy")]))
