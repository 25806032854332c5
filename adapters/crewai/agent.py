"""The CrewAI agent a flow step runs: built per step on the harness's model and tools, kicked off over the
conversation the flow keeps."""

from __future__ import annotations

from typing import Any

from arena.for_adapters import LegContext, kit

from .client import llm_for
from .outcome import step_outcome
from .tools import build_tool

MAX_ITER = 20


class Runtime:
    """What a flow needs in this process and never persists: the context and the agent factory."""

    def __init__(self, ctx: LegContext) -> None:
        self.ctx = ctx

    def agent(self) -> Any:
        from crewai import Agent

        ctx = self.ctx
        llm = llm_for(ctx)
        return Agent(
            role="Assistant",
            goal="Complete the user's request with the tools provided, following your instructions.",
            backstory=ctx.instructions,
            llm=llm,
            tools=[build_tool(spec, ctx) for spec in kit.specs_of(ctx)],
            allow_delegation=False,
            cache=False,  # a cached tool result would skip the harness's tool log
            max_iter=MAX_ITER,
            verbose=False,
        )

    async def agent_step(self, state: Any) -> dict[str, Any]:
        """Run the agent over the conversation until it finishes or calls the approval tool."""
        # no approval tool (approval_gate): CrewAI has no tool-level gate, so nothing pauses
        approval = kit.approval_tool_name(self.ctx)
        output = await self.agent().kickoff_async(list(state.conversation))
        return step_outcome(state, output, approval)
