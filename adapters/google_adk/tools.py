"""The harness's tools as ADK tools, by kind: plain read/write (`HarnessTool`), the approval tool of each mechanism
(long-running or confirmed), gated (`FunctionTool(require_confirmation=True)`) and body-pausing
(`tool_context.request_confirmation`)."""

from __future__ import annotations

import inspect
from typing import Any, Callable

from arena.for_adapters import Decision, DecisionKind, LegContext, ToolKind, ToolSpec, bodypause

from .client import adk

_JSON_TYPES = {"string": str, "integer": int, "number": float, "boolean": bool, "array": list, "object": dict}


def spec_function(spec: ToolSpec, body: Any, context_type: Any) -> Any:
    """An async function named after the spec whose signature is the spec's arguments (+ tool_context).

    ADK's FunctionTool binds arguments, checks mandatory ones and injects the ToolContext by the
    function's signature, so the generated function carries the schema's parameters as keyword-only
    parameters; the declaration the model sees is the schema itself (SpecFunctionTool).
    """

    properties = spec.parameters.get("properties") or {}
    required = set(spec.parameters.get("required") or [])
    params = [inspect.Parameter("tool_context", inspect.Parameter.KEYWORD_ONLY, annotation=context_type)]
    annotations: dict[str, Any] = {"tool_context": context_type, "return": Any}
    for name, schema in properties.items():
        kind = schema.get("type") if isinstance(schema, dict) else None
        annotation = _JSON_TYPES.get(kind, Any)  # type: ignore[arg-type]  # a None key misses: Any
        default = inspect.Parameter.empty if name in required else None
        params.append(inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation))
        annotations[name] = annotation

    async def call(*, tool_context: Any, **kwargs: Any) -> Any:
        return await body(tool_context, kwargs)

    call.__name__ = call.__qualname__ = spec.name
    call.__doc__ = spec.description
    call.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    call.__annotations__ = annotations
    call.__arena_spec__ = spec  # type: ignore[attr-defined]
    return call


def build_tools(ctx: LegContext, specs: list[ToolSpec], approval_tool: Callable[[ToolSpec], Any]) -> list[Any]:
    """Each spec as its ADK tool; the approval tool is the adapter's own mechanism (`approval_tool`)."""
    adk_ = adk()
    tools = []
    for spec in specs:
        if spec.kind is ToolKind.approval:
            tools.append(approval_tool(spec))
        elif spec.requires_approval:
            tools.append(gated_tool(spec, ctx))
        elif spec.body_pause:
            tools.append(body_tool(spec, ctx))
        else:
            tools.append(adk_["HarnessTool"](spec, ctx))
    return tools


def long_running_approval_tool(spec: ToolSpec, interim: Any) -> Any:
    """google_adk's approval tool: a LongRunningFunctionTool whose function returns `interim` at once."""
    adk_ = adk()

    async def pending(tool_context: Any, args: dict[str, Any]) -> Any:
        return interim

    return adk_["SpecLongRunningTool"](spec_function(spec, pending, adk_["ToolContext"]))


def confirmed_approval_tool(spec: ToolSpec) -> Any:
    """google_adk_confirm's approval tool: a FunctionTool(require_confirmation=True) returning the payload."""
    adk_ = adk()

    async def confirmed(tool_context: Any, args: dict[str, Any]) -> str:
        # ADK runs this only once the call was confirmed; the decision travels in the payload.
        confirmation = tool_context.tool_confirmation
        payload = confirmation.payload if confirmation is not None else None
        return payload if isinstance(payload, str) else Decision(kind=DecisionKind.approve).as_text()

    return adk_["SpecFunctionTool"](spec_function(spec, confirmed, adk_["ToolContext"]), require_confirmation=True)


def body_tool(spec: ToolSpec, ctx: LegContext) -> Any:
    """A tool whose body pauses: prepare, then `tool_context.request_confirmation(payload=amount)`.

    ADK pauses on the confirmation request and, once it is answered, runs the tool again from its
    first line with `tool_context.tool_confirmation` set: commit if confirmed, abort if not.
    """
    adk_ = adk()

    async def run(tool_context: Any, args: dict[str, Any]) -> Any:
        # the same id on the run after the confirmation: ADK rebuilds the ToolContext from the original call
        call_id = tool_context.function_call_id
        prepared = await bodypause.prepare(ctx.tools, spec, args, call_id=call_id)
        if not bodypause.ready(prepared):
            return bodypause.refused(prepared)
        confirmation = tool_context.tool_confirmation
        if confirmation is None:
            tool_context.request_confirmation(hint=f"Approve charging ${prepared.get('amount')}",
                                              payload={"amount": prepared.get("amount")})
            return {"status": "awaiting the traveller's confirmation"}
        text = confirmation.payload if isinstance(confirmation.payload, str) else ""
        decision = Decision(kind=DecisionKind.approve) if confirmation.confirmed else Decision(
            kind=DecisionKind.deny, text=text.removeprefix("DENIED").lstrip(": "))
        return await bodypause.finish(ctx.tools, spec, prepared, decision, call_id=call_id)

    return adk_["SpecFunctionTool"](spec_function(spec, run, adk_["ToolContext"]))


def gated_tool(spec: ToolSpec, ctx: LegContext) -> Any:
    """A gated harness tool: ADK asks for confirmation first, and runs the harness call only if confirmed."""
    adk_ = adk()

    async def run(tool_context: Any, args: dict[str, Any]) -> str:
        return await ctx.tools.acall(spec.name, args, call_id=tool_context.function_call_id)

    return adk_["SpecFunctionTool"](spec_function(spec, run, adk_["ToolContext"]), require_confirmation=True)
