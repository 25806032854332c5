"""Delegation (`agents_of(ctx)`): an AgentWorkflow whose root agent may hand off to each `via: handoff` delegate (the
`handoff` channel, native), and each `via: tool` delegate as llama-index's Orchestrator pattern, a FunctionTool
awaiting the sub-agent's own run (the `nested` channel, declared unsupported: its wait never reaches the outer run)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from arena.for_adapters import LegContext, ToolSpec
from arena_builtins.arenas.delegation.channel import AgentSpec, agents_of, own_tools

from .client import AGENT_NAME


def build_delegation(ctx: LegContext, li: dict[str, Any], tool: Callable[[ToolSpec], Any], llm: Any) -> Any:
    """The run's agent and its delegates (`agents_of(ctx)`), in llama-index's two documented multi-agent patterns
    (docs: understanding/agent/multi_agent): an AgentWorkflow whose root agent (the run's, its own tools) may hand
    off (`can_handoff_to`) to each `via: handoff` delegate, a FunctionAgent in the same workflow holding its own
    tools (the delegates cannot hand off again); and, for each `via: tool` delegate, the Orchestrator pattern: a
    FunctionTool named after the agent whose body awaits that agent's own `run(user_msg=task)` (a separate
    workflow run, with its own Context)."""
    def delegate(spec: AgentSpec) -> Any:
        return li["ArenaAgent"](name=spec.name, description=spec.description, system_prompt=spec.instructions,
                                tools=[tool(s) for s in own_tools(ctx, spec.name)], llm=llm, streaming=False,
                                timeout=None, can_handoff_to=[])

    def as_tool(spec: AgentSpec) -> Any:
        sub = delegate(spec)

        async def call(input: str) -> str:  # noqa: A002  (the task, the tool's one argument)
            return str(await sub.run(user_msg=input))

        params = {"type": "object", "properties": {"input": {"type": "string", "description": "the task"}},
                  "required": ["input"]}
        schema = li["schema_model"](ToolSpec(name=spec.name, description=spec.description, parameters=params))
        return li["FunctionTool"](async_fn=call, metadata=li["ToolMetadata"](
            name=spec.name, description=spec.description, fn_schema=schema))

    handoffs = [delegate(a) for a in agents_of(ctx) if a.via == "handoff"]
    desk = li["ArenaAgent"](
        name=AGENT_NAME, description="The run's own agent.", system_prompt=ctx.instructions, llm=llm,
        tools=[tool(s) for s in own_tools(ctx, None)] + [as_tool(a) for a in agents_of(ctx) if a.via == "tool"],
        streaming=False, timeout=None, can_handoff_to=[a.name for a in handoffs])
    return li["ArenaWorkflow"](agents=[desk, *handoffs], root_agent=AGENT_NAME, timeout=None)
