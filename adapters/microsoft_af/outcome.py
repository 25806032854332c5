"""How a leg ended, from the framework's response: finished with its text, or paused on its
`function_approval_request`s (`user_input_requests`), the state the serialised session and requests."""

from __future__ import annotations

from typing import Any

from arena.for_adapters import LegContext, LegResult, ToolKind
from arena_builtins.arenas.delegation.channel import held_call

from .delegation import holder


def leg_result(response: Any, session: Any, ctx: LegContext) -> LegResult:
    """The leg's result: finished, errored on a user-input request that is no function approval, or suspended on
    the held calls (every gated call of one turn, or the one pause call) with the session and the requests."""
    requests = [c for c in response.user_input_requests if c.type == "function_approval_request"]
    others = [c for c in response.user_input_requests if c.type != "function_approval_request"]
    if others:
        return LegResult.errored(f"the run stopped on user-input requests of type {others[0].type!r}")
    if not requests:
        return LegResult.finished(response.text or "")
    gated = [r for r in requests if r.function_call.name in ctx.gated_tools]
    if len(gated) > 1 and len(gated) == len(requests):  # several gated calls of one turn, held together
        state = {"session": session.to_dict(), "requests": [r.to_dict() for r in requests],
                 "pending": gated[0].function_call.name}
        return LegResult.suspended([held_call(r.function_call.name, r.function_call.parse_arguments() or {},
                                              r.function_call.call_id, holder(ctx, r.function_call.name))
                                    for r in gated],
                                   state)
    pause_tools = [s.name for s in ctx.tools.specs if s.kind is ToolKind.approval or s.requires_approval]
    first = next((r for r in requests if r.function_call.name in pause_tools), requests[0])
    call = first.function_call
    pending = held_call(call.name, call.parse_arguments() or {}, call.call_id, holder(ctx, call.name))
    state = {"session": session.to_dict(), "requests": [r.to_dict() for r in requests], "pending": call.name}
    return LegResult.suspended(pending, state)
