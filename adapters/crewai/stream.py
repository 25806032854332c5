"""Streamed legs (`ctx.stream`): the flow read as CrewAI's frame stream to its end (`Flow.astream()`, or a resume
wrapped in astream's own parts), what the frames tell handed over."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from arena.for_adapters import LegContext, kit


def resume_stream(resume: Callable[[], Awaitable[Any]]) -> Any:
    """`resume_async` as a frame stream: CrewAI streams `kickoff` (`Flow.astream`) but not `resume`, so this
    is `astream`'s own construction around the resume, the same sink on CrewAI's event bus."""
    from crewai.types.streaming import AsyncStreamSession
    from crewai.utilities.streaming import create_async_frame_generator, create_frame_streaming_state

    holder: list[Any] = []
    sessions: list[Any] = []
    state = create_frame_streaming_state(holder, use_async=True)
    session = AsyncStreamSession(async_iterator=create_async_frame_generator(state, resume, sessions))
    sessions.append(session)
    return session


async def streamed(session: Any, ctx: LegContext) -> Any:
    """Read the flow's frame stream to its end, handing over what it tells; the flow's result (a pause is
    CrewAI's `HumanFeedbackPending`, as `kickoff_async` returns it)."""
    approval = kit.approval_tool_name(ctx)
    heads: dict[str, str] = {}  # call id -> tool name, from the model's streamed tool-call deltas
    async for frame in session:
        _tell(ctx, frame, approval, heads)
    return session.result


def _tell(ctx: LegContext, frame: Any, approval: str | None, heads: dict[str, str]) -> None:
    """Hand over what one frame tells: the model's tool calls (once its answer is complete: the tool-call
    `llm_call_completed`, with the calls' ids), a tool's output (`tool_usage_finished`; CrewAI's tool events
    carry no call id), the pause (`flow_paused`, whose flow state names the approval call the step stopped at)."""
    data = frame.data
    if frame.type == "llm_stream_chunk" and data.get("tool_call"):
        call = data["tool_call"]
        if call.get("id") and call["function"].get("name"):
            heads.setdefault(call["id"], call["function"]["name"])
    elif frame.type == "llm_call_completed" and data.get("call_type") == "tool_call":
        # the calls' names come from the deltas: a frame's data is cut at depth 5 (to_serializable), so the
        # completed answer's `function.name` arrives as a repr ("'search_rooms'")
        for call in data.get("response") or []:
            kit.tell_call(ctx, heads.get(call["id"], call["function"]["name"]), call["id"])
    elif frame.type == "tool_usage_finished" and data.get("tool_name") != approval:
        # the approval tool's "output" is this adapter's placeholder that ends the turn, not a result
        kit.tell_result(ctx, data["tool_name"], str(data.get("output")))
    elif frame.type == "flow_paused":
        pending = (data.get("state") or {}).get("pending")
        if pending:
            kit.tell_pause(ctx, pending["name"], pending["id"])
