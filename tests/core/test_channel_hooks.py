"""What an arena's own channel adds works with no edit of the core (issue 52: adding a channel edits nothing of
arena/types.py, arena/worker/ or the runner): its hook reaches the adapter wherever it runs, in the harness's process
through `Adapter.run_hook` and in a worker over the protocol's generic `hook` request; the trace events it lists
are recorded, and a type no channel lists is refused."""

from __future__ import annotations

import asyncio
import sys

import pytest

from arena.adapter import AdapterContractError, HookNotSupported, check_adapter
from arena.tools.box import LocalToolBox, ToolExecutor
from arena.trace import TraceRecorder
from arena.types import Decision, DecisionKind, EvalItem, LegContext, ModelConfig
from arena.worker.client import WorkerAdapter
from tests.channel_hooks import Elicits, ElicitsNot

APPROVE = Decision(kind=DecisionKind.approve)


def _ctx(tmp_path) -> LegContext:
    return LegContext(item=EvalItem(id="i", input="go"), instructions="",
                      model=ModelConfig(name="scripted", base_url="http://127.0.0.1:1/v1", api_key="k"),
                      tools=LocalToolBox(ToolExecutor([], {}, TraceRecorder())), workdir=str(tmp_path))


async def _legs(adapter, ctx) -> str:
    paused = await adapter.start(ctx)
    state = await adapter.run_hook("answer_elicitation", paused.state, "Alice", ctx=ctx)
    state = await adapter.run_hook("answer_elicitation", state, "Paris", ctx=ctx)
    done = await adapter.resume(state, APPROVE, ctx)
    return done.final_text


def test_a_hook_of_an_arenas_channel_runs_in_process(tmp_path):
    check_adapter(Elicits)
    assert asyncio.run(_legs(Elicits(), _ctx(tmp_path))) == "answers: Alice, Paris"


@pytest.mark.parametrize("restart", [False, True], ids=["same worker", "a new worker per leg"])
def test_a_hook_of_an_arenas_channel_runs_in_a_worker(server, tmp_path, restart):
    async def run() -> str:
        worker = WorkerAdapter("tests.channel_hooks:Elicits", Elicits.info, sys.executable, server,
                               restart_between_legs=restart)
        try:
            return await _legs(worker, _ctx(tmp_path))
        finally:
            await worker.aclose()

    assert asyncio.run(run()) == "answers: Alice, Paris"


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
