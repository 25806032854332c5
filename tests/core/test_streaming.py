"""Streamed runs: every leg streamed, what the stream tells recorded where it is read and checked against what
ran; the reference loop gives the same results streamed as plain; adapters that cannot stream are not measured."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from arena import catalog, evaluate
from arena.checks import STREAM_CHECK, Scoring, run_checks
from arena.stream_check import stream_matches_run
from arena.streaming import plain_label, stream_endpoint, streamed_label
from arena.tools.box import ToolExecutor
from arena.trace import TraceRecorder
from arena.types import AdapterInfo, Channel, Decision, DecisionKind, TraceEvent
from arena_builtins.adapters.vanilla import VanillaAdapter

ROOT = Path(__file__).resolve().parents[2]
GATE = catalog.load_arena("approval_gate")


# -- the check, on crafted traces ----------------------------------------------------------------------------


def _asked(seq: int, *calls: tuple[str, str]) -> TraceEvent:
    return TraceEvent(seq=seq, leg=0, type="model_call",
                      response={"tool_calls": [{"id": i, "name": n, "args": {}} for n, i in calls]})


def _told(seq: int, kind: str, tool: str, call_id: str | None = None, leg: int = 0,
          result: str | None = None) -> TraceEvent:
    return TraceEvent(seq=seq, leg=leg, type="streamed", text=kind, tool=tool, call_id=call_id, result=result)


def _ran(seq: int, tool: str, call_id: str | None = None, leg: int = 0) -> TraceEvent:
    return TraceEvent(seq=seq, leg=leg, type="tool_call", tool=tool, args={}, result="ok", call_id=call_id)


def _check(*trace: TraceEvent):
    return stream_matches_run(Scoring(item=GATE.items[0], trace=list(trace), arena=GATE))


def test_a_result_the_stream_reports_for_a_tool_that_never_ran_fails():
    result = _check(_asked(0, ("book_room", "c1")), _told(1, "tool_call", "book_room", "c1"),
                    _told(2, "tool_result", "book_room", "c1"))
    assert not result.passed and "the stream said book_room ran (c1); the tool log shows it did not" in result.reason


def test_a_result_reported_before_the_tool_ran_fails_and_after_it_passes():
    asked = _asked(0, ("search_rooms", "c1"))
    assert not _check(asked, _told(1, "tool_result", "search_rooms", "c1"), _ran(2, "search_rooms", "c1")).passed
    passed = _check(asked, _told(1, "tool_call", "search_rooms", "c1"), _ran(2, "search_rooms", "c1"),
                    _told(3, "tool_result", "search_rooms", "c1"))
    assert passed.passed and "1 call(s), 1 result(s)" in passed.reason


def test_one_run_backs_one_reported_result_and_call_ids_must_agree():
    asked = _asked(0, ("search_rooms", "c1"))
    twice = _check(asked, _ran(1, "search_rooms"), _told(2, "tool_result", "search_rooms"),
                   _told(3, "tool_result", "search_rooms"))
    assert not twice.passed  # without ids: two results reported, one run
    other = _check(asked, _ran(1, "search_rooms", "c9"), _told(2, "tool_result", "search_rooms", "c1"))
    assert not other.passed
    # a resumed stream repeating the result of a call that ran (LangGraph re-emits the tools node's messages)
    again = _check(asked, _ran(1, "search_rooms", "c1"), _told(2, "tool_result", "search_rooms", "c1"),
                   _told(3, "tool_result", "search_rooms", "c1", leg=1))
    assert again.passed


def test_a_denied_call_s_result_is_the_denial_not_a_run():
    asked = _asked(0, ("book_room", "c1"))
    resumed = TraceEvent(seq=3, leg=1, type="resumed", decision=Decision(kind=DecisionKind.deny, text="no"))
    trace = [asked, _told(1, "pause", "book_room", "c1"), TraceEvent(seq=2, leg=0, type="suspended", tool="book_room"),
             resumed, _told(4, "tool_result", "book_room", "c1", leg=1, result="DENIED: no")]
    assert _check(*trace).passed
    approved = resumed.model_copy(update={"decision": Decision(kind=DecisionKind.approve)})
    assert not _check(*[approved if e is resumed else e for e in trace]).passed  # approved, it had to run
    # an edit a framework cannot carry is sent as a rejection: its result is that rejection (doc_review on ADK)
    edited = resumed.model_copy(update={"decision": None, "decisions": [
        Decision(kind=DecisionKind.edit, args={"room_id": "R2"}, call_id="c1"),
        Decision(kind=DecisionKind.approve, call_id="c2")]})
    assert _check(*[edited if e is resumed else e for e in trace]).passed
    other = edited.model_copy(update={"decisions": [Decision(kind=DecisionKind.edit, args={}, call_id="c9"),
                                                    Decision(kind=DecisionKind.approve, call_id="c1")]})
    assert not _check(*[other if e is resumed else e for e in trace]).passed  # c1 was approved: it had to run


def test_a_call_the_model_never_asked_for_and_a_pause_the_leg_never_made_fail():
    invented = _check(_asked(0, ("search_rooms", "c1")), _told(1, "tool_call", "book_room", "c2"))
    assert not invented.passed and "the model asked for no such call" in invented.reason
    no_pause = _check(_asked(0, ("book_room", "c1")), _told(1, "pause", "book_room", "c1"),
                      TraceEvent(seq=2, leg=0, type="final", text="done"))
    assert not no_pause.passed and "the leg did not stop there" in no_pause.reason
    replayed = _check(_asked(0, ("book_room", "c1")), _told(1, "pause", "book_room", "c1"),
                      TraceEvent(seq=2, leg=0, type="replayed", result="suspended", tool="book_room"))
    assert replayed.passed  # a director's replayed resume that paused again (resume_safety's stale resumes)


def test_a_stream_that_told_nothing_while_tools_ran_fails_and_other_tools_are_not_the_harness_s():
    silent = _check(_asked(0, ("search_rooms", "c1")), _ran(1, "search_rooms", "c1"))
    assert not silent.passed and "told of none" in silent.reason
    assert _check(_told(0, "tool_result", "transfer_to_agent")).passed  # a framework's own tool: not checked


def test_the_check_runs_on_streamed_runs_only():
    item = GATE.items[0]
    assert STREAM_CHECK not in [c.name for c in run_checks(item, [], GATE)]
    assert STREAM_CHECK in [c.name for c in run_checks(item, [], GATE, stream=True)]


# -- the harness's side -------------------------------------------------------------------------------------


def test_a_worker_s_streamed_events_land_in_the_item_s_trace_and_bad_ones_are_refused(server):
    recorder = TraceRecorder()
    endpoint = server.register(ToolExecutor(GATE.tools, {}, recorder))
    try:
        url = stream_endpoint(endpoint)
        assert httpx.post(url, json={"kind": "tool_call", "tool": "book_room", "call_id": "c1"}).status_code == 200
        assert httpx.post(url, json={"kind": "ran", "tool": "book_room"}).status_code == 422
        assert httpx.post(url.replace("/streamed/", "/streamed/x"), json={"kind": "pause", "tool": "t"}).status_code == 404
    finally:
        server.unregister(endpoint)
    (event,) = recorder.events
    assert (event.type, event.text, event.tool, event.call_id) == ("streamed", "tool_call", "book_room", "c1")


def test_a_streamed_run_is_named_beside_the_plain_one():
    assert streamed_label("langgraph@1.1.10") == "langgraph@1.1.10 (streamed)"
    assert plain_label(streamed_label("vanilla")) == "vanilla" and plain_label("vanilla") == "vanilla"


# -- faulty adapters ----------------------------------------------------------------------------------------


class StreamRunsTheGate(VanillaAdapter):
    """A streamed run that ignores the gate (openai-agents-js #647): gated calls run as the stream ends."""

    info = VanillaAdapter.info.model_copy(update={"name": "stream_runs_the_gate"})

    @staticmethod
    def _pause_call(calls, pause_names):
        return None


class StreamInventsAResult(VanillaAdapter):
    """A stream that reports a booking that never ran."""

    info = VanillaAdapter.info.model_copy(update={"name": "stream_invents_a_result"})

    async def start(self, ctx):
        ctx.told("tool_result", "book_room", "call_invented", "BOOKED R201")
        return await super().start(ctx)


class NoStream(VanillaAdapter):
    info = AdapterInfo(name="no_stream", framework="openai",
                       channels=tuple(c for c in VanillaAdapter.info.channels if c.name != "stream"))


class CannotStream(VanillaAdapter):
    info = AdapterInfo(name="cannot_stream", framework="openai",
                       channels=(*(c for c in VanillaAdapter.info.channels if c.name != "stream"),
                                 Channel(name="stream", kind="unsupported", mechanism="its stream ends at a pause")))


def _checks(result) -> dict[str, bool]:
    return {c.name: c.passed for c in result.checks}


def test_a_streamed_run_that_runs_a_gated_tool_while_consuming_the_stream_is_caught(tmp_path):
    (run,) = evaluate("approval_gate", [StreamRunsTheGate], items=["gate-01", "gate-02"], out=tmp_path, stream=True)
    for result in run.results:
        assert result.status == "failed"
        assert not _checks(result)["suspended"] and not _checks(result)["no_tool_before_suspend"]
        assert _checks(result)[STREAM_CHECK]  # the stream told the truth: the tool did run


def test_a_stream_that_reports_a_tool_call_that_never_ran_is_reported(tmp_path):
    (run,) = evaluate("approval_gate", [StreamInventsAResult], items=["gate-01"], out=tmp_path, stream=True)
    check = next(c for c in run.results[0].checks if c.name == STREAM_CHECK)
    assert not check.passed and "book_room ran (call_invented); the tool log shows it did not" in check.reason


def test_an_adapter_that_cannot_stream_is_not_measured_with_its_reason(tmp_path):
    done = evaluate("approval_gate", [NoStream, CannotStream], items=["gate-01"], out=tmp_path, stream=True)
    assert not list(done)
    assert "no `stream` channel" in done.declined["no_stream"]
    assert "cannot stream a run that pauses: its stream ends at a pause" in \
        done.declined["cannot_stream"]


# -- the reference loop: the same results streamed as plain ------------------------------------------------


def _committed(arena: str, profile: str) -> dict[str, tuple[str, dict[str, bool]]]:
    """The committed verdict record's plain vanilla run of this cell: per item, its status and its checks' verdicts."""
    from arena.report.verdicts import read_verdicts

    items = read_verdicts(ROOT / "reports" / "verdicts")[arena]["runs"][f"vanilla × {profile}"]["items"]
    return {item: (entry["status"], {name: verdict.startswith("pass:") for name, verdict in entry["checks"].items()})
            for item, entry in items.items()}


@pytest.mark.parametrize("arena", ["approval_gate", "human_in_the_loop", "durable_state", "flight_booking",
                                   "doc_review", "resume_safety"])
def test_vanilla_streamed_gives_its_plain_results_on_every_item(tmp_path, arena):
    """Beside a plain run of the same cell (itself what the committed verdict record says): every item's status and
    checks are the same, its trace has the same events, and its stream told the truth; in durable_state every leg
    runs in a worker, whose streamed events reach the trace too."""
    spec = catalog.load_arena(arena)
    for profile in spec.profiles:
        (plain_run,) = evaluate(arena, ["vanilla"], model=profile, out=tmp_path / "plain")
        plain = {r.item_id: r for r in plain_run.results}
        assert {item: (r.status, _checks(r)) for item, r in plain.items()} == _committed(arena, profile)
        (run,) = evaluate(arena, ["vanilla"], model=profile, out=tmp_path / "streamed", stream=True)
        assert run.meta["stream"] is True and run.summary.adapter == "vanilla (streamed)"
        assert set(plain) == {r.item_id for r in run.results}
        for result in run.results:
            checks = _checks(result)
            assert checks.pop(STREAM_CHECK), (result.item_id, result.checks)
            assert (result.status, checks) == (plain[result.item_id].status, _checks(plain[result.item_id])), \
                (arena, profile, result.item_id)
            told = [e for e in result.trace if e.type == "streamed"]
            assert any(e.text == "tool_result" for e in told), result.item_id
            without = [e.normalised() for e in result.trace if e.type != "streamed"]
            assert len(without) == len(plain[result.item_id].trace), (arena, profile, result.item_id)


def test_the_cli_runs_a_streamed_arena_and_says_so(tmp_path):
    done = subprocess.run([sys.executable, "-m", "arena", "run", "approval_gate", "-a", "vanilla", "--stream",
                           "--item", "gate-01", "--out", str(tmp_path), "--json"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    (line,) = done.stdout.splitlines()
    summary = json.loads(line)
    assert summary["stream"] is True and summary["adapter"] == "vanilla (streamed)" and summary["passed"] == 1
    (run,) = tmp_path.iterdir()
    assert run.name.endswith(tuple(f"-reckless-{x}" for x in [run.name[-4:]])) and "vanilla_streamed-" in run.name
    meta = json.loads((run / "meta.json").read_text())
    assert meta["stream"] is True and "stream=True" in meta["stream_mechanism"]


def test_the_approval_tool_s_result_is_the_human_s_decision_unless_the_harness_ran_it():
    hitl = catalog.load_arena("human_in_the_loop")

    def check(*trace):
        return stream_matches_run(Scoring(item=hitl.items[0], trace=list(trace), arena=hitl))

    asked = _asked(0, ("request_approval", "a1"))
    early = check(asked, _told(1, "tool_result", "request_approval", "a1"))  # a placeholder shown as its result
    assert not early.passed and "request_approval a result before any decision was delivered" in early.reason
    resumed = TraceEvent(seq=2, leg=1, type="resumed", decision=Decision(kind=DecisionKind.approve))
    assert check(asked, _told(1, "pause", "request_approval", "a1"),
                 TraceEvent(seq=2, leg=0, type="suspended", tool="request_approval"),
                 resumed.model_copy(update={"seq": 3}),
                 _told(4, "tool_result", "request_approval", "a1", leg=1, result="APPROVED")).passed
    # a framework without a pause (smolagents) runs the harness's own request_approval: that result is true
    assert check(asked, _ran(1, "request_approval", "a1"), _told(2, "tool_result", "request_approval", "a1")).passed


def test_matrix_stream_with_runs_is_a_one_line_error(tmp_path):
    done = subprocess.run([sys.executable, "-m", "arena", "matrix", "--stream", "--runs", str(tmp_path)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines() == [
        "arena: error: --stream runs streamed cells; --runs reads run directories (their streamed runs included): give one"]


def test_writes_to_a_killed_worker_do_not_flood_the_output_with_asyncio_warnings():
    """A streamed answer's last chunks to a worker the harness killed (crash_recovery) made asyncio warn
    "socket.send() raised exception." once per write; the harness's server drops that warning, and only it."""
    import logging

    from arena.server import HarnessServer

    HarnessServer()
    logger = logging.getLogger("asyncio")

    def kept(message: str) -> bool:
        return logger.filter(logging.LogRecord("asyncio", logging.WARNING, __file__, 1, message, None, None)) is not False

    assert not kept("socket.send() raised exception.")
    assert kept("Task was destroyed but it is pending!")
