"""The harness tools as pydantic-ai tools (`Tool.from_schema`), by kind: the approval tool deferred
(`CallDeferred`), a gated tool `requires_approval=True`, a pausing body (`ApprovalRequired`), and an
ordinary call; each body calls the leg's tool box through `LegTools`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from arena.for_adapters import Decision, ToolKind, ToolSpec, bodypause

if TYPE_CHECKING:
    from collections.abc import Callable


class LegTools:
    """The tool box the agent's tools call, pointed at each leg's own by `use`."""

    def __init__(self) -> None:
        self._tools: Any = None

    def use(self, tools: Any) -> None:
        self._tools = tools

    @property
    def specs(self) -> Any:
        return self._tools.specs

    def call(self, name: str, args: dict[str, Any], call_id: str | None = None) -> str:
        return str(self._tools.call(name, args, call_id=call_id))

    async def acall(self, name: str, args: dict[str, Any], call_id: str | None = None) -> str:
        return str(await self._tools.acall(name, args, call_id=call_id))


def body_tool(spec: ToolSpec, tools: Any) -> Any:
    """A tool whose body pauses: prepare, then `ApprovalRequired` until the call is approved; pydantic-ai
    calls the function again (from the top) once a run is given the approval, which then commits."""
    from pydantic_ai import ApprovalRequired, RunContext, Tool

    async def body(run: RunContext, **kwargs: Any) -> str:
        call_id = run.tool_call_id  # pydantic-ai's id for this call (the model's)
        prepared = await bodypause.prepare(tools, spec, kwargs, call_id=call_id)
        if not bodypause.ready(prepared):
            return bodypause.refused(prepared)
        if not run.tool_call_approved:
            raise ApprovalRequired(metadata={"amount": prepared.get("amount")})
        return await bodypause.finish(tools, spec, prepared, Decision(kind="approve"), call_id=call_id)

    return Tool.from_schema(body, name=spec.name, description=spec.description, json_schema=spec.parameters,
                            takes_ctx=True)


def harness_tool(spec: ToolSpec, tools: Any) -> Any:
    """One harness tool as a pydantic-ai `Tool`, its body calling `tools` (the leg's tool box)."""
    from pydantic_ai import CallDeferred, RunContext, Tool

    function: Callable[..., Any]  # the approval tool's `defer` or another tool's `execute`
    if spec.kind is ToolKind.approval:

        def defer(**kwargs: Any) -> str:
            # The human answers this call outside the run: pydantic-ai ends the run here.
            # kind="question": the call asks the user for content (their decision).
            try:
                deferred = CallDeferred(kind="question")
            except TypeError:  # pydantic-ai before 2.68 (`-a pydantic_ai@2.66.0`): no kinds yet
                deferred = CallDeferred()
            raise deferred

        function, takes_ctx = defer, False
    elif spec.body_pause:
        return body_tool(spec, tools)
    else:

        async def execute(run: RunContext, **kwargs: Any) -> str:
            return await tools.acall(spec.name, kwargs, call_id=run.tool_call_id)

        function, takes_ctx = execute, True  # RunContext.tool_call_id: pydantic-ai's id for the call
    tool = Tool.from_schema(function, name=spec.name, description=spec.description, json_schema=spec.parameters,
                            takes_ctx=takes_ctx)
    # A gated tool: pydantic-ai's own tool-level approval (`Tool(requires_approval=True)`; `from_schema`
    # has no such parameter, the attribute is what `Tool.tool_def` reads to make the kind 'unapproved').
    # pydantic-ai then never calls the function until a run is given an approval for that call.
    tool.requires_approval = spec.requires_approval
    return tool
