"""The harness's tools as LangChain `StructuredTool`s (JSON-schema `args_schema`) around one `ctx.tools.acall`: the
approval tool, whose body calls `interrupt()`; a body-pausing tool, which interrupts between its prepare and commit
steps; and the gated tools, listed in a HumanInTheLoopMiddleware."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from arena.for_adapters import Decision, LegContext, ToolKind, ToolSpec, bodypause, kit

if TYPE_CHECKING:
    from langchain.agents.middleware import InterruptOnConfig


def build_tools(ctx: LegContext) -> list[Any]:
    """The single agent's tools (no delegates), in the harness's order, each by its kind."""
    return [
        approval_tool(spec) if spec.kind is ToolKind.approval
        else _body_tool(spec, ctx) if spec.body_pause else harness_tool(spec, ctx)
        for spec in kit.specs_of(ctx)
    ]


def gate(gated: list[str], interrupt_mode: str) -> list[Any]:
    """HumanInTheLoopMiddleware over the gated tools an agent holds (none: no middleware)."""
    if not gated:
        return []
    from langchain.agents.middleware import HumanInTheLoopMiddleware

    gate: dict[str, bool | InterruptOnConfig] = {
        name: {"allowed_decisions": ["approve", "edit", "reject"]} for name in gated}
    # batched is the middleware's default, and its only mode before langchain had `interrupt_mode`
    # (`-a langgraph@1.1.10` resolves such a langchain): pass the mode only when it is another
    mode: dict[str, Any] = {} if interrupt_mode == "batched" else {"interrupt_mode": interrupt_mode}
    return [HumanInTheLoopMiddleware(interrupt_on=gate, **mode)]


def harness_tool(spec: ToolSpec, ctx: LegContext) -> Any:
    """A LangChain tool whose whole body is one harness call (which logs it), under LangGraph's id for the call."""
    from langchain_core.tools import StructuredTool
    from langgraph.prebuilt import ToolRuntime

    async def run(runtime: Any, **kwargs: Any) -> str:
        return await ctx.tools.acall(spec.name, kwargs, call_id=runtime.tool_call_id)

    # ToolNode injects `runtime` (ToolRuntime: this call's id) by the annotation; the model's schema is args_schema.
    run.__annotations__ = {"runtime": ToolRuntime, "kwargs": Any, "return": str}
    return StructuredTool(name=spec.name, description=spec.description, args_schema=spec.parameters, coroutine=run)


def _body_tool(spec: ToolSpec, ctx: LegContext) -> Any:
    """A tool whose body pauses: prepare, `interrupt()` with what it will charge, then commit or abort.

    On resume LangGraph runs the tool again from its first line; `interrupt()` then returns the resume
    value at once. Whatever ran before it (the prepare step) runs again: the tool log shows it.
    """
    from langchain_core.tools import StructuredTool
    from langgraph.prebuilt import ToolRuntime
    from langgraph.types import interrupt

    async def body(runtime: Any, **kwargs: Any) -> str:
        call_id = runtime.tool_call_id  # LangGraph's id for this call (the model's), as ToolNode hands it over
        prepared = await bodypause.prepare(ctx.tools, spec, kwargs, call_id=call_id)
        if not bodypause.ready(prepared):
            return bodypause.refused(prepared)
        shown = bodypause.pending(spec, kwargs, prepared, call_id)
        answer = interrupt({"tool": shown.tool, "args": shown.args, "call_id": shown.call_id})
        return await bodypause.finish(ctx.tools, spec, prepared, Decision.model_validate(answer), call_id=call_id)

    body.__annotations__ = {"runtime": ToolRuntime, "kwargs": Any, "return": str}
    return StructuredTool(name=spec.name, description=spec.description, args_schema=spec.parameters, coroutine=body)


def approval_tool(spec: ToolSpec) -> Any:
    """The approval tool: `interrupt()` pauses the graph; on resume it returns the human's decision."""
    from langchain_core.tools import StructuredTool
    from langgraph.prebuilt import ToolRuntime
    from langgraph.types import interrupt

    async def approve(runtime: Any, **kwargs: Any) -> str:
        answer = interrupt({"tool": spec.name, "args": kwargs, "call_id": runtime.tool_call_id})
        return Decision.model_validate(answer).as_text()

    # ToolNode injects `runtime` (it carries this call's id) when the annotation is ToolRuntime.
    approve.__annotations__ = {"runtime": ToolRuntime, "kwargs": Any, "return": str}
    return StructuredTool(name=spec.name, description=spec.description, args_schema=spec.parameters, coroutine=approve)
