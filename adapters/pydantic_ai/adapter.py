"""The pydantic-ai adapter class: its declaration and its legs, each a short dispatch to the concern modules
(the agent's tools, the model client, the run's outcome, the decision as `DeferredToolResults`, the paused state
on a server, delegation, a new message or input at a pause, a streamed run)."""

from __future__ import annotations

from typing import Any

from arena.for_adapters import Adapter, Decision, DecisionSet, LegContext, LegResult, ToolSpec
from arena_builtins.arenas.delegation.channel import agents_of

from . import client
from .context import instructions, run_kwargs
from .decision import deferred_results, nested_results
from .delegation import build_delegation
from .info import INFO
from .input import for_new_prompt, is_message, user_prompt, with_input
from .outcome import outcome
from .store import PAUSED_ID, kept, load_paused
from .stream import run_agent
from .tools import LegTools, harness_tool


class PydanticAIAdapter(Adapter):
    order = 40  # where it stands in `arena list` and the reports (lower first)
    # what a fork server imports before it forks workers (arena/worker/forkserver.py)
    preload = (
        "pydantic_ai",
        "pydantic_ai.models.openai",
        "pydantic_ai.providers.openai",
        "pydantic_ai.messages",
        "openai",
        "genai_prices.data",
    )
    # the answer models a worker builds at its first answer (deferred by their libraries), recorded in forked workers:
    # built once in the fork server instead (arena/worker/forkserver.py, complete_models); each name is in some releases
    complete = (
        "openai.types.completion_usage.CompletionUsage",
        "pydantic_ai.models.openai._ChatCompletion",
        "pydantic_ai.models.openai._chat_completions.LenientChatCompletion",
    )

    @staticmethod
    def warm() -> None:
        """Build the message history's validator once in the fork server (pydantic defers it to first use)."""
        client.warm()

    info = INFO

    def __init__(self) -> None:
        self._agent: Any = None
        self._provider: Any = None
        # The agent is built once per instance; its tools call the tool box of the leg that runs (a resumed
        # leg's tool box is its own: the harness may hold or fault its calls), pointed at it by each leg.
        self._leg_tools = LegTools()
        # delegation: the leg's context the delegates' runs stream to, and the delegates' agents by name
        self._ctx: Any = None
        self._delegates: dict[str, Any] = {}

    async def aclose(self) -> None:
        if self._provider is not None:
            await self._provider.client.close()
            self._provider = None

    # -- construction ----------------------------------------------------------------------------

    # Hooks for a subclass (pydantic_ai_dbos): the same agent, its harness calls and construction wrapped.

    def _tools(self, ctx: LegContext) -> Any:
        """The tool box the tools' bodies call: this leg's, as the harness gives it."""
        self._leg_tools.use(ctx.tools)
        return self._leg_tools

    def _agent_options(self, ctx: LegContext) -> dict[str, Any]:
        """Extra keyword arguments for `Agent(...)` (none)."""
        return {}

    def _build(self, ctx: LegContext) -> Any:
        tools = self._tools(ctx)
        if self._agent is not None:
            return self._agent
        from pydantic_ai import Agent, DeferredToolRequests

        def tool(spec: ToolSpec) -> Any:
            return harness_tool(spec, tools)

        self._provider = client.provider_for(ctx)
        model = client.chat_model(ctx, self._provider)
        if agents_of(ctx):  # delegation: the desk and its delegates (only when the arena gives agents)
            agent = build_delegation(self, ctx, model, tool)
        else:
            agent = Agent(
                model,
                instructions=instructions(ctx),
                output_type=[str, DeferredToolRequests],
                tools=[tool(s) for s in ctx.tools.specs],
                **self._agent_options(ctx),
            )
        agent.instrument = False  # no OpenTelemetry / logfire spans, whatever the global default
        self._agent = agent
        return agent

    # -- legs ------------------------------------------------------------------------------------

    async def start(self, ctx: LegContext) -> LegResult:
        self._ctx = ctx
        agent = self._build(ctx)
        result = await self._run(agent, ctx, user_prompt=ctx.item.input)
        return await kept(outcome(result, ctx), ctx.store)

    async def add_input(self, state: dict[str, Any], text: str, ctx: LegContext) -> dict[str, Any]:
        """Input while paused (the `input` channel), deciding nothing: pydantic-ai holds no paused run to add it to
        (the history is the caller's), so it is kept with the state, a copy (the state handed back at the pause stays
        as it was), and the resume sends it as the run's `user_prompt` alongside the deferred results."""
        return with_input(state, text)

    async def resume(self, state: dict[str, Any], decision: Decision | DecisionSet, ctx: LegContext) -> LegResult:
        from pydantic_ai.messages import ModelMessagesTypeAdapter

        self._ctx = ctx
        agent = self._build(ctx)
        if PAUSED_ID in state:  # the paused state is on the server (`--store postgres|redis`): read it back
            state = await load_paused(ctx.store, state)
        # a delegate the run was handed over to paused: the run goes on as that delegate's, on its own history
        handed = state.get("agent") if state.get("kind") != "nested" else None
        if handed is not None:
            agent = self._delegates[handed]
        history = ModelMessagesTypeAdapter.validate_json(state["messages"])
        prompt = user_prompt(state, decision)
        if is_message(decision):  # a new user message instead of a decision (the `message` channel)
            result = await self._run(agent, ctx, user_prompt=prompt, message_history=for_new_prompt(history))
            return await kept(outcome(result, ctx, handed), ctx.store)
        if state.get("kind") == "nested":  # delegates called as tools wait: the desk's calls of them resume them
            results = nested_results(state, decision)
        else:
            results = deferred_results(state, decision)
        # input added while paused: the new user prompt pydantic-ai takes alongside the deferred results
        extra = {} if prompt is None else {"user_prompt": prompt}
        result = await self._run(agent, ctx, message_history=history, deferred_tool_results=results, **extra)
        return await kept(outcome(result, ctx, handed), ctx.store)

    @staticmethod
    async def _run(agent: Any, ctx: LegContext, **run: Any) -> Any:
        """`agent.run(...)`, or in a streamed leg `agent.run_stream_events(...)` read to its end (`stream.py`)."""
        return await run_agent(agent, ctx, **run, **run_kwargs(ctx))
