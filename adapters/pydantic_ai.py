"""pydantic-ai adapter: the approval tool is a deferred tool (`CallDeferred`), the pause is the run's end.

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

from arena.types import (
    AdapterInfo,
    Capabilities,
    Decision,
    LegContext,
    LegResult,
    PendingRequest,
    ToolKind,
    ToolSpec,
)


class PydanticAIAdapter:
    info = AdapterInfo(
        name="pydantic_ai",
        framework="pydantic-ai-slim",
        pause_mechanism=(
            "deferred tool: request_approval raises CallDeferred(kind='question'), the run ends with "
            "DeferredToolRequests (output_type=[str, DeferredToolRequests]); resume with "
            "agent.run(message_history=..., "
            "deferred_tool_results=DeferredToolResults(calls={tool_call_id: decision text}))"
        ),
        pause_kind="native",
        capabilities=Capabilities(
            deny_reason=True,
            approve_note=True,
            free_text=True,
            notes=(
                "The decision is the deferred call's result (DeferredToolResults.calls), a free "
                "string, so approve notes, deny reasons and free answers all reach the model as the "
                "request_approval tool result. State = pydantic-ai's own JSON message history + call id."
            ),
        ),
    )

    def __init__(self) -> None:
        self._agent: Any = None
        self._provider: Any = None

    async def aclose(self) -> None:
        if self._provider is not None:
            await self._provider.client.close()
            self._provider = None

    # -- construction ----------------------------------------------------------------------------

    def _build(self, ctx: LegContext) -> Any:
        if self._agent is not None:
            return self._agent
        from pydantic_ai import Agent, CallDeferred, DeferredToolRequests, Tool
        from pydantic_ai.models.openai import OpenAIChatModel
        from pydantic_ai.providers.openai import OpenAIProvider

        def harness_tool(spec: ToolSpec) -> Any:
            if spec.kind is ToolKind.approval:

                def defer(**kwargs: Any) -> str:
                    # The human answers this call outside the run: pydantic-ai ends the run here.
                    # kind="question": the call asks the user for content (their decision).
                    raise CallDeferred(kind="question")

                function = defer
            else:

                async def execute(**kwargs: Any) -> str:
                    return await ctx.tools.acall(spec.name, kwargs)

                function = execute
            return Tool.from_schema(function, name=spec.name, description=spec.description, json_schema=spec.parameters)

        self._provider = OpenAIProvider(base_url=ctx.model.base_url, api_key=ctx.model.api_key)
        model = OpenAIChatModel(ctx.model.name, provider=self._provider)
        agent = Agent(
            model,
            instructions=ctx.instructions,
            output_type=[str, DeferredToolRequests],
            tools=[harness_tool(s) for s in ctx.tools.specs],
        )
        agent.instrument = False  # no OpenTelemetry / logfire spans, whatever the global default
        self._agent = agent
        return agent

    # -- legs ------------------------------------------------------------------------------------

    async def start(self, ctx: LegContext) -> LegResult:
        agent = self._build(ctx)
        result = await agent.run(ctx.item.input)
        return self._outcome(result, ctx)

    async def resume(self, state: dict[str, Any], decision: Decision, ctx: LegContext) -> LegResult:
        from pydantic_ai import DeferredToolResults
        from pydantic_ai.messages import ModelMessagesTypeAdapter

        agent = self._build(ctx)
        history = ModelMessagesTypeAdapter.validate_json(state["messages"])
        results = DeferredToolResults(calls={state["call_id"]: decision.as_text()})
        result = await agent.run(message_history=history, deferred_tool_results=results)
        return self._outcome(result, ctx)

    def _outcome(self, result: Any, ctx: LegContext) -> LegResult:
        from pydantic_ai import DeferredToolRequests

        output = result.output
        if not isinstance(output, DeferredToolRequests):
            return LegResult.finished(output if isinstance(output, str) else str(output))
        approval_name = ctx.approval_tool.name
        pending = [c for c in output.calls if c.tool_name == approval_name]
        others = [c.tool_name for c in output.calls if c.tool_name != approval_name]
        if output.approvals or others or len(pending) != 1 or output.kind(pending[0].tool_call_id) != "question":
            # Only request_approval defers, and only once per turn; anything else is not a pause we can answer.
            names = [c.tool_name for c in output.approvals] + others + [c.tool_name for c in pending]
            return LegResult.errored(f"run ended with unexpected deferred tool requests: {names}")
        call = pending[0]
        args = call.args_as_dict()
        # Plain JSON text, so the state can cross a process boundary (durable_state).
        state = {"messages": result.all_messages_json().decode(), "call_id": call.tool_call_id}
        return LegResult.suspended(PendingRequest(tool=approval_name, args=args, call_id=call.tool_call_id), state)
