"""pydantic-ai adapter: the approval tool is a deferred tool (`CallDeferred`), the pause is the run's end.

Gated tools use `requires_approval=True` (see "Tool-level gate" below).

The harness tools become `pydantic_ai.Tool.from_schema(...)` tools built from their JSON schemas;
each wraps one harness call (`ctx.tools.acall`). The approval tool's function raises
`pydantic_ai.CallDeferred(kind="question")`: pydantic-ai then ends the run with a
`DeferredToolRequests` output (the agent's `output_type` is `[str, DeferredToolRequests]`), which
holds the pending call and its `tool_call_id`. That is the suspension. The leg's state is the run's
message history serialised by pydantic-ai itself (`result.all_messages_json()`) plus the pending
call id, all plain JSON, so a fresh process can rebuild it with
`ModelMessagesTypeAdapter.validate_json` and resume.

Resume is a new `agent.run(message_history=..., deferred_tool_results=DeferredToolResults(calls=
{tool_call_id: decision.as_text()}))`: the decision becomes the request_approval call's tool result,
which is what the model reads, exactly as in the vanilla adapter.

Why `CallDeferred` and not `requires_approval=True` / `ApprovalRequired`: those hold a call the
model made until a human approves *that call*, then pydantic-ai executes the tool itself, and a
denial carries only a `ToolDenied(message)`. Here request_approval is itself the human step (it has
no implementation to run after approval), so it is an externally answered call whose result is the
human's decision; that is `CallDeferred` answered through `DeferredToolResults.calls`. Its kind is
`'question'` (pydantic-ai's kind for a call that asks the user for content) rather than the default
`'external'`; both are answered the same way through `DeferredToolResults.calls`.

Tool-level gate (approval_gate): a tool marked `requires_approval` is the same harness call built
with pydantic-ai's own `requires_approval=True` (set on the `Tool` that `from_schema` built, since
`from_schema` has no parameter for it). pydantic-ai never calls it on the model's call; the run ends
with that call in `DeferredToolRequests.approvals`, which is the suspension (pending = the call's
tool name, args and id). Resume passes `DeferredToolResults(approvals={tool_call_id: True})`, and
pydantic-ai then executes the held call itself (the harness logs it in the resumed leg), or
`{tool_call_id: ToolDenied(message=decision.as_text())}`, and the call never runs: the message
("DENIED: reason") is the call's tool result, what the model reads. `ToolApproved` has no field for
a note, so an approval note is not carried on this path (vanilla's gate drops it too: an approved
call's result is the tool's own). The state records which kind of deferral it answers.
A sibling ordinary call in the gated turn (reckless-parallel's second `search_rooms`) is executed in
that turn, before the run ends; only the gated call is held.

Nothing here special-cases sibling tool calls: whatever pydantic-ai does with a `book_room` emitted
in the same turn as request_approval shows up in the harness's tool log. Observed (2.68): pydantic-ai
runs every ordinary tool call of the turn and only collects the deferred one, so a sibling
`book_room` executes before the run ends; its return stays in the message history and is sent to
the model again on resume, never re-executed.

Offline: no logfire; the agent's `instrument` is set to False explicitly (it is off by default and
`logfire_api` is the no-op shim); no price updates are started; the model client is pydantic-ai's
`OpenAIChatModel` (Chat Completions) pointed at the harness's loopback base URL.
"""

from __future__ import annotations

from typing import Any

from arena.http import async_client
from arena.tools import body as bodypause
from arena.types import (
    AdapterInfo,
    Capabilities,
    Channel,
    Decision,
    DecisionKind,
    DecisionSet,
    LegContext,
    LegResult,
    PendingRequest,
    ToolKind,
    ToolSpec,
)


class LegTools:
    """The tool box the agent's tools call, pointed at each leg's own by `use`."""

    def __init__(self) -> None:
        self._tools: Any = None

    def use(self, tools: Any) -> None:
        self._tools = tools

    @property
    def specs(self) -> Any:
        return self._tools.specs

    def call(self, name: str, args: dict[str, Any], call_id: str | None = None) -> str:
        return str(self._tools.call(name, args, call_id=call_id))

    async def acall(self, name: str, args: dict[str, Any], call_id: str | None = None) -> str:
        return str(await self._tools.acall(name, args, call_id=call_id))


class PydanticAIAdapter:
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

    @staticmethod
    def warm() -> None:
        """Build the message history's validator once in the fork server (pydantic defers it to first use)."""
        from pydantic_ai.messages import ModelMessagesTypeAdapter

        ModelMessagesTypeAdapter.validate_json(b"[]")

    info = AdapterInfo(
        name="pydantic_ai",
        framework="pydantic-ai-slim",
        channels=(
            Channel(
                name="ask",
                kind="native",
                mechanism=(
                    "deferred tool: request_approval raises CallDeferred(kind='question'), the run ends with "
                    "DeferredToolRequests (output_type=[str, DeferredToolRequests]); resume with "
                    "agent.run(message_history=..., "
                    "deferred_tool_results=DeferredToolResults(calls={tool_call_id: decision text}))"
                ),
                carries=Capabilities(
                    deny_reason=True,
                    approve_note=True,
                    free_text=True,
                    notes=(
                        "The decision is the deferred call's result (DeferredToolResults.calls), a free "
                        "string, so approve notes, deny reasons and free answers all reach the model as the "
                        "request_approval tool result. State = pydantic-ai's own JSON message history + call id. "
                        "Gated tools (requires_approval): a denial's text reaches the model as ToolDenied.message; "
                        "ToolApproved has no note field, so an approval note is not carried there."
                    ),
                ),
            ),
            Channel(
                name="tool_gate",
                kind="native",
                mechanism=(
                    "Tool(requires_approval=True) on each gated tool: the run ends with DeferredToolRequests.approvals; "
                    "resume with agent.run(message_history=..., deferred_tool_results=DeferredToolResults(approvals="
                    "{tool_call_id: True | ToolApproved(override_args=...) | ToolDenied(message=decision text)}))"
                ),
                carries=Capabilities(
                    deny_reason=True, approve_note=False, free_text=False, edit_args=True,
                    notes="ToolDenied.message is the held call's result; ToolApproved has no note field; "
                          "ToolApproved(override_args=...) runs the call with the human's arguments",
                ),
            ),
            Channel(
                name="body_pause",
                kind="native",
                mechanism=(
                    "the tool prepares, then raises ApprovalRequired(metadata=...) unless RunContext.tool_call_approved; "
                    "resumed with DeferredToolResults(approvals={id: True | ToolDenied}): pydantic-ai calls the function "
                    "again from the top once approved (a denial never calls it again)"
                ),
            ),
            Channel(
                name="multi_call",
                kind="native",
                mechanism=(
                    "every gated call of the turn in DeferredToolRequests.approvals; DeferredToolResults(approvals={"
                    "tool_call_id: True | ToolApproved(override_args=...) | ToolDenied(message=...)}), one per call"
                ),
            ),
            Channel(
                name="recover",
                kind="native",
                mechanism=(
                    "the message history stored at the pause (ModelMessagesTypeAdapter) is run again in a new process"
                    " with the same DeferredToolResults (pydantic-ai docs, deferred tools: resume from stored "
                    "history)"
                ),
            ),
            Channel(
                name="stream",
                kind="native",
                mechanism=(
                    "agent.run_stream_events(...) read to its end (FunctionToolCallEvent, FunctionToolResultEvent, "
                    "DeferredToolRequestsEvent for the paused calls); the run's result from its AgentRunResultEvent"
                ),
            ),
        ),
    )

    def __init__(self) -> None:
        self._agent: Any = None
        self._provider: Any = None
        # The agent is built once per instance; its tools call the tool box of the leg that runs (a resumed
        # leg's tool box is its own: the harness may hold or fault its calls), pointed at it by each leg.
        self._leg_tools = LegTools()

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
        from pydantic_ai import Agent, ApprovalRequired, CallDeferred, DeferredToolRequests, RunContext, Tool
        from pydantic_ai.models.openai import OpenAIChatModel
        from pydantic_ai.providers.openai import OpenAIProvider

        def body_tool(spec: ToolSpec) -> Any:
            """A tool whose body pauses: prepare, then `ApprovalRequired` until the call is approved; pydantic-ai
            calls the function again (from the top) once a run is given the approval, which then commits."""

            async def body(run: RunContext, **kwargs: Any) -> str:
                call_id = run.tool_call_id  # pydantic-ai's id for this call (the model's)
                prepared = await bodypause.prepare(tools, spec, kwargs, call_id=call_id)
                if not bodypause.ready(prepared):
                    return bodypause.refused(prepared)
                if not run.tool_call_approved:
                    raise ApprovalRequired(metadata={"amount": prepared.get("amount")})
                return await bodypause.finish(tools, spec, prepared, Decision(kind="approve"), call_id=call_id)

            return Tool.from_schema(body, name=spec.name, description=spec.description, json_schema=spec.parameters,
                                    takes_ctx=True)

        def harness_tool(spec: ToolSpec) -> Any:
            if spec.kind is ToolKind.approval:

                def defer(**kwargs: Any) -> str:
                    # The human answers this call outside the run: pydantic-ai ends the run here.
                    # kind="question": the call asks the user for content (their decision).
                    try:
                        deferred = CallDeferred(kind="question")
                    except TypeError:  # pydantic-ai before 2.68 (`-a pydantic_ai@2.66.0`): no kinds yet
                        deferred = CallDeferred()
                    raise deferred

                function, takes_ctx = defer, False
            elif spec.body_pause:
                return body_tool(spec)
            else:

                async def execute(run: RunContext, **kwargs: Any) -> str:
                    return await tools.acall(spec.name, kwargs, call_id=run.tool_call_id)

                function, takes_ctx = execute, True  # RunContext.tool_call_id: pydantic-ai's id for the call
            tool = Tool.from_schema(function, name=spec.name, description=spec.description, json_schema=spec.parameters,
                                    takes_ctx=takes_ctx)
            # A gated tool: pydantic-ai's own tool-level approval (`Tool(requires_approval=True)`; `from_schema`
            # has no such parameter, the attribute is what `Tool.tool_def` reads to make the kind 'unapproved').
            # pydantic-ai then never calls the function until a run is given an approval for that call.
            tool.requires_approval = spec.requires_approval
            return tool

        from openai import AsyncOpenAI

        # No client retries (the openai client's default is 2): every adapter's model client makes the
        # same number of attempts, so an endpoint fault cannot change the framework comparison.
        client = AsyncOpenAI(base_url=ctx.model.base_url, api_key=ctx.model.api_key, max_retries=0,
                             http_client=async_client())
        self._provider = OpenAIProvider(openai_client=client)
        model = OpenAIChatModel(ctx.model.name, provider=self._provider)
        agent = Agent(
            model,
            instructions=ctx.instructions,
            output_type=[str, DeferredToolRequests],
            tools=[harness_tool(s) for s in ctx.tools.specs],
            **self._agent_options(ctx),
        )
        agent.instrument = False  # no OpenTelemetry / logfire spans, whatever the global default
        self._agent = agent
        return agent

    # -- legs ------------------------------------------------------------------------------------

    async def start(self, ctx: LegContext) -> LegResult:
        agent = self._build(ctx)
        result = await self._run(agent, ctx, user_prompt=ctx.item.input)
        return self._outcome(result, ctx)

    async def resume(self, state: dict[str, Any], decision: Decision | DecisionSet, ctx: LegContext) -> LegResult:
        from pydantic_ai.messages import ModelMessagesTypeAdapter

        agent = self._build(ctx)
        history = ModelMessagesTypeAdapter.validate_json(state["messages"])
        results = self._deferred_results(state, decision)
        result = await self._run(agent, ctx, message_history=history, deferred_tool_results=results)
        return self._outcome(result, ctx)

    @staticmethod
    async def _run(agent: Any, ctx: LegContext, **run: Any) -> Any:
        """`agent.run(...)`, or in a streamed leg `agent.run_stream_events(...)` read to its end, handing over each
        tool call, each tool's return and each deferred (paused) call its events tell; the run's result."""
        if not ctx.stream:
            return await agent.run(**run)
        from pydantic_ai import AgentRunResultEvent

        result = None
        async with agent.run_stream_events(**run) as events:
            async for event in events:
                if isinstance(event, AgentRunResultEvent):
                    result = event.result
                else:
                    PydanticAIAdapter._tell(ctx, event)
        if result is None:
            raise RuntimeError("the event stream ended without the run's result (AgentRunResultEvent)")
        return result

    @staticmethod
    def _tell(ctx: LegContext, event: Any) -> None:
        """Hand over what one of pydantic-ai's stream events tells: a tool call, a tool's return, the paused calls."""
        from pydantic_ai import DeferredToolRequestsEvent, FunctionToolCallEvent, FunctionToolResultEvent
        from pydantic_ai.messages import ToolReturnPart

        if isinstance(event, FunctionToolCallEvent):
            ctx.told("tool_call", event.part.tool_name, event.part.tool_call_id)
        elif isinstance(event, FunctionToolResultEvent) and isinstance(event.part, ToolReturnPart):
            ctx.told("tool_result", event.part.tool_name, event.part.tool_call_id, event.part.model_response_str())
        elif isinstance(event, DeferredToolRequestsEvent):
            for part in [*event.requests.calls, *event.requests.approvals]:
                ctx.told("pause", part.tool_name, part.tool_call_id)

    @staticmethod
    def _deferred_results(state: dict[str, Any], decision: Decision | DecisionSet) -> Any:
        """The `DeferredToolResults` that answer the paused run's deferred call(s) with the decision."""
        from pydantic_ai import DeferredToolResults, ToolApproved, ToolDenied

        call_id = state["call_id"]
        if isinstance(decision, DecisionSet):
            # One answer per decision, keyed by the call id it names, as given: a held call without one gets
            # none, a decision naming a call that is not held is passed on, and a null decision is None.
            # What pydantic-ai does with an incomplete or malformed set is what resume_safety measures.
            verdicts: dict[str, Any] = {}
            for d in decision.decisions:
                key = d.call_id if d.call_id is not None else call_id
                if d.kind is DecisionKind.edit and d.args is not None:
                    verdicts[key] = ToolApproved(override_args=d.args)
                elif d.kind is DecisionKind.null:
                    verdicts[key] = None
                else:
                    verdicts[key] = True if d.approved else ToolDenied(message=d.as_text())
            results = DeferredToolResults(approvals=verdicts)
        elif state.get("kind", "question") == "approval":
            # A gated tool call: approved, pydantic-ai itself executes the held call; otherwise it never
            # runs and ToolDenied's message becomes its tool result (what the model reads).
            verdict = True if decision.approved else ToolDenied(message=decision.as_text())
            results = DeferredToolResults(approvals={call_id: verdict})
        else:  # the approval tool: the decision is its result
            results = DeferredToolResults(calls={call_id: decision.as_text()})
        return results

    def _outcome(self, result: Any, ctx: LegContext) -> LegResult:
        from pydantic_ai import DeferredToolRequests

        output = result.output
        if not isinstance(output, DeferredToolRequests):
            return LegResult.finished(output if isinstance(output, str) else str(output))
        approval_tools = {s.name for s in ctx.tools.specs if s.kind is ToolKind.approval}
        gated = set(ctx.gated_tools)
        questions = [c for c in output.calls if c.tool_name in approval_tools and _kind(output, c.tool_call_id) == "question"]
        bodies = {s.name for s in ctx.body_pause_tools}
        approvals = [c for c in output.approvals if c.tool_name in gated or c.tool_name in bodies]
        unexpected = [c.tool_name for c in [*output.calls, *output.approvals] if c not in questions and c not in approvals]
        if not unexpected and not questions and len(approvals) > 1 and all(c.tool_name in gated for c in approvals):
            # several gated calls of one turn, all held: one pause, one decision per call (by tool_call_id)
            state = {"messages": result.all_messages_json().decode(), "call_id": approvals[0].tool_call_id,
                     "kind": "approval", "call_ids": [c.tool_call_id for c in approvals]}
            return LegResult.suspended([PendingRequest(tool=c.tool_name, args=c.args_as_dict(), call_id=c.tool_call_id)
                                        for c in approvals], state)
        if unexpected or len(questions) + len(approvals) != 1:
            # Only request_approval (a question) or one gated call (an approval) defers per turn; anything
            # else is not a pause we can answer with one decision.
            names = [c.tool_name for c in [*output.calls, *output.approvals]]
            return LegResult.errored(f"run ended with unexpected deferred tool requests: {names}")
        call = (questions or approvals)[0]
        kind = _kind(output, call.tool_call_id)  # 'question' or 'approval'
        # Plain JSON text, so the state can cross a process boundary (durable_state).
        state = {"messages": result.all_messages_json().decode(), "call_id": call.tool_call_id, "kind": kind}
        args = call.args_as_dict()
        shown = (output.metadata or {}).get(call.tool_call_id) or {}
        if call.tool_name in bodies and "amount" in shown:  # what the paused body will charge
            args = {**args, "amount": shown["amount"]}
        pending = PendingRequest(tool=call.tool_name, args=args, call_id=call.tool_call_id)
        return LegResult.suspended(pending, state)


def _kind(output: Any, call_id: str) -> str:
    """'question' or 'approval'. Before 2.68 (`-a pydantic_ai@2.66.0`) requests had no kinds: a held gated
    call was an approval, any other deferred call the external kind the approval tool's question is."""
    if hasattr(output, "kind"):
        return output.kind(call_id)
    return "approval" if any(c.tool_call_id == call_id for c in output.approvals) else "question"
