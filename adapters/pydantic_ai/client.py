"""pydantic-ai's model client on the harness's endpoint, and what a fork server builds once.

pydantic-ai is imported inside these functions only, so importing the adapter's package imports no framework
(the catalog imports every adapter class to list it)."""

from __future__ import annotations

from typing import Any

from arena.for_adapters import LegContext, async_client


def warm() -> None:
    """Build the message history's validator once in the fork server (pydantic defers it to first use)."""
    from pydantic_ai.messages import ModelMessagesTypeAdapter

    ModelMessagesTypeAdapter.validate_json(b"[]")


def provider_for(ctx: LegContext) -> Any:
    """pydantic-ai's `OpenAIProvider` on the harness's model endpoint (its client closed by the adapter's aclose)."""
    from openai import AsyncOpenAI
    from pydantic_ai.providers.openai import OpenAIProvider

    # No client retries (the openai client's default is 2): every adapter's model client makes the
    # same number of attempts, so an endpoint fault cannot change the framework comparison.
    client = AsyncOpenAI(base_url=ctx.model.base_url, api_key=ctx.model.api_key, max_retries=0,
                         http_client=async_client())
    return OpenAIProvider(openai_client=client)


def chat_model(ctx: LegContext, provider: Any) -> Any:
    """The model the agents run on: pydantic-ai's `OpenAIChatModel` (Chat Completions) through `provider`."""
    from pydantic_ai.models.openai import OpenAIChatModel

    return OpenAIChatModel(ctx.model.name, provider=provider)
