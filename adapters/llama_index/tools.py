"""The harness tools as llama-index `FunctionTool`s built from their JSON schemas, by kind: an ordinary tool's body
is one harness call; the approval tool's body is only the wait (`Context.wait_for_event(HumanResponseEvent)`, it
returns the decision text); a gated tool's body waits, then makes the harness call if approved; a body-pause
tool prepares, waits, then commits or aborts. The call id is llama-index's own (the model's `tool_id`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from arena.for_adapters import DecisionKind, LegContext, ToolKind, ToolSpec, bodypause

from .client import CALL_ID
from .decision import decision_of


def tool_factory(ctx: LegContext, li: dict[str, Any]) -> Callable[[ToolSpec], Any]:
    """What makes one harness tool a FunctionTool for this leg (its body calls ctx.tools)."""
    tools = ctx.tools

    def waiter(spec: ToolSpec, args: dict[str, Any], call_id: str | None, shown: dict[str, Any] | None = None) -> Any:
        return li["InputRequiredEvent"](prefix=f"approve {spec.name}?", tool=spec.name,
                                        args=shown if shown is not None else args, call_id=call_id)

    async def wait(wctx: Any, spec: ToolSpec, args: dict[str, Any], call_id: str | None,
                   shown: dict[str, Any] | None = None) -> Any:
        return await wctx.wait_for_event(
            li["HumanResponseEvent"], waiter_event=waiter(spec, args, call_id, shown),
            waiter_id=call_id, requirements={"call_id": call_id}, timeout=None)

    def function_for(spec: ToolSpec) -> Any:
        if spec.kind is ToolKind.approval:

            async def ask(wctx: Any, **kwargs: Any) -> str:
                event = await wait(wctx, spec, kwargs, CALL_ID.get())
                return decision_of(event).as_text()  # what the model reads

            return ask
        if spec.body_pause:

            async def body(wctx: Any, **kwargs: Any) -> str:
                call_id = CALL_ID.get()
                prepared = await bodypause.prepare(tools, spec, kwargs, call_id=call_id)
                if not bodypause.ready(prepared):
                    return bodypause.refused(prepared)
                shown = {**kwargs, "amount": prepared.get("amount")}
                event = await wait(wctx, spec, kwargs, call_id, shown)
                return await bodypause.finish(tools, spec, prepared, decision_of(event), call_id=call_id)

            return body
        if spec.requires_approval:

            async def gated(wctx: Any, **kwargs: Any) -> str:
                call_id = CALL_ID.get()
                decision = decision_of(await wait(wctx, spec, kwargs, call_id))
                if decision.kind is not DecisionKind.approve:  # deny, edit (not emulated), null
                    return decision.as_text()
                return str(await tools.acall(spec.name, kwargs, call_id=call_id))

            return gated

        async def execute(**kwargs: Any) -> str:
            return str(await tools.acall(spec.name, kwargs, call_id=CALL_ID.get()))

        return execute

    def tool(spec: ToolSpec) -> Any:
        fn = function_for(spec)
        if "wctx" in fn.__code__.co_varnames[: fn.__code__.co_argcount]:
            fn.__annotations__ = {"wctx": li["Context"], "return": str}  # FunctionTool passes the Context
        metadata = li["ToolMetadata"](name=spec.name, description=spec.description,
                                      fn_schema=li["schema_model"](spec))
        return li["FunctionTool"](async_fn=fn, metadata=metadata)

    return tool
