"""vanilla's model request: the one request the loop makes, through the official `openai` client (kit.openai_client)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from arena.for_adapters import LegContext


async def create(client: Any, model: str, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> dict[str, Any]:
    """A Chat Completions request through the SDK's own request path (`client.post`: its base URL, headers, auth
    and retries), answered as the JSON the server sent: the answer's message as a dict.

    The typed `chat.completions.create` walks every message and tool on every call to produce the bytes the dicts
    already are, and builds a model of every field of the answer that the loop then turns back into dicts; the
    bytes on the wire are the same (tests/adapters/vanilla/test_client.py compares them)."""
    body: dict[str, Any] = {"model": model, "messages": messages, "tools": tools}
    answer = await client.post("/chat/completions", body=body, cast_to=object)  # object: the JSON as it came
    message: dict[str, Any] = answer["choices"][0]["message"]
    return message


async def model_turn(client: Any, ctx: LegContext, messages: list[dict[str, Any]], tools: list[dict[str, Any]]
                     ) -> tuple[str | None, list[dict[str, Any]]]:
    """One turn of the model, not streamed: the answer's text and its tool calls."""
    message = await create(client, ctx.model.name, messages, tools)
    content = message.get("content")
    calls = [{"id": tc["id"],  # in the order the SDK's typed answer gave them: the same bytes sent back
              "function": {"arguments": tc["function"]["arguments"], "name": tc["function"]["name"]},
              "type": tc.get("type", "function")}
             for tc in message.get("tool_calls") or []]
    return content, calls
