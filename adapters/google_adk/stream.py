"""Streamed legs (`ctx.stream`): the same Runner with `RunConfig(streaming_mode=StreamingMode.SSE)`.

ADK then yields partial events (LiteLLM's chunks: one per argument delta of each call, with the model's call id, the
aggregated event's own event id and already the long-running flag) before each aggregated one. A UI acts on the
aggregated events (ADK's StreamingMode docs), so only those are told and read for the outcome, which is then the
plain run's.
"""

from __future__ import annotations

import json
from typing import Any

from arena.for_adapters import LegContext, kit

from .client import adk
from .outcome import CONFIRMATION_CALL


def run_config(ctx: LegContext) -> dict[str, Any]:
    """The Runner's extra arguments for the leg: ADK's SSE mode on a streamed leg, nothing on a plain one."""
    adk_ = adk()
    # a streamed leg: ADK's SSE mode, partial events (the model's chunks) besides the aggregated ones
    return {"run_config": adk_["RunConfig"](streaming_mode=adk_["StreamingMode"].SSE)} if ctx.stream else {}


def tell(ctx: LegContext, event: Any, told_calls: set[str]) -> None:
    """Hand over what one event of a streamed leg tells, as a UI acting on ADK's SSE stream reads it.

    Only aggregated (non-partial) events count: ADK's own docs have a UI act on final function calls, and the
    partial events repeat each call chunk by chunk (same call id, no args or partial args, the long-running
    flag already set). Each call is told once by its id. A long-running call is the pause: the approval
    tool's own call, or ADK's adk_request_confirmation, told as the call it holds (originalFunctionCall). A
    function response is a tool's output unless its event asks for that call's confirmation
    (`actions.requested_tool_confirmations`): then it is ADK's placeholder (or the body's interim status)
    that goes with the confirmation request, not a result.
    """
    if event.partial:
        return
    waiting = event.long_running_tool_ids or set()
    for call in event.get_function_calls():
        if call.name == CONFIRMATION_CALL:
            original = (call.args or {}).get("originalFunctionCall") or {}
            if call.id in waiting and original.get("name"):
                kit.tell_pause(ctx, original["name"], original.get("id"))
            continue
        if call.id not in told_calls:
            told_calls.add(call.id)
            kit.tell_call(ctx, call.name, call.id)
        if call.id in waiting:
            kit.tell_pause(ctx, call.name, call.id)
    confirming = event.actions.requested_tool_confirmations or {}
    for response in event.get_function_responses():
        if response.id not in confirming:
            kit.tell_result(ctx, response.name, _response_text(response.response), response.id)


def _response_text(response: Any) -> str:
    """A tool's output as the stream carries it: ADK's {"result": value} envelope opened, else the object."""
    if isinstance(response, dict) and set(response) == {"result"}:
        value = response["result"]
        return value if isinstance(value, str) else json.dumps(value, default=str)
    return json.dumps(response, default=str)
