"""The harness side of a tool whose body pauses (prepare, ask the human, commit or abort).

An adapter whose framework can pause inside a tool's body builds the tool as: `prepare(...)`, then
its framework's pause carrying `pending(...)`, then `finish(...)` with the human's decision. Each step
is one harness call (`<tool>.prepare`, `<tool>.commit`, `<tool>.abort`), logged where it executes, so
whether the framework runs the code before its pause again on resume shows in the tool log.
"""

from __future__ import annotations

import json
from typing import Any

from arena.tools.box import with_call_id as _id
from arena.types import Decision, PendingRequest, ToolSpec


def _parse(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except (json.JSONDecodeError, TypeError):
        return {"status": "ERROR", "error": str(text)}
    return value if isinstance(value, dict) else {"status": "ERROR", "error": str(text)}


async def prepare(tools: Any, spec: ToolSpec, args: dict[str, Any], call_id: str | None = None) -> dict[str, Any]:
    """Run the body up to its pause; `status` is PREPARED when the human must now be asked. `call_id`: the
    framework's id for the call, where it gives the tool one (see `ToolBox.call`)."""
    return _parse(await tools.acall(spec.phase("prepare"), args, **_id(call_id)))


def prepare_sync(tools: Any, spec: ToolSpec, args: dict[str, Any], call_id: str | None = None) -> dict[str, Any]:
    return _parse(tools.call(spec.phase("prepare"), args, **_id(call_id)))


def ready(prepared: dict[str, Any]) -> bool:
    """Whether the body reached its pause (otherwise `prepared` is the tool's answer: a refusal)."""
    return prepared.get("status") == "PREPARED"


def pending(spec: ToolSpec, args: dict[str, Any], prepared: dict[str, Any], call_id: str | None = None) -> PendingRequest:
    """What the human is shown: the model's call, and what it will charge."""
    return PendingRequest(tool=spec.name, args={**args, "amount": prepared.get("amount")}, call_id=call_id)


async def finish(tools: Any, spec: ToolSpec, prepared: dict[str, Any], decision: Decision,
                 call_id: str | None = None) -> str:
    """Commit on an approval, abort otherwise; returns what the model reads as the tool's result."""
    if decision.approved:
        return str(await tools.acall(spec.phase("commit"), {"intent": prepared.get("intent")}, **_id(call_id)))
    await tools.acall(spec.phase("abort"), {"intent": prepared.get("intent")}, **_id(call_id))
    return decision.as_text()


def finish_sync(tools: Any, spec: ToolSpec, prepared: dict[str, Any], decision: Decision,
                call_id: str | None = None) -> str:
    if decision.approved:
        return str(tools.call(spec.phase("commit"), {"intent": prepared.get("intent")}, **_id(call_id)))
    tools.call(spec.phase("abort"), {"intent": prepared.get("intent")}, **_id(call_id))
    return decision.as_text()


def refused(prepared: dict[str, Any]) -> str:
    """The tool's answer when the body did not reach its pause."""
    return json.dumps(prepared, sort_keys=True)
