"""What adapters' model clients can share across items: one TLS context (for adapter authors: build the
framework's OpenAI client on `async_client()`).

Every item builds its own HTTP client (clients are bound to the item's event loop and must not carry
state between items), and building one loads the system's CA certificates again — the largest part
of the harness's per-item cost with a fast model (bench/speed.py). The TLS context holds no run
state, so one is built once and shared.
"""

from __future__ import annotations

import ssl
import threading
from typing import Any

# What an HTTP client imports only when it first sends a request or reads an answer.
LAZY_MODULES = ("openai.lib.streaming.chat", "anyio._backends._asyncio", "anyio.streams.memory", "jiter")

_LOCK = threading.Lock()
_CONTEXT: ssl.SSLContext | None = None


def tls() -> ssl.SSLContext:
    """The default verifying TLS context, built once."""
    global _CONTEXT
    with _LOCK:
        if _CONTEXT is None:
            import certifi

            _CONTEXT = ssl.create_default_context(cafile=certifi.where())
        return _CONTEXT


def async_client(**kwargs: Any) -> Any:
    """A fresh HTTP client for one item's `openai` client (the openai SDK's defaults), on the shared TLS context.

    It reads no proxy settings from the environment (`trust_env=False`): its requests go to the harness's own
    loopback server, which an `HTTP_PROXY` without a `NO_PROXY` would otherwise send to the proxy; and reading
    them decoded every environment variable again for each item's client."""
    from openai import DefaultAsyncHttpxClient

    return DefaultAsyncHttpxClient(verify=tls(), **{"trust_env": False, **kwargs})


def client(**kwargs: Any) -> Any:
    """The blocking counterpart of `async_client()`, for a framework that calls the model synchronously, or that
    builds a blocking client beside the async one unless it is given one. Left to build its own, such a client
    loads the CA certificates again for every item: tens of milliseconds of CPU each time."""
    from openai import DefaultHttpxClient

    return DefaultHttpxClient(verify=tls(), **{"trust_env": False, **kwargs})


# A chat answer with every part a scripted answer has (text, a tool call, usage), read once by `warm()`.
_ANSWER: dict[str, Any] = {
    "id": "chatcmpl-warm", "object": "chat.completion", "created": 0, "model": "scripted",
    "choices": [{"index": 0, "finish_reason": "tool_calls", "logprobs": None, "message": {
        "role": "assistant", "content": "", "refusal": None,
        "tool_calls": [{"id": "call_warm", "type": "function", "function": {"name": "f", "arguments": "{}"}}]}}],
    "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
}


def warm() -> None:
    """Load what the first chat request of a process loads (the transport stack, the SDK's lazily imported
    chat resources, the CA certificates), and drop the client that did it.

    A fork server calls this so that its children start with all of it loaded; a client holds no
    connection until it sends, so nothing of it reaches a child but modules and the TLS context."""
    import importlib

    from openai import AsyncOpenAI

    AsyncOpenAI(api_key="unused", base_url="http://127.0.0.1:9/v1", http_client=async_client()).chat.completions  # noqa: B018
    try:  # the SDK builds the validators of an answer's fields when it reads its first answer
        from openai.types.chat import ChatCompletion

        ChatCompletion.construct(**_ANSWER)
    except ImportError:  # a release without it: the child builds them itself
        pass
    for module in LAZY_MODULES:
        try:
            importlib.import_module(module)
        except ImportError:  # another release: the child imports what it needs itself
            pass


def rehearse(rounds: int = 3) -> None:
    """Send what a worker's legs send, a few times, to a throwaway responder in this process: chat requests through
    the openai SDK (async, and blocking from a thread, as frameworks that call the model synchronously do) and the
    blocking tool calls to the harness (`arena.tools.box`), each on a fresh client as every item's is.

    A fork server calls this after `warm()`: what a process builds at its first requests and then keeps (the
    interpreter's specialised code, lazily compiled patterns, the SDK's cached platform headers) is then built once,
    and shared, instead of in every forked worker. No client, connection or thread survives it; the responder is
    closed, and answers nothing but the rehearsal's own requests."""
    import asyncio
    import json

    import h11
    import httpx
    from openai import AsyncOpenAI, OpenAI

    body = json.dumps({**_ANSWER, "result": ""}).encode()
    headers = [("content-type", "application/json"), ("content-length", str(len(body)))]

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        conn = h11.Connection(h11.SERVER)
        try:
            while True:
                event = conn.next_event()
                if event is h11.NEED_DATA:
                    conn.receive_data(await reader.read(1 << 16))
                elif isinstance(event, h11.EndOfMessage):
                    writer.write(b"".join(conn.send(part) or b"" for part in (
                        h11.Response(status_code=200, headers=headers), h11.Data(data=body), h11.EndOfMessage())))
                    await writer.drain()
                    conn.start_next_cycle()
                elif isinstance(event, (h11.ConnectionClosed, h11.PAUSED)):
                    return
        finally:
            writer.close()

    messages: Any = [{"role": "user", "content": "rehearsal"}]

    def blocking(base: str) -> None:
        with OpenAI(api_key="unused", base_url=f"{base}/v1", http_client=client()) as sdk:
            sdk.chat.completions.create(model="scripted", messages=messages)
        with httpx.Client(trust_env=False, verify=tls()) as tools:  # as arena.tools.box's client
            tools.post(f"{base}/tool", json={"args": {}}).json()

    async def ask() -> None:
        server = await asyncio.start_server(answer, "127.0.0.1", 0)
        base = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"
        async with server:
            for _ in range(rounds):
                async with AsyncOpenAI(api_key="unused", base_url=f"{base}/v1", http_client=async_client()) as sdk:
                    for _ in range(2):
                        await sdk.chat.completions.create(model="scripted", messages=messages)
                await asyncio.to_thread(blocking, base)

    asyncio.run(ask())
