"""The agno adapter class: its declaration and the legs, each a short dispatch to the package's concern modules."""

from __future__ import annotations

import uuid
from typing import Any

from arena.for_adapters import Adapter, Decision, DecisionKind, DecisionSet, LegContext, LegResult, kit
from arena_builtins.arenas.delegation.channel import agents_of

from .client import import_agno, model_for
from .decision import continue_args
from .delegation import build_team, routed_team
from .info import INFO
from .input import new_message, with_input
from .outcome import outcome
from .store import close_db, db_for
from .stream import STREAMED, streamed
from .tools import MAX_TOOL_CALLS, function_for


class AgnoAdapter(Adapter):
    order = 90  # where it stands in `arena list` and the reports (lower first)
    # what a fork server imports before it forks workers (arena/worker/forkserver.py)
    preload = (
        "agno.agent",
        "agno.models.openai",
        "agno.db.sqlite",
        "agno.tools.function",
        "agno.run.requirement",
        "agno.run.agent",
        "openai",
        "sqlalchemy",
        # imported at an agent's first run
        "sqlite3",
        "agno.team",
        "agno.offload",
        "agno.agent._hooks",
        "agno.agent._response",
        "agno.agent._telemetry",
        "agno.utils.callables",
        "agno.utils.names",
    )

    @staticmethod
    def warm() -> None:
        """Set agno's switches in the fork server too, before anything could run there."""
        import_agno()

    info = INFO

    def __init__(self) -> None:
        self._agent: Any = None
        self._model: Any = None
        self._db: Any = None

    async def aclose(self) -> None:
        if self._model is not None and self._model.async_client is not None:
            await self._model.async_client.close()
        self._model = None
        if self._db is not None:
            close_db(self._db)
            self._db = None

    # -- construction ----------------------------------------------------------------------------

    def _build(self, ctx: LegContext) -> Any:
        if self._agent is not None:
            return self._agent
        import_agno()
        if agents_of(ctx):  # delegation: agno's multi-agent construct, a Team of member agents
            routed = routed_team(ctx)
            self._model = model_for(ctx)
            self._db = db_for(ctx)
            self._agent = build_team(ctx, self._model, self._db, routed)
            return self._agent
        from agno.agent import Agent

        self._model = model_for(ctx)
        self._db = db_for(ctx)
        self._agent = Agent(
            model=self._model,
            instructions=ctx.instructions,
            tools=[function_for(spec, ctx) for spec in kit.specs_of(ctx)],
            db=self._db,
            telemetry=False,
            retries=0,
            # agno's mid-run durability: the run is written to the db after every tool batch (status RUNNING),
            # not only when it pauses or ends, so a crashed run can be continued from there (`continue_run`).
            checkpoint="tool-batch",
            tool_call_limit=MAX_TOOL_CALLS,
        )
        return self._agent

    # -- legs ------------------------------------------------------------------------------------

    async def start(self, ctx: LegContext) -> LegResult:
        agent = self._build(ctx)
        session_id = f"arena-{ctx.item.id}-{uuid.uuid4().hex[:8]}"
        if ctx.stream:
            result = await streamed(agent, agent.arun(ctx.item.input, session_id=session_id, **STREAMED), ctx)
        else:
            result = await agent.arun(ctx.item.input, session_id=session_id)
        return outcome(result, ctx)

    async def resume(self, state: dict[str, Any], decision: Decision | DecisionSet, ctx: LegContext) -> LegResult:
        agent = self._build(ctx)
        if isinstance(decision, Decision) and decision.kind is DecisionKind.message:
            return await new_message(agent, state, decision, ctx)
        run = continue_args(state, decision)
        if ctx.stream:
            result = await streamed(agent, agent.acontinue_run(**run, **STREAMED), ctx)
        else:
            result = await agent.acontinue_run(**run)
        return outcome(result, ctx)

    async def add_input(self, state: dict[str, Any], text: str, ctx: LegContext) -> dict[str, Any]:
        """Input added while paused (the `input` channel), no decision: kept in the leg state (`input.with_input`)."""
        return with_input(state, text)

    async def continue_run(self, state: dict[str, Any], ctx: LegContext) -> LegResult:
        """Recovery way `continue`: `acontinue_run(run_id, session_id)` with no requirements, the decision not
        given again. agno resumes a RUNNING run in place from its last tool-batch checkpoint. A run its db still
        holds as paused (the process died before that checkpoint) is continued without the decision, which agno
        never persisted: it refuses an unanswered external call (ValueError) and rejects an unconfirmed gated
        call with its own text. Whatever agno does is the measurement."""
        agent = self._build(ctx)
        if ctx.stream:
            result = await streamed(agent, agent.acontinue_run(run_id=state["run_id"], session_id=state["session_id"],
                                                               **STREAMED), ctx)
        else:
            result = await agent.acontinue_run(run_id=state["run_id"], session_id=state["session_id"])
        return outcome(result, ctx)
