"""The harness's tools as agno `Function`s: one harness call each, with agno's own HITL flag where the harness
needs a pause (external execution on the approval tool, requires_confirmation on a gated one)."""

from __future__ import annotations

from typing import Any

from arena.for_adapters import LegContext, ToolKind, ToolSpec

MAX_TOOL_CALLS = 40  # agno's tool_call_limit for one run (a loop guard, far above any item's needs)


def function_for(spec: ToolSpec, ctx: LegContext) -> Any:
    """The harness tool as an agno Function, with agno's own HITL flag where the harness needs a pause."""
    from agno.tools.function import Function

    async def call(fc: Any, **kwargs: Any) -> str:
        # agno injects its FunctionCall as `fc`; its call_id is the model's id for the call. For the approval
        # tool this body never runs while agno honours external_execution; if it ever did, the harness logs it.
        return str(await ctx.tools.acall(spec.name, kwargs, call_id=fc.call_id))

    return Function(
        name=spec.name,
        description=spec.description,
        parameters=dict(spec.parameters),
        entrypoint=call,
        skip_entrypoint_processing=True,  # the spec's schema is sent as it is
        external_execution=True if spec.kind is ToolKind.approval else None,
        requires_confirmation=True if (spec.requires_approval and spec.kind is not ToolKind.approval) else None,
    )
