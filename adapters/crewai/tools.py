"""The harness's tools as CrewAI `BaseTool`s (JSON-schema `args_schema`), one `ctx.tools.call` each; the approval
tool a `result_as_answer=True` tool whose body only returns a placeholder: its call ends the agent's turn."""

from __future__ import annotations

from typing import Any

from arena.for_adapters import LegContext, ToolKind, ToolSpec

from .client import crewai_classes

AWAITING = "AWAITING HUMAN APPROVAL: the run pauses here until a person decides."


def _schema_model(spec: ToolSpec) -> Any:
    from crewai.utilities.pydantic_schema_utils import create_model_from_schema

    return create_model_from_schema({"title": f"{spec.name}_args", **spec.parameters})


def build_tool(spec: ToolSpec, ctx: LegContext) -> Any:
    approval = spec.kind is ToolKind.approval

    def call(kwargs: dict[str, Any]) -> str:
        if approval:  # intercepted: never executed by the harness; its call ends the agent's turn
            return AWAITING
        # No call_id: CrewAI runs a native tool call as `tool.run(**args)` (agent_executor.py
        # _execute_single_native_tool_call), and neither the tool nor its hooks' ToolCallHookContext get the id.
        return ctx.tools.call(spec.name, kwargs)

    tool = crewai_classes()["Tool"](
        name=spec.name, description=spec.description, args_schema=_schema_model(spec), result_as_answer=approval
    )
    tool._call = call
    return tool
