"""LangChain's agent over the harness's model: `langchain_openai.ChatOpenAI` pointed at the item's OpenAI-compatible
endpoint on the adapter's own async HTTP client, and `langchain.agents.create_agent` over it (imported lazily)."""

from __future__ import annotations

from typing import Any

from arena.for_adapters import LegContext
from arena.for_adapters import blocking_client
from arena_builtins.arenas.delegation.channel import agents_of

from .context import prompt_middleware
from .delegation import build_team
from .tools import build_tools, gate


def build_agent(ctx: LegContext, checkpointer: Any, http: Any, interrupt_mode: str = "batched") -> Any:
    from langchain.agents import create_agent

    model = chat_model(ctx, http)
    if agents_of(ctx):
        return build_team(ctx, model, checkpointer, interrupt_mode)
    tools = build_tools(ctx)
    middleware = [*gate(ctx.gated_tools, interrupt_mode), *prompt_middleware(ctx)]
    return create_agent(
        model, tools, system_prompt=ctx.instructions, checkpointer=checkpointer, middleware=middleware
    )


def chat_model(ctx: LegContext, http: Any) -> Any:
    """ChatOpenAI on the item's model endpoint, over `http` (the adapter's async client for this item)."""
    from langchain_openai import ChatOpenAI

    return ChatOpenAI(
        model=ctx.model.name,
        base_url=ctx.model.base_url,
        api_key=ctx.model.api_key,  # type: ignore[arg-type]  # a str: pydantic validates it into a SecretStr
        max_retries=0,
        http_async_client=http,
        # never used (every call is async), but without it ChatOpenAI builds a blocking client that loads the CA
        # certificates again for every leg (its cache is keyed by the base URL, which is the item's own)
        http_client=blocking_client(),
    )
