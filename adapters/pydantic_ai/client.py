"""pydantic-ai's model client on the harness's endpoint, and what a fork server builds once.

pydantic-ai is imported inside these functions only, so importing the adapter's package imports no framework
(the catalog imports every adapter class to list it)."""

from __future__ import annotations

from typing import Any

from arena.for_adapters import LegContext, kit


def warm() -> None:
    """Build the message history's validator once in the fork server (pydantic defers it to first use)."""
    from pydantic_ai.messages import ModelMessagesTypeAdapter

    ModelMessagesTypeAdapter.validate_json(b"[]")


def provider_for(ctx: LegContext) -> Any:
    """pydantic-ai's `OpenAIProvider` on the harness's model endpoint (its client closed by the adapter's aclose)."""
    from pydantic_ai.providers.openai import OpenAIProvider

    return OpenAIProvider(openai_client=kit.openai_client(ctx))


def chat_model(ctx: LegContext, provider: Any) -> Any:
    """The model the agents run on: pydantic-ai's `OpenAIChatModel` (Chat Completions) through `provider`."""
    from pydantic_ai.models.openai import OpenAIChatModel

    return OpenAIChatModel(ctx.model.name, provider=provider)
