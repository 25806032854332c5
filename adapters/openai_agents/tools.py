"""The harness tools as the SDK's `FunctionTool`s: the approval tool and the gated tools declared with
`needs_approval=True` (the SDK pauses on these), the approval tool's body adapter-owned (it returns the decision),
every other body one harness call."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from arena.for_adapters import DecisionKind, LegContext, ToolKind, ToolSpec, kit, parse_args

if TYPE_CHECKING:
    from .adapter import OpenAIAgentsAdapter


def pause_names(ctx: LegContext) -> set[str]:
    """The approval tool (human_in_the_loop) or the gated tools (approval_gate): the SDK pauses on these."""
    return {s.name for s in kit.specs_of(ctx) if s.kind is ToolKind.approval or s.requires_approval}


def function_tools(adapter: OpenAIAgentsAdapter, specs: list[ToolSpec], ctx: LegContext) -> list[Any]:
    from agents import FunctionTool

    return [
        FunctionTool(
            name=spec.name,
            description=spec.description,
            params_json_schema=dict(spec.parameters),
            on_invoke_tool=invoker(adapter, spec, ctx),
            # The spec's schema is passed unchanged, as vanilla sends it.
            strict_json_schema=False,
            needs_approval=spec.name in adapter._pause_names,
        )
        for spec in specs
    ]


def invoker(adapter: OpenAIAgentsAdapter, spec: ToolSpec, ctx: LegContext) -> Any:
    if spec.kind is ToolKind.approval:

        async def approval_body(tool_context: Any, raw_args: str) -> str:
            # Runs only once the SDK has an approval for this call. The decision is the result.
            if adapter._decision is None or adapter._decision.kind is DecisionKind.deny:
                raise RuntimeError(f"{spec.name} was executed by the SDK without an approval")
            return adapter._decision.as_text()

        return approval_body

    async def harness_tool(tool_context: Any, raw_args: str) -> str:
        # The SDK passes its ToolContext (the first parameter is not annotated RunContextWrapper), whose
        # tool_call_id is the call's id as the model gave it.
        call_id = getattr(tool_context, "tool_call_id", None)
        return await ctx.tools.acall(spec.name, parse_args(raw_args), call_id=call_id)

    return harness_tool
