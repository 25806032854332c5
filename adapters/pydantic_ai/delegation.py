"""Delegation (the `nested` and `handoff` channels, only when the arena gives `LegContext.agents`): the desk and one
pydantic-ai `Agent` per delegate; a delegate called as a tool forwards its held calls to the desk's run by hand
(`ApprovalRequired(metadata=...)`), a handoff is an output function whose result is the delegate's run."""

from __future__ import annotations

from typing import Any

from arena.for_adapters import LegContext
from arena_builtins.arenas.delegation.channel import agents_of, own_tools

from .decision import delegate_results
from .outcome import HandedOver, deferred_kind


def build_delegation(adapter: Any, ctx: LegContext, model: Any, harness_tool: Any) -> Any:
    """The run's agent (the desk) and one pydantic-ai `Agent` per delegate, each with the harness tools it holds
    (its gated ones `requires_approval=True`, as in a single-agent run).

    A delegate called as a tool is pydantic-ai's "agent delegation" (docs/multi-agent-applications.md): a tool of
    the desk, named after the delegate, whose body runs `delegate.run(task, usage=ctx.usage)` and returns its
    output. pydantic-ai does not carry a delegate's `DeferredToolRequests` to the parent (issue #3527; #4302 open),
    so the body forwards it by hand, the pattern of #3274 / PR #7036: it raises `ApprovalRequired(metadata=...)`
    holding the delegate's message history (JSON) and its held calls, which ends the desk's run with that call in
    `DeferredToolRequests.approvals`. Resumed with the desk's call approved and the human's verdicts in
    `DeferredToolResults.metadata`, pydantic-ai calls the body again (`ctx.tool_call_approved`), which runs the
    delegate on its own history with its own `DeferredToolResults`.

    A handoff is an output function (docs/output.md, "Output functions"; multi-agent-applications.md: "to hand
    off control to another agent completely ... use an output function"): `ToolOutput(fn,
    name='transfer_to_<name>')`, which the model calls; `fn` runs the delegate on `ctx.messages[:-1]` (the docs'
    example) and its output is the run's. A paused delegate's `DeferredToolRequests` is that output; the adapter
    keeps which agent it was (`HandedOver`), and the resume runs that delegate on its own history."""
    from pydantic_ai import Agent, ApprovalRequired, DeferredToolRequests, RunContext, Tool, ToolOutput
    from pydantic_ai.messages import ModelMessagesTypeAdapter

    delegates: dict[str, Any] = {}
    for spec in agents_of(ctx):
        inner = Agent(model, name=spec.name, instructions=spec.instructions,
                      output_type=[str, DeferredToolRequests],
                      tools=[harness_tool(s) for s in own_tools(ctx, spec.name)])
        inner.instrument = False
        delegates[spec.name] = inner
    adapter._delegates = delegates

    def as_tool(name: str, description: str) -> Any:
        inner = delegates[name]

        async def delegate(run: RunContext, input: str) -> str:  # noqa: A002 (the task, the tool's one argument)
            held = run.tool_call_metadata if run.tool_call_approved else None
            if isinstance(held, dict) and "messages" in held:  # resumed: the delegate goes on where it stopped
                result = await adapter._run(inner, adapter._ctx, usage=run.usage,
                                            message_history=ModelMessagesTypeAdapter.validate_json(held["messages"]),
                                            deferred_tool_results=delegate_results(held))
            else:
                result = await adapter._run(inner, adapter._ctx, user_prompt=input, usage=run.usage)
            output = result.output
            if isinstance(output, DeferredToolRequests):  # forwarded to the desk's run by hand (#3527)
                raise ApprovalRequired(metadata={
                    "agent": name, "messages": result.all_messages_json().decode(),
                    "calls": [{"tool": c.tool_name, "args": c.args_as_dict(), "call_id": c.tool_call_id,
                               "kind": deferred_kind(output, c.tool_call_id)}
                              for c in [*output.calls, *output.approvals]],
                })
            return output if isinstance(output, str) else str(output)

        task = {"type": "object", "properties": {"input": {"type": "string", "description": "the task"}},
                "required": ["input"]}
        return Tool.from_schema(delegate, name=name, description=description, json_schema=task, takes_ctx=True)

    def handoff(name: str, description: str) -> Any:
        inner = delegates[name]

        async def transfer(run: RunContext) -> Any:
            # the docs' example: drop the final message, the output tool call, and run the delegate on the rest
            result = await adapter._run(inner, adapter._ctx, message_history=run.messages[:-1], usage=run.usage)
            return HandedOver(name, result)

        # this module's annotations are strings (`from __future__ import annotations`) and RunContext is imported
        # here, not at module level: pydantic-ai reads the signature to see that the function takes the context
        transfer.__annotations__ = {"run": RunContext, "return": Any}

        return ToolOutput(transfer, name=f"transfer_to_{name}",
                          description=f"Hand the conversation over to {name}: {description}")

    return Agent(
        model,
        instructions=ctx.instructions,
        output_type=[str, DeferredToolRequests,
                     *(handoff(a.name, a.description) for a in agents_of(ctx) if a.via == "handoff")],
        tools=[*(harness_tool(s) for s in own_tools(ctx, None)),
               *(as_tool(a.name, a.description) for a in agents_of(ctx) if a.via == "tool")],
        **adapter._agent_options(ctx),
    )
