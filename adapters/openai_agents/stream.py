"""A streamed leg: `Runner.run_streamed` with its events read to the end, each tool call and tool output they tell
handed over (`ctx.told`), a delegate's nested stream too; the pause told from the result's `interruptions`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from arena.for_adapters import LegContext, kit

from .client import MAX_TURNS, run_config
from .context import run_kwargs

if TYPE_CHECKING:
    from .adapter import OpenAIAgentsAdapter


async def run_streamed(adapter: OpenAIAgentsAdapter, agent: Any, run_input: Any, ctx: LegContext,
                       names: dict[str, str] | None, session: Any) -> Any:
    """`Runner.run_streamed` with its events read to the end, handing over each tool call and tool output they tell
    (`names`: the held calls' tools, whose outputs a resumed stream gives by call id only)."""
    from agents import Runner

    result = Runner.run_streamed(agent, run_input, run_config=run_config(), max_turns=MAX_TURNS,
                                 session=session, **run_kwargs(ctx))
    names = dict(names or {})
    adapter._nested_names.update(names)
    async for event in result.stream_events():
        told(event, ctx, names)
    # the SDK streams no event for an approval ("approvals represent interruptions, not streamed items"): a
    # streamed run tells it on its result once the stream ends, `interruptions`, as its docs' streaming loop reads
    for item in getattr(result, "interruptions", None) or []:
        raw = item.raw_item
        kit.tell_pause(ctx, str(getattr(item, "tool_name", None) or field(raw, "name")),
                       field(raw, "call_id") or field(raw, "id"))
    return result


def told(event: Any, ctx: LegContext, names: dict[str, str]) -> None:
    """Hand over a stream event that tells a tool call or a tool output."""
    if event.type != "run_item_stream_event":
        return
    raw = event.item.raw_item
    call_id = field(raw, "call_id") or field(raw, "id")
    if event.name == "tool_called":
        names[str(call_id)] = str(field(raw, "name"))
        kit.tell_call(ctx, names[str(call_id)], call_id)
    elif event.name == "tool_output":
        kit.tell_result(ctx, names.get(str(call_id), "?"), str(getattr(event.item, "output", "")), call_id)


def nested_stream(adapter: OpenAIAgentsAdapter) -> Any:
    """The callback for as_tool(on_stream=...): a delegate's streamed run, told like the run's own stream."""

    async def on_stream(event: Any) -> None:
        if adapter._ctx is not None:
            told(event["event"], adapter._ctx, adapter._nested_names)

    return on_stream


def field(raw: Any, key: str) -> Any:
    """A field of a run item's raw item, a model object or a dict."""
    return raw.get(key) if isinstance(raw, dict) else getattr(raw, key, None)
