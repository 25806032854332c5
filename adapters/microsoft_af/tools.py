"""The harness tools as the framework's `FunctionTool`s: the approval tool and every gated tool declared
`approval_mode="always_require"` (the framework pauses before running them), the others `never_require`; each body
gets the model's call id through a pass-through function middleware."""

from __future__ import annotations

from typing import Any, Callable

from arena.for_adapters import LegContext, ToolKind

# The tool functions' parameter that receives the framework's FunctionInvocationContext (FunctionTool injects it by
# its annotation; it is no tool argument: the model-visible schema is the spec's `input_model`).
INVOCATION_PARAM = "arena_invocation"


async def call_id_middleware(context: Any, call_next: Any) -> None:
    """A pass-through function middleware. With a function middleware the framework's invocation loop
    (`_tools._auto_invoke_function`) puts the model's `call_id` in the `FunctionInvocationContext.metadata` it hands
    the tool; without one the tool's context carries no id."""
    await call_next()


def call_id(invocation: Any) -> str | None:
    """The framework's id for the call being executed (the provider's call_id), from the tool's context."""
    metadata = getattr(invocation, "metadata", None) or {}
    value = metadata.get("call_id")
    return value if isinstance(value, str) else None


def injected(af: Any, func: Any) -> Any:
    """`func` with its INVOCATION_PARAM annotated as the FunctionInvocationContext the framework injects."""
    func.__annotations__[INVOCATION_PARAM] = af.FunctionInvocationContext
    return func


def tool(af: Any, spec: Any, ctx: LegContext, grant: Callable[[], str | None]) -> Any:
    """A FunctionTool from the harness's spec. `grant`: the next decision text the approval body returns (None when
    the harness gave none)."""
    name = spec.name
    if spec.kind is ToolKind.approval:

        async def approval_body(arena_invocation: Any = None, **kwargs: Any) -> str:
            granted = grant()
            if granted is not None:
                return granted
            # Ran without a decision from the harness: let the harness see the execution.
            return await ctx.tools.acall(name, kwargs, call_id=call_id(arena_invocation))

        return af.FunctionTool(
            name=name,
            description=spec.description,
            func=injected(af, approval_body),
            input_model=dict(spec.parameters),
            approval_mode="always_require",
        )

    async def call(arena_invocation: Any = None, **kwargs: Any) -> str:
        return await ctx.tools.acall(name, kwargs, call_id=call_id(arena_invocation))

    # A gated tool (approval_gate's book_room) uses the same tool-level approval: the framework runs
    # its body (one harness call) only after an approval response for that call.
    return af.FunctionTool(
        name=name,
        description=spec.description,
        func=injected(af, call),
        input_model=dict(spec.parameters),
        approval_mode="always_require" if spec.requires_approval else "never_require",
    )
