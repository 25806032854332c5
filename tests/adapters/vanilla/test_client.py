"""The reference adapter's own client call."""

from __future__ import annotations

import asyncio
import importlib

from arena_builtins.adapters.vanilla import create


def test_the_request_through_client_post_sends_the_bytes_the_sdk_would_send():
    """`create` skips the SDK's request transform and answer models, never what goes on the wire: the body is
    byte for byte the one `chat.completions.create(messages=..., tools=...)` sends, with tool calls, a null
    content and no tools, and the answer's message comes back as the JSON the server sent."""
    sdk = importlib.import_module("openai._base_client")
    httpx = getattr(sdk, "httpx2", None) or sdk.httpx  # the HTTP client package this release of the SDK uses
    from openai import AsyncOpenAI, DefaultAsyncHttpxClient

    bodies: list[bytes] = []

    def answer(request):
        bodies.append(request.content)
        return httpx.Response(200, json={"id": "c", "object": "chat.completion", "created": 0, "model": "m", "choices": [
            {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "ok"}}]})

    client = AsyncOpenAI(api_key="unused", base_url="http://127.0.0.1:9/v1",
                         http_client=DefaultAsyncHttpxClient(transport=httpx.MockTransport(answer)))
    messages = [{"role": "system", "content": "s"}, {"role": "user", "content": "book R101 — 2 nights"},
                {"role": "assistant", "content": None, "tool_calls": [
                    {"id": "call_1", "type": "function", "function": {"name": "book_room", "arguments": '{"room_id": "R101"}'}}]},
                {"role": "tool", "tool_call_id": "call_1", "content": "booked"}]
    tools = [{"type": "function", "function": {"name": "book_room", "description": "Book a room.", "parameters": {
        "type": "object", "properties": {"room_id": {"type": "string"}}, "required": ["room_id"]}}}]

    async def both(tools: list) -> None:
        await client.chat.completions.create(model="m", messages=messages, tools=tools)
        assert (await create(client, "m", messages, tools))["content"] == "ok"

    asyncio.run(both(tools))
    asyncio.run(both([]))
    assert bodies[0] == bodies[1] and b'"tool_calls"' in bodies[0] and b'"content":null' in bodies[0]
    assert bodies[2] == bodies[3]
