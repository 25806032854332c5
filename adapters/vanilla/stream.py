"""A streamed leg's request (`ctx.stream`): the same Chat Completions request, streamed and read to its end."""

from __future__ import annotations

from typing import Any

from arena.for_adapters import LegContext, kit


async def create_streamed(client: Any, model: str, messages: list[dict[str, Any]], tools: list[dict[str, Any]]
                          ) -> tuple[str | None, list[dict[str, Any]]]:
    """The same request streamed (`stream=True`), read to its end: the answer's text and its tool calls, each
    assembled from its deltas by index (the id and name in the first, the arguments split over the rest)."""
    stream = await client.chat.completions.create(model=model, messages=[], tools=[], stream=True,
                                                  stream_options={"include_usage": True},
                                                  extra_body={"messages": messages, "tools": tools})
    text: list[str] = []
    calls: dict[int, dict[str, Any]] = {}
    async for chunk in stream:
        for choice in chunk.choices:
            if choice.delta.content:
                text.append(choice.delta.content)
            for delta in choice.delta.tool_calls or []:
                call = calls.setdefault(delta.index, {"id": None, "type": "function",
                                                      "function": {"name": "", "arguments": ""}})
                call["id"] = delta.id or call["id"]
                if delta.function is not None:
                    call["function"]["name"] += delta.function.name or ""
                    call["function"]["arguments"] += delta.function.arguments or ""
    return ("".join(text) if text or not calls else None), [calls[i] for i in sorted(calls)]


async def streamed_turn(client: Any, ctx: LegContext, messages: list[dict[str, Any]], tools: list[dict[str, Any]]
                        ) -> tuple[str | None, list[dict[str, Any]]]:
    """One turn of the model, streamed: its text and tool calls, each call told once the stream has ended."""
    content, calls = await create_streamed(client, ctx.model.name, messages, tools)
    for call in calls:
        kit.tell_call(ctx, call["function"]["name"], call["id"])
    return content, calls
