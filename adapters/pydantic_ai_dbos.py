"""pydantic_ai_dbos: the `pydantic_ai` adapter's agent, made durable with DBOS (`pydantic_ai.durable_exec.dbos`).

The agent is the same (adapters/pydantic_ai.py, whose docstring says how each pause is made): the approval tool
raises `CallDeferred(kind='question')`, gated tools are `requires_approval=True`, a pausing body raises
`ApprovalRequired`, and every pause is the run's end with a `DeferredToolRequests` output. What this adapter
adds is DBOS durable execution, the way pydantic-ai documents it (docs/durable_execution/dbos.md):

- the agent is `Agent(..., name="arena_agent", capabilities=[DBOSDurability()])` (the current form;
  `DBOSAgent` is deprecated), and every leg's `agent.run(...)` is called inside the adapter's own
  `@DBOS.workflow(name="arena_pydantic_ai_dbos.leg")`, started with `SetWorkflowID(...)`. `DBOSDurability`
  makes each model request a DBOS step (`arena_agent__model.request`); function tools are *not* wrapped by
  DBOS (documented: "decorate with `@DBOS.step` if the function involves non-determinism or I/O"), so each
  tool's harness call, the tool's I/O, runs as a DBOS step of its own (`DBOS.run_step_async`, named
  `tool.<name>`, no retries). The code around it (the deferral, the body's branch on the approval) is
  workflow code, replayed deterministically.
- the store: DBOS's system database, a SQLite file under the item's work directory
  (`<workdir>/pydantic_ai_dbos/dbos.sqlite`), with a pinned `application_version` so that every process of
  the item recovers the others' workflows. DBOS is process-global, so the class is `concurrent = False` (each
  item runs in a worker process of its own); it is launched at the start of each leg (after the workflow and
  the agent's steps are registered) and destroyed when the leg returns, so nothing of it runs during a pause.
- on a server (`--store postgres`, the `postgres` channel): DBOS's own PostgreSQL system database, the item's
  database given as `system_database_url` (DBOS connects with `postgresql+psycopg`, and its migrations at
  `DBOS.launch()` create its tables in schema `dbos` there); the state then names no file, only the workflow id.
  DBOS has no Redis system database (SQLite or PostgreSQL only), so the `redis` channel is unsupported.
- the pause: the workflow returns (it does not block) with the run's output, `DeferredToolRequests`, and its
  message history (pydantic-ai's JSON), recorded by DBOS as the workflow's result. The leg's state is JSON
  that points at it: the database file, the paused workflow's id and the deferred call id(s).
- the resume (any process): DBOS is launched on the same database, the paused workflow's result is read back
  (`DBOS.retrieve_workflow_async(id).get_result()`), and a new workflow, whose id is the paused one's plus
  `/resume`, runs `agent.run(message_history=..., deferred_tool_results=DeferredToolResults(...))` with the
  decision, as in `pydantic_ai`. The resume's workflow id is thus an idempotency key for the pause (DBOS's
  workflow-id semantics): resuming the same pause again, with whatever decision, returns the first resume's
  recorded result once it has ended, and runs nothing again.
- recovery (crash_recovery's `recover` channel): a process killed inside the resumed workflow leaves it
  PENDING in the database. The next process's `DBOS.launch()` recovers it by itself (DBOS docs, "Workflow
  recovery": on a single server, each restart recovers every PENDING workflow of its executor, here DBOS's
  default "local"), from its last completed step: recorded steps (model responses, tool answers) are
  replayed from the database, not run again; a step that started but did not record its result (the call
  the process died in) runs again, under the same pydantic-ai tool call id, which the harness's tools get
  (`call_id=`). The adapter's `resume` with the same state and decision then reaches the same workflow id and
  waits for the recovered workflow's result: it does not run the resume again itself (`continue_run`, the
  arena's `continue` way, gives no decision at all and only waits for it). The recovered workflow runs on
  DBOS's own event loop thread, as DBOS runs recovered workflows.

Sibling calls: as in `pydantic_ai` (DBOS changes nothing here): pydantic-ai runs every ordinary function tool
of the model turn and only collects the deferred one, so a consequential call emitted beside the approval
request (scripted-eager's `book_room`) executes in that turn, as a DBOS step, before the workflow returns the
pause; its return stays in the history and is not run again on resume.

A deny reason: the decision's text is the deferred call's result (`DeferredToolResults.calls`) for the
approval tool, and `ToolDenied(message=decision text)` for a gated call: both reach the model; `ToolApproved`
has no note field (an approval note does not reach the model on the tool-level gate).

A new message instead of a decision (the `message` channel): as in `pydantic_ai`, a new run with the message as
its prompt on the paused history after `repair_messages` (pydantic-ai's documented way to add a prompt to a
history with unanswered calls; it closes the pending call with a synthesized 'interrupted' result). It runs as
the pause's resume workflow (id: the pause's + `/resume`), like any resume of that pause, so a later resume of
the same pause (a late approval) gets DBOS's recorded result of the message's run back.

A new process: the state is JSON pointing at DBOS's SQLite store; any process launches DBOS on it and resumes
(durable_state). `RequestInput` (a wait inside the run) is not used: DBOS refuses it ("DBOS does not support
waiting for external events yet").

Hostile resumes (resume_safety): the decisions are passed on as `pydantic_ai` passes them (keyed by call id,
a held call without one gets none, an unknown id is passed under its id, a null is None). A second resume of
a pause whose resume has ended (a retry after the run, a stale state) gets that resume's recorded result from
DBOS and runs nothing. A second resume *while the first is still running* in another process is different:
that process's `DBOS.launch()` takes the live, PENDING workflow for one its crashed executor left (both
processes are DBOS's default executor "local", the single-server setting DBOS documents), recovers it and
runs the step the first process is inside of again (DBOS steps are at-least-once; the first process, on
checkpointing that step, finds the conflict and waits for the workflow's recorded outcome).

Streamed (`--stream`): a durable run is the workflow's, so `run_stream_events` is not offered; DBOS's way is
`DBOSDurability(event_stream_handler=...)`, the agent built with it for a streamed run (a plain run's has
none). Model events are handled inside the model-request step and each tool event in an event-handler step of
its own, handed to the leg that runs; a recovered workflow's replayed steps are not handled again. Under a
second concurrent resume the stream can change the outcome (the item's trace ends in a KeyError): both executions
of the resume workflow in one process share DBOSDurability's event-step reservation key, and the second to end
fails on it when the two overlap, a race (findings.md section 6 does not compare raced items plain vs streamed).

Offline: `DBOS__CLOUD=false` and `OTEL_SDK_DISABLED=true` are set (setdefault) before dbos is imported (dbos
reads `DBOS__CLOUD` when imported); the DBOS config has `enable_otlp=False` (no OTLP traces or logs), no
`conductor_key`/`conductor_url` (no Conductor websocket; DBOS only logs a console URL, at INFO, which the
config's `log_level="ERROR"` drops), and a SQLite system database (no database server); the agent's
`instrument` is False as in `pydantic_ai`.
"""

from __future__ import annotations

import asyncio
import os
import uuid
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from arena.for_adapters import (
    Capabilities,
    Channel,
    Decision,
    DecisionSet,
    LegContext,
    LegResult,
)
from arena_builtins.adapters.pydantic_ai import LegTools, PydanticAIAdapter, _for_new_prompt, _is_message, _prompt

AGENT_NAME = "arena_agent"  # DBOS step names derive from it (`arena_agent__model.request`)
WORKFLOW_NAME = "arena_pydantic_ai_dbos.leg"
APP_NAME = "arena_pydantic_ai_dbos"
# Pinned: DBOS recovers only the PENDING workflows of the running application version; left to DBOS, the version
# is a hash of the registered workflows' sources, which every process of an item must agree on.
APP_VERSION = "arena-pydantic_ai_dbos-1"
STORE_DIR = "pydantic_ai_dbos"
STORE_FILE = "dbos.sqlite"
RESUME_SUFFIX = "/resume"

# Read by dbos when it is imported (`GlobalParams.dbos_cloud`), and by OpenTelemetry's SDK if anything starts it.
_TELEMETRY_ENV = {
    "DBOS__CLOUD": "false",
    "OTEL_SDK_DISABLED": "true",
}


def _dbos() -> Any:
    """Import dbos lazily, with its cloud mode and OpenTelemetry off before the first import."""
    for key, value in _TELEMETRY_ENV.items():
        os.environ.setdefault(key, value)
    import dbos

    return dbos


def dbos_config(db_path: str | None, url: str | None = None) -> dict[str, Any]:
    """The DBOS configuration of one item: its SQLite system database (`db_path`), or with `url` its PostgreSQL one
    (`--store postgres`: the item's own database on the harness's server), nothing that leaves the machine."""
    return {
        "name": APP_NAME,
        "system_database_url": url if url is not None else f"sqlite:///{os.path.abspath(str(db_path))}",
        "application_version": APP_VERSION,
        "enable_otlp": False,  # no OTLP traces or logs (DBOS's default, made explicit)
        # DBOS logs its Conductor console URL at INFO (nothing connects to it), and warns at each item's agent
        # that its step names are registered again in this process (one item after another): errors only
        "log_level": "ERROR",
        # how often DBOS's notification listener polls SQLite: its thread is joined at `DBOS.destroy()`, which
        # otherwise waits up to the default 1 s at the end of every leg
        "notification_listener_polling_interval_sec": 0.05,
    }


# DBOS is process-global: the item it runs (the class is `concurrent = False`) and its one workflow, registered
# once per process (DBOS keeps its registry across `DBOS.destroy()`).
_CURRENT: PydanticAIDBOSAdapter | None = None
_WORKFLOW: Any = None


def _workflow() -> Any:
    global _WORKFLOW
    if _WORKFLOW is None:
        DBOS = _dbos().DBOS

        @DBOS.workflow(name=WORKFLOW_NAME)
        async def leg(prompt: str | None, history: str | None, results: Any) -> dict[str, Any]:
            """One leg of the agent's run: from the prompt, or from the paused history with the decision."""
            adapter = _CURRENT
            if adapter is None:
                raise RuntimeError("no pydantic_ai_dbos item is running in this process")
            return await adapter._run(prompt, history, results)

        _WORKFLOW = leg
    return _WORKFLOW


class _StepTools(LegTools):
    """The leg's tool box, each call a DBOS step inside a workflow (the documented `@DBOS.step` for a
    function tool's I/O): a recovered workflow gets a recorded answer back instead of calling again."""

    async def acall(self, name: str, args: dict[str, Any], call_id: str | None = None) -> str:
        DBOS = _dbos().DBOS
        if DBOS.workflow_id is None or DBOS.step_id is not None:  # outside a workflow's own code: a plain call
            return str(await self._tools.acall(name, args, call_id=call_id))
        options = {"name": f"tool.{name}", "retries_allowed": False}
        return str(await DBOS.run_step_async(options, self._tools.acall, name, args, call_id=call_id))


class _Ended:
    """A workflow's recorded result, as `PydanticAIAdapter._outcome` reads an `AgentRunResult`."""

    def __init__(self, recorded: dict[str, Any]) -> None:
        self.output = recorded["output"]
        self._messages: str = recorded["messages"]

    def all_messages_json(self) -> bytes:
        return self._messages.encode()


_BASE = {c.name: c for c in PydanticAIAdapter.info.channels}
_DURABLE = ("; the leg runs inside the adapter's own @DBOS.workflow on an Agent(name=..., capabilities="
            "[DBOSDurability()]) (model requests and each tool's harness call are DBOS steps), the state points "
            "at the workflow's recorded result in DBOS's system database (SQLite; PostgreSQL with --store postgres)")


class PydanticAIDBOSAdapter(PydanticAIAdapter):
    order = 41
    requires = ("dbos",)  # installed besides pydantic-ai-slim
    concurrent = False  # DBOS is one process-global instance (its launch, system database and registry)
    # dbos itself is imported by `warm()`, through `_dbos()`, so that its switches are set before it is imported
    preload = (*PydanticAIAdapter.preload, "sqlalchemy", "sqlalchemy.dialects.sqlite", "sqlite3", "dbos._sys_db_sqlite")

    @staticmethod
    def warm() -> None:
        PydanticAIAdapter.warm()
        _dbos()
        import pydantic_ai.durable_exec.dbos  # noqa: F401

    info = PydanticAIAdapter.info.model_copy(update={
        "name": "pydantic_ai_dbos",
        "channels": (
            _BASE["ask"].model_copy(update={
                "mechanism": _BASE["ask"].mechanism + _DURABLE,
                "carries": _BASE["ask"].carries.model_copy(update={"notes": (
                    "As pydantic_ai: the decision is the deferred call's result (DeferredToolResults.calls); the "
                    "paused history is the DBOS workflow's recorded result. Gated tools: a denial's text reaches "
                    "the model as ToolDenied.message; ToolApproved has no note field.")}),
            }),
            _BASE["tool_gate"].model_copy(update={"mechanism": _BASE["tool_gate"].mechanism + _DURABLE}),
            _BASE["body_pause"].model_copy(update={"mechanism": _BASE["body_pause"].mechanism + (
                "; under DBOS the body's harness calls (prepare, commit) are steps: the resumed run is a new "
                "workflow, so prepare runs again there")}),
            _BASE["multi_call"],
            _BASE["message"].model_copy(update={"mechanism": _BASE["message"].mechanism + (
                "; under DBOS the run is a new workflow whose id is the pause's + '/resume' (the same idempotency "
                "key a decision's resume has)")}),
            _BASE["always"],
            _BASE["input"].model_copy(update={"mechanism": _BASE["input"].mechanism + (
                "; under DBOS the staged text is in the pause's JSON state and reaches the resume workflow as its "
                "prompt argument (recorded with the workflow's inputs)")}),
            Channel(
                name="recover",
                kind="native",
                mechanism=(
                    "DBOS workflow recovery: the next process's DBOS.launch() recovers the PENDING resume workflow "
                    "(DBOS docs, workflow recovery on a single server) from its last completed step: recorded model "
                    "and tool steps are replayed from the system database (SQLite; PostgreSQL with --store postgres), "
                    "the step the process died in runs "
                    "again under the same tool call id; the adapter's resume with the same state reaches the same "
                    "workflow id (the pause's + '/resume') and waits for that workflow's result"
                ),
                carries=Capabilities(notes="what the resumed workflow was given: the same DeferredToolResults"),
                # resume: the same state and decision reach the recovered workflow by its id; continue: the
                # adapter only waits for the workflow DBOS.launch() recovered (`continue_run`)
                ways=("resume", "continue"),
            ),
            Channel(
                name="postgres",
                kind="native",
                mechanism=(
                    "DBOS's own PostgreSQL system database: DBOS(config={'system_database_url': the item's database "
                    "URL}) (dbos 3.4, driver postgresql+psycopg; DBOS.launch() runs its migrations, creating its "
                    "tables in schema 'dbos' there): the paused workflow's recorded result (pydantic-ai's message "
                    "history JSON and the DeferredToolRequests output) and the resume workflow's steps; the state is "
                    "the workflow id, and every leg's DBOS.launch() connects to it anew and recovers the PENDING "
                    "workflows there"
                ),
            ),
            Channel(
                name="redis",
                kind="unsupported",
                mechanism=(
                    "DBOS has no Redis system database: dbos 3.4's system database is SQLite or PostgreSQL only "
                    "(system_database_url is a sqlite:// or postgresql:// URL; SystemDatabase.create picks "
                    "SQLiteSystemDatabase or PostgresSystemDatabase, dbos/_sys_db.py), and pydantic-ai's DBOS "
                    "integration keeps the run's state nowhere else"
                ),
            ),
            Channel(
                name="stream",
                kind="native",
                mechanism=(
                    "DBOSDurability(event_stream_handler=...), DBOS's way to stream a durable run (its "
                    "run_stream_events is refused in a workflow): model events are handled inside the model-request "
                    "step, each tool event in an event-handler step of its own (FunctionToolCallEvent, "
                    "FunctionToolResultEvent, DeferredToolRequestsEvent for the paused calls); steps a recovered "
                    "workflow replays from the database are not handled again"
                ),
            ),
        ),
    })

    def __init__(self) -> None:
        super().__init__()
        self._launched = False
        self._stream_leg: LegContext | None = None  # the leg whose stream the event handler tells (a streamed run)
        self._leg_tools = _StepTools()  # each call a DBOS step
        self._loop_executor: Any = None

    # -- the agent: pydantic_ai's, made durable --------------------------------------------------------

    def _agent_options(self, ctx: LegContext) -> dict[str, Any]:
        _dbos()
        from pydantic_ai.durable_exec.dbos import DBOSDurability

        # No step retries (DBOS's default without a model_step_config), as every adapter's client makes one attempt.
        # A streamed run's agent hands its events to an `event_stream_handler` (DBOS's way to stream: the run is
        # the workflow's, so `run_stream_events` is not offered); a plain run's has none, as before.
        handler = {"event_stream_handler": self._on_events} if ctx.stream else {}
        return {"name": AGENT_NAME, "capabilities": [DBOSDurability(**handler)]}

    async def _on_events(self, run: Any, events: Any) -> None:
        """DBOSDurability's `event_stream_handler`: model events inside the model-request step, each tool event
        in an event-handler step of its own. What they tell is handed over to the leg that runs."""
        ctx = self._stream_leg
        async for event in events:
            if ctx is not None:
                self._tell(ctx, event)

    async def _run(self, prompt: str | None, history: str | None, results: Any) -> dict[str, Any]:
        """The workflow's body: pydantic-ai's run, from the prompt or from the paused history with the decision (and,
        with input added while paused, that input as the run's prompt alongside the deferred results)."""
        from pydantic_ai.messages import ModelMessagesTypeAdapter

        agent = self._agent
        if history is None:
            result = await agent.run(prompt)
        elif results is None:  # a new user message on the paused history (pydantic_ai's `message` channel)
            paused = ModelMessagesTypeAdapter.validate_json(history)
            result = await agent.run(prompt, message_history=_for_new_prompt(paused))
        else:  # the decision; a prompt here is the input added while paused (pydantic_ai's `input` channel)
            result = await agent.run(prompt, message_history=ModelMessagesTypeAdapter.validate_json(history),
                                     deferred_tool_results=results)
        return {"output": result.output, "messages": result.all_messages_json().decode()}

    # -- DBOS's lifetime: one leg ----------------------------------------------------------------------

    def _launch(self, ctx: LegContext, db_path: str | None) -> None:
        """Register the workflow and the agent's steps, then launch DBOS on the item's system database (which
        recovers whatever workflow a killed process left PENDING there): the SQLite file `db_path`, or with
        `--store postgres` (`db_path` None) the item's PostgreSQL database, connected to anew by each leg."""
        global _CURRENT
        dbos = _dbos()
        self._build(ctx)
        self._stream_leg = ctx if ctx.stream else None
        _workflow()
        if _CURRENT is not None and _CURRENT is not self and _CURRENT._launched:
            raise RuntimeError("another pydantic_ai_dbos item holds DBOS in this process")
        url = _system_database_url(ctx)
        if url is None:
            os.makedirs(os.path.dirname(str(db_path)), exist_ok=True)
        dbos.DBOS.destroy()  # none should be left; DBOS() would return it as it is
        _CURRENT = self
        # asyncio keeps it there; read back at the shutdown (see `_shutdown`)
        self._loop_executor = getattr(asyncio.get_running_loop(), "_default_executor", None)
        dbos.DBOS(config=dbos_config(db_path, url))
        dbos.DBOS.launch()
        self._launched = True

    async def _shutdown(self) -> None:
        global _CURRENT
        if not self._launched:
            return
        self._launched = False
        # DBOS's async API makes its own thread pool the calling event loop's default executor, and
        # `DBOS.destroy()` shuts that pool down: give the loop a working one back first, or every later
        # `asyncio.to_thread` in it (the harness's too) fails with "cannot schedule new futures after shutdown".
        # (the loop's own, as it was at the launch, else a new one; asyncio shuts it down with the loop)
        previous, self._loop_executor = self._loop_executor, None
        asyncio.get_running_loop().set_default_executor(previous or ThreadPoolExecutor(thread_name_prefix="asyncio"))
        await asyncio.to_thread(_dbos().DBOS.destroy)
        self._stream_leg = None
        if _CURRENT is self:
            _CURRENT = None

    async def aclose(self) -> None:
        await self._shutdown()
        try:
            await super().aclose()
        except RuntimeError:  # a recovered workflow ran the client on DBOS's loop, which has stopped
            self._provider = None

    # -- legs --------------------------------------------------------------------------------------------

    async def start(self, ctx: LegContext) -> LegResult:
        db_path = None if _system_database_url(ctx) else os.path.join(ctx.workdir, STORE_DIR, STORE_FILE)
        workflow_id = f"{ctx.item.id}/{uuid.uuid4().hex[:12]}"
        self._launch(ctx, db_path)
        try:
            from dbos import SetWorkflowID

            with SetWorkflowID(workflow_id):
                recorded = await _workflow()(ctx.item.input, None, None)
        finally:
            await self._shutdown()
        return self._ended(recorded, workflow_id, db_path, ctx)

    async def resume(self, state: dict[str, Any], decision: Decision | DecisionSet, ctx: LegContext) -> LegResult:
        db_path = None if _system_database_url(ctx) else state["db"]
        self._launch(ctx, db_path)
        try:
            from dbos import DBOS, SetWorkflowID

            paused = await (await DBOS.retrieve_workflow_async(state["workflow_id"])).get_result()
            # a new message instead of a decision: the message is the run's prompt, no deferred results; input added
            # while paused (`add_input`) goes first in the prompt, alongside the deferred results of a decision
            prompt = _prompt(state, decision)
            results = None if _is_message(decision) else self._deferred_results(state, decision)
            workflow_id = state["workflow_id"] + RESUME_SUFFIX
            with SetWorkflowID(workflow_id):
                recorded = await _workflow()(prompt, paused["messages"], results)
        finally:
            await self._shutdown()
        return self._ended(recorded, workflow_id, db_path, ctx)

    async def continue_run(self, state: dict[str, Any], ctx: LegContext) -> LegResult:
        """crash_recovery's `continue` way: DBOS's own recovery, no decision given again. `DBOS.launch()` on the
        item's system database recovers the PENDING resume workflow the killed process left; the adapter only
        waits for that workflow's result, by its id."""
        db_path = None if _system_database_url(ctx) else state["db"]
        self._launch(ctx, db_path)
        try:
            from dbos import DBOS

            workflow_id = state["workflow_id"] + RESUME_SUFFIX
            recorded = await (await DBOS.retrieve_workflow_async(workflow_id)).get_result()
        finally:
            await self._shutdown()
        return self._ended(recorded, workflow_id, db_path, ctx)

    def _ended(self, recorded: dict[str, Any], workflow_id: str, db_path: str | None, ctx: LegContext) -> LegResult:
        result = self._outcome(_Ended(recorded), ctx)
        if result.status == "suspended":
            # JSON pointing at DBOS's store: the history is the paused workflow's recorded result there (the SQLite
            # file's path; on PostgreSQL only the workflow id: the database is the leg's `ctx.store`).
            state = {k: v for k, v in result.state.items() if k != "messages"}
            where = {"db": db_path} if db_path is not None else {"system_database": ctx.store.kind}
            result.state = {**state, **where, "workflow_id": workflow_id}
        return result


def _system_database_url(ctx: LegContext) -> str | None:
    """DBOS's PostgreSQL system database with `--store postgres` (the item's own database); None: the SQLite file under
    the work directory, as always. DBOS has no Redis system database (the `redis` channel is unsupported)."""
    if ctx.store.kind == "postgres":
        return ctx.store.url
    if ctx.store.kind != "sqlite":
        raise RuntimeError(f"DBOS has no {ctx.store.kind} system database")
    return None
