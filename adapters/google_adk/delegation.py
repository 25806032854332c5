"""Delegation (the `nested` and `handoff` channels; only when `agents_of(ctx)` is non-empty): the desk is an
`LlmAgent` holding only its own tools, with one `LlmAgent` per delegate in its `sub_agents` (`mode="single_turn"`
for a delegate called as a tool, `mode="chat"` for one handed the conversation)."""

from __future__ import annotations

from typing import Any, Callable

from arena.for_adapters import LegContext, ToolSpec
from arena_builtins.arenas.delegation.channel import AgentSpec, agents_of, own_tools

from .client import AGENT_NAME, adk


def desk_agent(ctx: LegContext, model: Any, tools_of: Callable[[list[ToolSpec]], list[Any]], agent_tool: bool) -> Any:
    """The run's agent: the desk, over the harness's tools (with delegates, its own only) and its delegates.

    `tools_of` builds a list of specs as the adapter's ADK tools; `agent_tool` (tests only) wraps each delegate
    called as a tool in `AgentTool(agent=...)` instead of a single_turn sub-agent."""
    adk_ = adk()
    instructions = ctx.instructions
    delegates = [_delegate_agent(spec, model, tools_of(own_tools(ctx, spec.name)), agent_tool)
                 for spec in agents_of(ctx)]
    wrapped = [d for d, spec in zip(delegates, agents_of(ctx)) if agent_tool and spec.via == "tool"]
    return adk_["LlmAgent"](
        name=AGENT_NAME,
        model=model,
        # A provider, so ADK inserts the text verbatim (no {placeholder} state templating).
        instruction=lambda _readonly_ctx: instructions,
        tools=tools_of(own_tools(ctx, None) if agents_of(ctx) else ctx.tools.specs) + [
            adk_["AgentTool"](agent=d) for d in wrapped],
        **({"sub_agents": [d for d in delegates if all(d is not w for w in wrapped)]} if delegates else {}),
    )


def _delegate_agent(spec: AgentSpec, model: Any, tools: list[Any], agent_tool: bool = False) -> Any:
    """A delegate as ADK builds one: an `LlmAgent` in the desk's `sub_agents`, holding its own tools.

    `via="tool"`: `mode="single_turn"`, which ADK exposes to the parent as a tool named after the agent (one
    `request` argument; `_SingleTurnAgentTool`) and runs inline in the parent's session (`tool_context.run_node`):
    ADK's recommended replacement for `AgentTool`, whose nested session is discarded so it "cannot resume" a paused
    sub-agent (tools/agent_tool.py). `via="handoff"`: `mode="chat"` (a sub-agent's default), reached by ADK's
    automatic `transfer_to_agent(agent_name=...)` tool. (`agent_tool`, tests only: a plain LlmAgent for the desk to
    wrap in `AgentTool(agent=...)`.)"""
    adk_ = adk()
    instructions = spec.instructions
    return adk_["LlmAgent"](
        name=spec.name,
        description=spec.description,
        model=model,
        instruction=lambda _readonly_ctx: instructions,
        tools=tools,
        mode=("single_turn" if not agent_tool else None) if spec.via == "tool" else "chat",
    )
