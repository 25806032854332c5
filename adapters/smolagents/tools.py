"""The harness tools as smolagents `Tool`s (inputs from the JSON schema, `output_type="string"`), each `forward` one
harness call (`ctx.tools.call`), the approval tool's body the adapter's own."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from arena.for_adapters import LegContext, ToolKind, ToolSpec, kit

# The observation the adapter-owned request_approval returns until the human's decision replaces it.
PENDING = "PENDING: waiting for the human's decision on this request"


def tool_inputs(parameters: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """smolagents `Tool.inputs` from a JSON schema: type + description; optional ones are nullable."""
    required = set(parameters.get("required") or [])
    inputs: dict[str, dict[str, Any]] = {}
    for name, prop in (parameters.get("properties") or {}).items():
        entry: dict[str, Any] = {"type": prop.get("type", "any"), "description": prop.get("description") or name}
        if "enum" in prop:
            entry["enum"] = prop["enum"]
        if name not in required:
            entry["nullable"] = True
        inputs[name] = entry
    return inputs


_TOOL_CLASS: Any = None


def tool_class() -> Any:
    """One smolagents `Tool` subclass whose instances wrap one callable each (built once, lazily)."""
    global _TOOL_CLASS
    if _TOOL_CLASS is None:
        from smolagents import Tool

        class HarnessTool(Tool):
            # The signature is generic (**kwargs), as in smolagents' own wrapper tools.
            skip_forward_signature_validation = True
            output_type = "string"

            def __init__(self, spec: ToolSpec, body: Any) -> None:
                self.name = spec.name
                self.description = spec.description
                self.inputs = tool_inputs(spec.parameters)
                self._body = body
                super().__init__()

            def forward(self, **kwargs: Any) -> str:
                return self._body(kwargs)

        _TOOL_CLASS = HarnessTool
    return _TOOL_CLASS


def harness_tools(ctx: LegContext, approval_body: Callable[[LegContext, ToolSpec], Any]) -> list[Any]:
    """Every harness tool of the leg: the approval tool with `approval_body(ctx, spec)`, the others one harness call."""
    HarnessTool = tool_class()

    def harness_body(spec: ToolSpec) -> Any:
        return lambda kwargs: ctx.tools.call(spec.name, kwargs)

    return [
        HarnessTool(s, approval_body(ctx, s) if s.kind is ToolKind.approval else harness_body(s))
        for s in kit.specs_of(ctx)
    ]
