"""The pydantic_ai_dbos adapter class: pydantic_ai's adapter, its agent made durable (`DBOSDurability`) and each
leg run as the adapter's own DBOS workflow, DBOS launched for the leg and destroyed when it returns."""

from __future__ import annotations

import asyncio
import os
import uuid
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from arena.for_adapters import Decision, DecisionSet, LegContext, LegResult
from arena_builtins.adapters.pydantic_ai import (
    PydanticAIAdapter,
    deferred_results,
    for_new_prompt,
    is_message,
    tell,
    user_prompt,
)

from .client import AGENT_NAME, dbos_config, load_dbos
from .info import INFO
from .outcome import ended
from .store import db_path_for, system_database_url
from .tools import StepTools
from .workflow import RESUME_SUFFIX, current, hold, release, workflow


class PydanticAIDBOSAdapter(PydanticAIAdapter):
    order = 41
    requires = ("dbos",)  # installed besides pydantic-ai-slim
    concurrent = False  # DBOS is one process-global instance (its launch, system database and registry)
    # dbos itself is imported by `warm()`, through `load_dbos()`, so that its switches are set before it is imported
    preload = (*PydanticAIAdapter.preload, "sqlalchemy", "sqlalchemy.dialects.sqlite", "sqlite3", "dbos._sys_db_sqlite")

    @staticmethod
    def warm() -> None:
        PydanticAIAdapter.warm()
        load_dbos()
        import pydantic_ai.durable_exec.dbos  # noqa: F401

    info = INFO

    def __init__(self) -> None:
        super().__init__()
        self._launched = False
        self._stream_leg: LegContext | None = None  # the leg whose stream the event handler tells (a streamed run)
        self._leg_tools = StepTools()  # each call a DBOS step
        self._loop_executor: Any = None

    # -- the agent: pydantic_ai's, made durable --------------------------------------------------------

    def _agent_options(self, ctx: LegContext) -> dict[str, Any]:
        load_dbos()
        from pydantic_ai.durable_exec.dbos import DBOSDurability

        # No step retries (DBOS's default without a model_step_config), as every adapter's client makes one attempt.
        # A streamed run's agent hands its events to an `event_stream_handler` (DBOS's way to stream: the run is
        # the workflow's, so `run_stream_events` is not offered); a plain run's has none, as before.
        handler: dict[str, Any] = {"event_stream_handler": self._on_events} if ctx.stream else {}
        return {"name": AGENT_NAME, "capabilities": [DBOSDurability(**handler)]}

    async def _on_events(self, run: Any, events: Any) -> None:
        """DBOSDurability's `event_stream_handler`: model events inside the model-request step, each tool event
        in an event-handler step of its own. What they tell is handed over to the leg that runs."""
        ctx = self._stream_leg
        async for event in events:
            if ctx is not None:
                tell(ctx, event)

    async def _run(self, prompt: str | None, history: str | None, results: Any) -> dict[str, Any]:
        """The workflow's body: pydantic-ai's run, from the prompt or from the paused history with the decision (and,
        with input added while paused, that input as the run's prompt alongside the deferred results)."""
        from pydantic_ai.messages import ModelMessagesTypeAdapter

        agent = self._agent
        if history is None:
            result = await agent.run(prompt)
        elif results is None:  # a new user message on the paused history (pydantic_ai's `message` channel)
            paused = ModelMessagesTypeAdapter.validate_json(history)
            result = await agent.run(prompt, message_history=for_new_prompt(paused))
        else:  # the decision; a prompt here is the input added while paused (pydantic_ai's `input` channel)
            result = await agent.run(prompt, message_history=ModelMessagesTypeAdapter.validate_json(history),
                                     deferred_tool_results=results)
        return {"output": result.output, "messages": result.all_messages_json().decode()}

    # -- DBOS's lifetime: one leg ----------------------------------------------------------------------

    def _launch(self, ctx: LegContext, db_path: str | None) -> None:
        """Register the workflow and the agent's steps, then launch DBOS on the item's system database (which
        recovers whatever workflow a killed process left PENDING there): the SQLite file `db_path`, or with
        `--store postgres` (`db_path` None) the item's PostgreSQL database, connected to anew by each leg."""
        dbos = load_dbos()
        self._build(ctx)
        self._stream_leg = ctx if ctx.stream else None
        workflow()
        held = current()
        if held is not None and held is not self and held._launched:
            raise RuntimeError("another pydantic_ai_dbos item holds DBOS in this process")
        url = system_database_url(ctx)
        if url is None:
            os.makedirs(os.path.dirname(str(db_path)), exist_ok=True)
        dbos.DBOS.destroy()  # none should be left; DBOS() would return it as it is
        hold(self)
        # asyncio keeps it there; read back at the shutdown (see `_shutdown`)
        self._loop_executor = getattr(asyncio.get_running_loop(), "_default_executor", None)
        dbos.DBOS(config=dbos_config(db_path, url))
        dbos.DBOS.launch()
        self._launched = True

    async def _shutdown(self) -> None:
        if not self._launched:
            return
        self._launched = False
        # DBOS's async API makes its own thread pool the calling event loop's default executor, and
        # `DBOS.destroy()` shuts that pool down: give the loop a working one back first, or every later
        # `asyncio.to_thread` in it (the harness's too) fails with "cannot schedule new futures after shutdown".
        # (the loop's own, as it was at the launch, else a new one; asyncio shuts it down with the loop)
        previous, self._loop_executor = self._loop_executor, None
        asyncio.get_running_loop().set_default_executor(previous or ThreadPoolExecutor(thread_name_prefix="asyncio"))
        await asyncio.to_thread(load_dbos().DBOS.destroy)
        self._stream_leg = None
        release(self)

    async def aclose(self) -> None:
        await self._shutdown()
        try:
            await super().aclose()
        except RuntimeError:  # a recovered workflow ran the client on DBOS's loop, which has stopped
            self._provider = None

    # -- legs --------------------------------------------------------------------------------------------

    async def start(self, ctx: LegContext) -> LegResult:
        db_path = db_path_for(ctx)
        workflow_id = f"{ctx.item.id}/{uuid.uuid4().hex[:12]}"
        self._launch(ctx, db_path)
        try:
            from dbos import SetWorkflowID

            with SetWorkflowID(workflow_id):
                recorded = await workflow()(ctx.item.input, None, None)
        finally:
            await self._shutdown()
        return ended(recorded, workflow_id, db_path, ctx)

    async def resume(self, state: dict[str, Any], decision: Decision | DecisionSet, ctx: LegContext) -> LegResult:
        db_path = db_path_for(ctx, state)
        self._launch(ctx, db_path)
        try:
            from dbos import DBOS, SetWorkflowID

            paused: dict[str, Any] = await (await DBOS.retrieve_workflow_async(state["workflow_id"])).get_result()
            # a new message instead of a decision: the message is the run's prompt, no deferred results; input added
            # while paused (`add_input`) goes first in the prompt, alongside the deferred results of a decision
            prompt = user_prompt(state, decision)
            results = None if is_message(decision) else deferred_results(state, decision)
            workflow_id = state["workflow_id"] + RESUME_SUFFIX
            with SetWorkflowID(workflow_id):
                recorded = await workflow()(prompt, paused["messages"], results)
        finally:
            await self._shutdown()
        return ended(recorded, workflow_id, db_path, ctx)

    async def continue_run(self, state: dict[str, Any], ctx: LegContext) -> LegResult:
        """crash_recovery's `continue` way: DBOS's own recovery, no decision given again. `DBOS.launch()` on the
        item's system database recovers the PENDING resume workflow the killed process left; the adapter only
        waits for that workflow's result, by its id."""
        db_path = db_path_for(ctx, state)
        self._launch(ctx, db_path)
        try:
            from dbos import DBOS

            workflow_id = state["workflow_id"] + RESUME_SUFFIX
            recorded: dict[str, Any] = await (await DBOS.retrieve_workflow_async(workflow_id)).get_result()
        finally:
            await self._shutdown()
        return ended(recorded, workflow_id, db_path, ctx)
