"""The OpenAI Agents SDK adapter: legs run with `Runner.run` (or streamed), paused on `RunResult.interruptions`,
resumed from `RunState.from_string` with the decision applied; on a PostgreSQL / Redis store through `Kept`."""

from __future__ import annotations

import uuid
from typing import Any

from arena.for_adapters import Adapter, Decision, DecisionKind, DecisionSet, LegContext, LegResult
from arena_builtins.arenas.delegation.channel import agents_of

from .client import AGENT_NAME, MAX_TURNS, chat_model, run_config
from .context import instructions, run_kwargs
from .decision import apply_decision
from .delegation import delegating_agent
from .follow_up import agent_options, session_for
from .info import INFO
from .input import stage_message, staged_input
from .outcome import outcome
from .store import Kept, LiveState, LiveStates
from .stream import run_streamed
from .tools import function_tools, pause_names


class OpenAIAgentsAdapter(Adapter):
    order = 30  # where it stands in `arena list` and the reports (lower first)
    # what a fork server imports before it forks workers (arena/worker/forkserver.py)
    preload = ("agents", "openai")
    # the openai SDK's models the SDK's chat converter and usage build at a worker's first answer (the SDK defers them),
    # recorded in forked workers: built once in the fork server instead (arena/worker/forkserver.py, complete_models)
    complete = (
        "openai.types.responses.response_function_tool_call.ResponseFunctionToolCall",
        "openai.types.responses.response_output_message.ResponseOutputMessage",
        "openai.types.responses.response_output_text.ResponseOutputText",
        "openai.types.responses.response_usage.InputTokensDetails",
        "openai.types.responses.response_usage.OutputTokensDetails",
    )

    info = INFO

    def __init__(self) -> None:
        self._client: Any = None
        self._agent: Any = None
        self._decision: Decision | None = None
        self._pause_names: set[str] = set()
        self._gated: set[str] = set()
        self._ctx: LegContext | None = None  # the current leg's (a delegate's stream is told through it)
        self._nested_names: dict[str, str] = {}  # call id -> tool, for the delegates' streamed tool outputs
        self._live = LiveStates()  # the paused RunResults of this process's legs (resume_safety's live_twin)
        self._session: Any = None  # the run's conversation, where the user follows up on it (follow_up's channel)

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.close()
            self._client = None

    # -- building the agent -------------------------------------------------------------------

    def _build(self, ctx: LegContext) -> Any:
        if self._agent is not None:
            return self._agent
        model = chat_model(self, ctx)
        self._pause_names = pause_names(ctx)
        self._gated = set(ctx.gated_tools)
        if not agents_of(ctx):
            from agents import Agent

            self._agent = Agent(name=AGENT_NAME, instructions=instructions(ctx), model=model,
                                tools=function_tools(self, ctx.tools.specs, ctx), **agent_options(ctx))
            return self._agent
        self._agent = delegating_agent(self, ctx, model)
        return self._agent

    # -- legs ------------------------------------------------------------------------------------

    async def _run(self, agent: Any, run_input: Any, ctx: LegContext, names: dict[str, str] | None = None,
                   session: Any = None) -> Any:
        """`Runner.run`, or in a streamed leg `Runner.run_streamed` (`run_streamed`). `session`: the run's Session on
        a PostgreSQL / Redis store (`Kept`), None on the default store (no session, as before)."""
        if not ctx.stream:
            from agents import Runner

            return await Runner.run(agent, run_input, run_config=run_config(), max_turns=MAX_TURNS,
                                    session=session, **run_kwargs(ctx))
        return await run_streamed(self, agent, run_input, ctx, names, session)

    async def start(self, ctx: LegContext) -> LegResult:
        agent = self._build(ctx)
        self._ctx = ctx
        if ctx.store.kind == "sqlite":
            self._session = session_for(ctx, None)
            return outcome(self, await self._run(agent, ctx.item.input, ctx, session=self._session), ctx)
        kept = Kept(ctx.store, uuid.uuid4().hex)  # a new run: a new session
        try:
            return await kept.keep(outcome(self, await self._run(agent, ctx.item.input, ctx, session=kept.session),
                                           ctx))
        finally:
            await kept.aclose()

    async def add_input(self, state: Any, text: str, ctx: LegContext) -> Any:
        """Input while paused, no decision: staged with RunState.add_input, kept in the serialised state the decision
        then resumes. A refusal (UserError: a state the SDK takes no input on) propagates."""
        if ctx.store.kind == "sqlite":
            return await staged_input(self._build(ctx), state, text)
        kept = Kept(ctx.store, state["session_id"])
        try:
            return await kept.save(await staged_input(self._build(ctx), await kept.load(state), text))
        finally:
            await kept.aclose()

    async def live_twin(self, state: Any, ctx: LegContext) -> LiveState:
        """A second live state of the paused run (resume_safety's `live_twin` channel): `result.to_state()` again on the
        paused RunResult; the run's own resume then resumes the first `to_state()` of the pair (`LiveStates`)."""
        return self._live.twin(state)

    async def follow_up(self, state: Any, text: str, ctx: LegContext) -> LegResult:
        """The user's next message after the run (follow_up's channel): `Runner.run(agent, text, session=...)` on the
        run's session, which the SDK sends with the history it kept."""
        if self._session is None:
            return LegResult.errored("no session was kept in this process to follow up on")
        self._ctx = ctx
        return outcome(self, await self._run(self._build(ctx), text, ctx, session=self._session), ctx)

    async def resume(self, state: Any, decision: Decision | DecisionSet, ctx: LegContext) -> LegResult:
        if ctx.store.kind == "sqlite":
            return await self._resume(state, decision, ctx, session_for(ctx, self._session))
        kept = Kept(ctx.store, state["session_id"])  # the same session id, a new session object (a new process)
        try:
            return await kept.keep(await self._resume(await kept.load(state), decision, ctx, kept.session))
        finally:
            await kept.aclose()

    async def _resume(self, state: Any, decision: Decision | DecisionSet, ctx: LegContext,
                      session: Any = None) -> LegResult:
        from agents import RunState

        agent = self._build(ctx)
        self._ctx = ctx
        run_state = self._live.restored(state)  # a live twin, or the first of a pair (resume_safety's live_twin)
        if run_state is None:
            run_state = await RunState.from_string(agent, state)
        interruptions = run_state.get_interruptions()
        if not interruptions:
            return LegResult.errored("the restored run state holds no pending approval")
        names = {str(i.call_id): str(i.name) for i in interruptions}
        if isinstance(decision, Decision) and decision.kind is DecisionKind.message:
            stage_message(self, run_state, decision.text)
        else:
            apply_decision(self, run_state, interruptions, decision)
        return outcome(self, await self._run(agent, run_state, ctx, names, session), ctx)
