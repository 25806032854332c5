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
