"""The tools vanilla's model is offered, as Chat Completions function tools: the harness's (`ctx.tools`) and one per
delegate (`agents_of(ctx)`); and how one call of the model runs, or is answered without running."""

from __future__ import annotations

from typing import Any

from arena.for_adapters import Decision, LegContext, ToolKind, ToolSpec, kit, parse_args
from arena_builtins.arenas.delegation.channel import AgentSpec, delegates_of


def function_tools(specs: list[ToolSpec]) -> list[dict[str, Any]]:
    """The harness's tools as the model sees them."""
    return [
        {"type": "function", "function": {"name": s.name, "description": s.description, "parameters": s.parameters}}
        for s in specs
    ]


def pause_names(specs: list[ToolSpec]) -> set[str]:
    """The tools a call of which pauses the run: the approval tool, the gated tools and the body-pausing tools."""
    return {s.name for s in specs if s.kind is ToolKind.approval or s.requires_approval or s.body_pause}


def delegate_tools(ctx: LegContext, agent: str | None = None) -> list[dict[str, Any]]:
    """An agent's tools for its delegates (the run's own agent's, `agent` None, or a delegate's own): one per agent
    called as a tool (its task as `input`), one `transfer_to_<name>` per agent it hands off to."""
    tools = []
    for a in delegates_of(ctx, agent):
        if a.via == "tool":
            params = {"type": "object", "properties": {"input": {"type": "string", "description": "the task"}},
                      "required": ["input"]}
            tools.append({"type": "function", "function": {"name": a.name, "description": a.description,
                                                           "parameters": params}})
        else:
            tools.append({"type": "function", "function": {
                "name": f"transfer_to_{a.name}", "description": f"Hand the conversation to {a.name}: {a.description}",
                "parameters": {"type": "object", "properties": {}}}})
    return tools


def delegate_of(call: dict[str, Any], ctx: LegContext, agent: str | None = None) -> AgentSpec | None:
    """The delegate a call of an agent (the run's own, `agent` None, or a delegate) reaches (as a tool, or by a
    handoff), if it is one of that agent's."""
    name = call["function"]["name"]
    return next((a for a in delegates_of(ctx, agent)
                 if name == (a.name if a.via == "tool" else f"transfer_to_{a.name}")), None)


class ToolCalls:
    """VanillaAdapter's part that runs the model's calls (a subclass may hand the tools each call's id)."""

    def _tools(self, ctx: LegContext, call_id: str) -> Any:
        """The tools one call of the model runs with (a subclass may hand them the call's id)."""
        return ctx.tools

    async def _run(self, ctx: LegContext, call: dict[str, Any], args: dict[str, Any] | None = None) -> str:
        """Run one call of the model (with `args` when the human edited them); a streamed leg tells its result."""
        name = call["function"]["name"]
        result = str(await self._tools(ctx, call["id"]).acall(
            name, parse_args(call["function"]["arguments"]) if args is None else args))
        kit.tell_result(ctx, name, result, call["id"])
        return result

    @staticmethod
    def _answered(ctx: LegContext, call: dict[str, Any], result: str) -> str:
        """A call answered without running (a decision, a denial): a streamed leg tells it as the call's result."""
        kit.tell_result(ctx, call["function"]["name"], result, call["id"])
        return result

    async def _decided(self, ctx: LegContext, call: dict[str, Any], decision: Decision | None) -> str:
        """Run a call, or answer it with the standing denial that decides it."""
        if decision is not None and not decision.approved:
            return self._answered(ctx, call, decision.as_text())
        return await self._run(ctx, call)
