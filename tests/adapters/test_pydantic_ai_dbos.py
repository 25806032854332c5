"""pydantic_ai_dbos adapter: pydantic_ai's agent under DBOS durable execution (DBOSDurability + the adapter's own
@DBOS.workflow, a SQLite system database under the item's work directory).

What every adapter shares is test_conformance.py's; what the agent does (its deferred tools) is pydantic_ai's
and tested there. This file holds what DBOS adds or changes, on the same cells where it can: its offline
switches, the state as a pointer into DBOS's store, the decision reaching the model through it, a resume in a
new process, nothing of DBOS left running after a leg, a resume that is an idempotent workflow id, and a
crash recovered by DBOS itself (recorded steps replayed, the step the process died in run again under the
same call id)."""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import pytest

pytest.importorskip("pydantic_ai.durable_exec.dbos")

from arena import catalog, evaluate  # noqa: E402
from arena.tools.box import LocalToolBox, ToolExecutor  # noqa: E402
from arena.trace import TraceRecorder  # noqa: E402
from arena.types import Decision, LegContext  # noqa: E402
from tests.adapters.conftest import tool_messages  # noqa: E402

NAME = "pydantic_ai_dbos"
ROOT = Path(__file__).resolve().parents[2]




def _steps(db: str, workflow_id: str) -> list[str]:
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT function_name FROM operation_outputs WHERE workflow_uuid = ? ORDER BY function_id",
                            (workflow_id,)).fetchall()
    return [r[0] for r in rows]


def _status(db: str, workflow_id: str) -> str | None:
    with sqlite3.connect(db) as conn:
        row = conn.execute("SELECT status FROM workflow_status WHERE workflow_uuid = ?", (workflow_id,)).fetchone()
    return row[0] if row else None


# --- offline ------------------------------------------------------------------------------------------------

_OFFLINE = """
import json, socket, sys
sys.path.insert(0, sys.argv[2])
refused = []
def audit(event, args):
    if event == "socket.connect" and args[0].family in (socket.AF_INET, socket.AF_INET6):
        refused.append(repr(args[1]))
    elif event == "socket.getaddrinfo" and args[0] not in (None, "localhost", "127.0.0.1", "::1"):
        refused.append(repr(args[0]))
sys.addaudithook(audit)
import os
from arena_builtins.adapters import pydantic_ai_dbos as m
before = "dbos" in sys.modules
m._dbos()
from pydantic_ai.durable_exec.dbos import DBOSDurability  # what the adapter imports to build its agent
from dbos import DBOS
from dbos._utils import GlobalParams
from dbos._tracer import dbos_tracer
from dbos._logger import dbos_logger
import dbos._dbos as d
DBOS(config=m.dbos_config(sys.argv[1]))
DBOS.launch()
inst = d._dbos_global_instance
out = {
    "imported_before": before,
    "env": {k: os.environ.get(k) for k in ("DBOS__CLOUD", "OTEL_SDK_DISABLED")},
    "dbos_cloud": GlobalParams.dbos_cloud,
    "disable_otlp": dbos_tracer.disable_otlp,
    "conductor": [inst.conductor_key, inst.conductor_url, inst.conductor_websocket],
    "exporters": sorted(n for n in sys.modules if n.startswith("opentelemetry.exporter")),
    "log_handlers": sorted(type(h).__name__ for h in dbos_logger.handlers),
}
DBOS.destroy()
out["refused"] = refused
print(json.dumps(out, default=repr))
"""


def test_offline_switches_are_off_after_the_adapter_imports_dbos(tmp_path):
    """In a fresh process whose environment sets none of them: importing dbos through the adapter sets its cloud
    mode and OpenTelemetry off, the config it launches with exports nothing (no OTLP exporter is even imported),
    connects to no Conductor, and nothing in import, launch and destroy opens a socket or looks a name up."""
    env = {k: v for k, v in os.environ.items() if k not in ("DBOS__CLOUD", "OTEL_SDK_DISABLED")}
    env["PYTHONPATH"] = str(ROOT)
    proc = subprocess.run([sys.executable, "-c", _OFFLINE, str(tmp_path / "dbos.sqlite"), str(ROOT)], cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["imported_before"] is False  # the adapter's module imports no dbos by itself
    assert out["env"] == {"DBOS__CLOUD": "false", "OTEL_SDK_DISABLED": "true"}
    assert out["dbos_cloud"] is False
    assert out["disable_otlp"] is True
    assert out["conductor"] == [None, None, None]
    assert out["exporters"] == []
    assert out["log_handlers"] == ["StreamHandler"]  # the console only, no OTLP log handler
    assert out["refused"] == []
    assert (tmp_path / "dbos.sqlite").exists()  # the system database is the local file, nothing else


# --- the cells (shared with test_conformance.py) ----------------------------------------------------------------


@pytest.fixture(scope="module")
def scripted(cell):
    return cell(NAME).wire


def test_decision_reaches_model_as_approval_tool_result(scripted):
    """The model reads decision.as_text() (a deny reason too) as request_approval's result, once per item: the
    resumed workflow's DeferredToolResults.calls, as in pydantic_ai."""
    _, requests = scripted
    spec = catalog.load_arena("human_in_the_loop")
    expected = {i.input: i.resume_with[0].as_text() for i in spec.items}
    assert sorted(tool_messages(requests, "request_approval")) == sorted(expected.items())
    assert any(text.startswith("DENIED: ") for text in expected.values())


GATE = catalog.load_arena("approval_gate")
GATE_ITEMS = {i.id: i for i in GATE.items}


def test_gate_denial_reaches_model_as_book_room_result(cell):
    """approval_gate: denied, the model reads ToolDenied's message (decision.as_text(), with the reason) as
    book_room's result; approved, book_room's real result (pydantic-ai ran it inside the resumed workflow)."""
    results, requests = cell(NAME, "approval_gate", "reckless").wire
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
            assert f"({decision.text})" in r.trace[-1].text  # the reason itself came back to the model
    assert sorted(tool_messages(requests, "book_room")) == sorted(expected)


def test_eager_sibling_booking_runs_before_the_pause_as_in_pydantic_ai(cell):
    """DBOS changes nothing about a sibling call: scripted-eager's book_room, emitted beside request_approval,
    runs in leg 0 (a DBOS step of the first workflow) before the pause, and is never run again."""
    for r in cell(NAME, profile="scripted-eager").results:
        books = [e for e in r.trace if e.type == "tool_call" and e.tool == "book_room"]
        pause = next(e for e in r.trace if e.type == "suspended")
        assert len(books) == 1 and books[0].leg == 0 and books[0].seq < pause.seq, r.item_id


def test_durable_state_resumes_in_a_new_process_and_the_reason_reaches_the_model(cell):
    """durable_state: each leg in a fresh worker (run_durable_pair asserts both pass, in two processes); leg 1
    has only the JSON state (the SQLite file and the paused workflow's id) and DBOS's store behind it, and the
    deny reason still comes back to the model."""
    results = cell(NAME, "durable_state").results
    denied = catalog.load_arena("durable_state").item("durable-02")
    assert f"({denied.resume_with[0].text})" in results[1].trace[-1].text
    pids = {e.pid for e in results[1].trace if e.type in ("suspended", "final")}
    assert len(pids) == 2


# --- the state, DBOS's store, and a resume as an idempotent workflow id -------------------------------------


def _ctx(server, recorder, workdir: Path, arena: str = "human_in_the_loop", item_id: str = "hitl-03"):
    spec = catalog.load_arena(arena)
    item = next(i for i in spec.items if i.id == item_id)
    return item, LegContext(
        item=item,
        instructions=spec.instructions,
        model=server.open_item(recorder, "scripted").model,
        tools=LocalToolBox(ToolExecutor(spec.tools, spec.functions, recorder)),
        workdir=str(workdir),
    )


def _dbos_threads() -> list[str]:
    names = ("dbos", "queue", "_run_event_loop", "notification_listener", "dynamic_scheduler_loop")
    return [t.name for t in threading.enumerate() if any(n in t.name for n in names)]


def test_state_points_at_dbos_store_and_a_second_resume_returns_the_first_ones_result(server, tmp_path):
    """The paused state is JSON pointing at DBOS's SQLite store (no message history of its own); the paused
    workflow is recorded there with its steps (model requests and tool calls); a fresh adapter resumes it as
    the workflow `<paused id>/resume`. Resuming the same state again, even with another decision, reaches that
    workflow id: DBOS returns its recorded result and nothing runs again (no tool call, no model request).
    After every leg, nothing of DBOS is left running."""
    import dbos._dbos as dbos_module

    recorder = TraceRecorder()
    item, ctx = _ctx(server, recorder, tmp_path)
    cls = catalog.builtin_adapters()[NAME].load()

    async def leg(run):
        adapter = cls()
        try:
            return await run(adapter), adapter
        finally:
            await adapter.aclose()

    leg0, first = asyncio.run(leg(lambda a: a.start(ctx)))
    assert leg0.status == "suspended" and leg0.pending.tool == "request_approval"
    assert first._agent.instrument is False
    state = json.loads(json.dumps(leg0.state))  # JSON, as a durable store keeps it
    assert set(state) == {"db", "workflow_id", "call_id", "kind"} and state["kind"] == "question"
    db = state["db"]
    assert Path(db).is_relative_to(tmp_path) and Path(db).exists()
    assert _status(db, state["workflow_id"]) == "SUCCESS"  # the pause is the workflow's return, it does not block
    steps = _steps(db, state["workflow_id"])
    assert "arena_agent__model.request" in steps and "tool.search_rooms" in steps
    assert dbos_module._dbos_global_instance is None and _dbos_threads() == []

    decision = item.resume_with[0]
    assert decision.approved
    leg1, _ = asyncio.run(leg(lambda a: a.resume(json.loads(json.dumps(state)), decision, ctx)))
    assert leg1.status == "finished" and leg1.final_text.startswith("Done: BOOKED R201")
    resumed = state["workflow_id"] + "/resume"
    assert _status(db, resumed) == "SUCCESS" and "tool.book_room" in _steps(db, resumed)
    assert dbos_module._dbos_global_instance is None and _dbos_threads() == []
    calls = [e.tool for e in recorder.events if e.type == "tool_call"]
    assert calls == ["search_rooms", "book_room"]
    models = len([e for e in recorder.events if e.type == "model_call"])

    # the same pause again, denied this time: DBOS answers from the recorded workflow, nothing runs
    again, _ = asyncio.run(leg(lambda a: a.resume(state, Decision(kind="deny", text="changed my mind"), ctx)))
    assert again.status == "finished" and again.final_text == leg1.final_text
    assert [e.tool for e in recorder.events if e.type == "tool_call"] == calls
    assert len([e for e in recorder.events if e.type == "model_call"]) == models


# --- crash_recovery: DBOS's own recovery ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def crashed(tmp_path_factory):
    """crash_recovery's book items at each crash point, recovered by resuming (cr-01, cr-06) and by continuing
    (cr-14, cr-16) the way DBOS recovers: DBOS.launch() in the new process picks the PENDING workflow up."""
    out = tmp_path_factory.mktemp("crash")
    run = evaluate("crash_recovery", [NAME], items=["cr-01", "cr-06", "cr-14", "cr-16"], out=out, timeout=120)[0]
    return {r.item_id: r for r in run.results}


def _calls(r, tool):
    return [e for e in r.trace if e.type == "tool_call" and e.tool == tool]


@pytest.mark.parametrize("item_id, tool", [("cr-01", "book_flight"), ("cr-14", "book_flight")])
def test_after_effect_the_step_the_process_died_in_runs_again_under_its_call_id(crashed, item_id, tool):
    """Killed after the booking's effect, before its step recorded the result: the recovered workflow runs that
    step again (DBOS steps are at-least-once), under pydantic-ai's same tool call id, which the airline
    de-duplicates: paid once."""
    r = crashed[item_id]
    crash = next(e for e in r.trace if e.type == "crashed")
    calls = _calls(r, tool)
    assert len(calls) == 2 and calls[0].seq < crash.seq < calls[1].seq
    assert calls[0].call_id is not None and calls[0].call_id == calls[1].call_id
    checks = {c.name: c for c in r.checks}
    assert checks["paid_once_after_crash"].passed and checks["call_id_stable_after_crash"].passed
    assert r.status == "passed", [c for c in r.checks if not c.passed]


@pytest.mark.parametrize("item_id, tool", [("cr-06", "book_flight"), ("cr-16", "change_flight")])
def test_before_persist_the_recorded_step_is_replayed_not_run_again(crashed, item_id, tool):
    """Killed at the next model request, after the call returned: its DBOS step had recorded the answer, so the
    recovered workflow replays it from the system database and the tool is not called again (pydantic_ai,
    resuming from the pause, calls it again under the same id)."""
    r = crashed[item_id]
    crash = next(e for e in r.trace if e.type == "crashed")
    calls = _calls(r, tool)
    assert len(calls) == 1 and calls[0].seq < crash.seq
    assert r.status == "passed", [c for c in r.checks if not c.passed]


def test_continue_recovers_without_the_decision(crashed):
    """The `continue` way: the new process is given no decision; DBOS.launch() recovered the workflow, which
    already holds the approval it was started with."""
    for item_id in ("cr-14", "cr-16"):
        recovery = [e for e in crashed[item_id].trace if e.type == "resumed" and e.replay == "recover"]
        assert recovery and recovery[0].decision is None


# --- resume_safety: a second resume while the first is running -----------------------------------------------


def test_a_concurrent_second_resume_recovers_the_live_workflow_and_runs_its_step_again(tmp_path):
    """rs-double-concurrent: a second process resumes the same pause while the first is held inside book_room.
    Its DBOS.launch() takes the first's PENDING workflow (same executor id, "local") for a crashed one and
    recovers it: book_room's step, started but not recorded, runs again under the same call id; the first
    process, releasing it, finds the step checkpointed and waits for the workflow's recorded outcome, so
    the run's final answer is the second process's, and the model is asked once after the booking."""
    run = evaluate("resume_safety", [NAME], items=["rs-double-concurrent"], out=tmp_path, timeout=120)[0]
    r = run.results[0]
    second = next(e for e in r.trace if e.type == "resumed" and e.replay == "concurrent")
    books = _calls(r, "book_room")
    assert len(books) == 2 and books[0].call_id == books[1].call_id and second.seq < books[0].seq
    replayed = next(e for e in r.trace if e.type == "replayed")
    final = next(e for e in r.trace if e.type == "final")
    assert replayed.result == "finished" and replayed.text == final.text and replayed.pid != final.pid
    assert len([e for e in r.trace if e.type == "model_call" and e.seq > books[0].seq]) == 1
    assert not {c.name: c for c in r.checks}["executed_at_most_once"].passed


# --- a streamed run: DBOSDurability(event_stream_handler=...) -------------------------------------------------


def test_a_streamed_run_tells_the_calls_the_pause_and_the_results_from_dbos_steps(tmp_path):
    """approval_gate streamed: the agent's DBOSDurability has an event_stream_handler (DBOS's way to stream a
    durable run). The items end as in a plain run, and what the handler was told holds against the tool log:
    in the resumed leg the approved call's result, or the denial as the framework's answer."""
    run = evaluate("approval_gate", [NAME], items=["gate-01", "gate-02"], out=tmp_path, timeout=120, stream=True)[0]
    assert run.meta["stream"] is True and json.loads((run.path / "meta.json").read_text())["stream"] is True
    for r in run.results:
        assert r.status == "passed" and {c.name: c.passed for c in r.checks}["stream_matches_run"]
        told = [(e.leg, e.text, e.tool) for e in r.trace if e.type == "streamed"]
        assert told == [(0, "tool_call", "search_rooms"), (0, "tool_result", "search_rooms"), (0, "tool_call", "book_room"),
                        (0, "pause", "book_room"), (1, "tool_call", "book_room"), (1, "tool_result", "book_room")]
    results = {r.item_id: [e.result for e in r.trace if e.type == "streamed"][-1] for r in run.results}
    assert results["gate-01"].startswith("BOOKED") and results["gate-02"].startswith("DENIED")


def test_streamed_a_concurrent_second_resume_ends_both_resumes_in_dbos_durabilitys_key_error(tmp_path):
    """rs-double-concurrent streamed: as in the plain run, the second process's DBOS.launch() recovers the first's
    PENDING resume workflow while the adapter starts the same workflow id, so that process runs it twice at once.
    With an event_stream_handler, pydantic-ai's DBOSDurability keys its event-step reservations by (workflow id,
    run id), the same for both; the first to end removes them and the other fails on `pop` with a KeyError,
    which DBOS records as the workflow's outcome: neither resume finishes (plain: one does). A framework
    behaviour of pydantic-ai 2.68 (reports/details.md section 6); this test fails when it changes."""
    run = evaluate("resume_safety", [NAME], items=["rs-double-concurrent"], out=tmp_path, timeout=120, stream=True)[0]
    r = run.results[0]
    checks = {c.name: c for c in r.checks}
    # its items run in worker processes (DBOS is process-global): the adapter's exception comes through the worker
    assert r.status == "failed" and r.error.removeprefix("WorkerError: ").startswith("KeyError: ('rs-double-concurrent/")
    assert not checks["one_resume_finished"].passed and "neither resume finished" in checks["one_resume_finished"].reason
    assert checks["stream_matches_run"].passed


# --- --store postgres: DBOS's own PostgreSQL system database; no Redis one --------------------------------------


@pytest.mark.usefixtures("store_servers")
def test_postgres_store_durable_state_and_crash_recovery_pass_on_dboss_postgres_system_database(tmp_path):
    """durable_state (an approval, a denial, durable-11 whose server restarts during the pause) and crash_recovery
    (cr-01 resumed, cr-12 across a restart, cr-14 continued: DBOS.launch() recovers the PENDING workflow from
    PostgreSQL) with DBOS's system database on the item's own PostgreSQL database."""
    results = {}
    for arena, items in (("durable_state", ["durable-01", "durable-02", "durable-11"]),
                         ("crash_recovery", ["cr-01", "cr-12", "cr-14"])):
        run = evaluate(arena, [NAME], items=items, store="postgres", out=tmp_path / arena, timeout=120)[0]
        assert run.meta["store"]["kind"] == "postgres" and "system_database_url" in run.meta["store"]["mechanism"]
        results.update({r.item_id: r for r in run.results})
    assert {i: r.status for i, r in results.items()} == dict.fromkeys(results, "passed"), {
        i: [c.reason for c in r.checks if not c.passed] or r.error for i, r in results.items()}
    assert len(results) == 6


@pytest.mark.usefixtures("store_servers")
def test_redis_store_is_declined_dbos_has_no_redis_system_database(tmp_path):
    runs = evaluate("durable_state", [NAME], store="redis", out=tmp_path)
    assert list(runs) == []
    assert "DBOS has no Redis system database" in runs.declined[NAME]


@pytest.mark.usefixtures("store_servers")
def test_postgres_store_state_names_no_file_and_dbos_tables_are_in_the_items_own_database(server, tmp_path):
    """The paused state is the workflow id (no SQLite path, nothing written to the work directory); the paused and
    the resume workflows are recorded in schema `dbos` of the item's database, which DBOS.launch() created there."""
    import psycopg

    from arena.stores import item_store

    item, ctx = _ctx(server, TraceRecorder(), tmp_path)
    cls = catalog.builtin_adapters()[NAME].load()

    async def leg(run):
        adapter = cls()
        try:
            return await run(adapter)
        finally:
            await adapter.aclose()

    with item_store("postgres", "hitl-03") as own:
        ctx = ctx.model_copy(update={"store": own.store})
        leg0 = asyncio.run(leg(lambda a: a.start(ctx)))
        assert leg0.status == "suspended"
        state = json.loads(json.dumps(leg0.state))
        assert set(state) == {"system_database", "workflow_id", "call_id", "kind"}
        assert state["system_database"] == "postgres"
        leg1 = asyncio.run(leg(lambda a: a.resume(state, item.resume_with[0], ctx)))
        assert leg1.status == "finished" and leg1.final_text.startswith("Done: BOOKED R201")
        with psycopg.connect(own.store.url) as conn:
            statuses = dict(conn.execute("SELECT workflow_uuid, status FROM dbos.workflow_status").fetchall())
            steps = [r[0] for r in conn.execute(
                "SELECT function_name FROM dbos.operation_outputs WHERE workflow_uuid = %s ORDER BY function_id",
                (state["workflow_id"] + "/resume",))]
        with psycopg.connect(own.store.url.rsplit("/", 1)[0] + "/postgres") as conn:
            assert conn.execute("SELECT to_regclass('dbos.workflow_status')").fetchone()[0] is None
    assert statuses == {state["workflow_id"]: "SUCCESS", state["workflow_id"] + "/resume": "SUCCESS"}
    assert "tool.book_room" in steps
    assert not any(tmp_path.iterdir())
