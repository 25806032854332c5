"""A leg's run: `agent.run(task)`, or in a streamed leg `agent.run(task, stream=True)` read to its end, each ToolCall
and ToolOutput it yields handed over (`ctx.told`)."""

from __future__ import annotations

from typing import Any

from arena.for_adapters import LegContext, kit


def run_agent(agent: Any, task: str, ctx: LegContext, reset: bool = True) -> Any:
    """`agent.run(task)`, or in a streamed leg `agent.run(task, stream=True)` read to its end, handing over each
    ToolCall and ToolOutput it yields; the final answer either way (a streamed run's FinalAnswerStep)."""
    if not ctx.stream:
        return agent.run(task, reset=reset)
    from smolagents.agents import ToolOutput
    from smolagents.memory import FinalAnswerStep, ToolCall

    output = None
    for event in agent.run(task, stream=True, reset=reset):
        if isinstance(event, ToolCall):
            kit.tell_call(ctx, event.name, event.id)
        elif isinstance(event, ToolOutput):
            kit.tell_result(ctx, event.tool_call.name, event.observation, event.id)
        elif isinstance(event, FinalAnswerStep):
            output = event.output
    return output
