"""smolagents imported lazily (the Hugging Face hub kept offline, its telemetry off), its `OpenAIServerModel` on the
harness's endpoint and the `ToolCallingAgent` that runs the leg."""

from __future__ import annotations

import os
from typing import Any

from arena.for_adapters import blocking_client
from arena.for_adapters import LegContext

MAX_STEPS = 20


def smolagents() -> Any:
    """Import smolagents lazily, with the Hugging Face hub kept offline and its telemetry off."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
    import smolagents

    return smolagents


def server_model(smolagents: Any, ctx: LegContext) -> Any:
    return smolagents.OpenAIServerModel(
        model_id=ctx.model.name,
        api_base=ctx.model.base_url,
        api_key=ctx.model.api_key,
        # the SDK's default blocking client, on the harness's shared TLS context (arena.http.client)
        client_kwargs={"max_retries": 0, "http_client": blocking_client()},
    )


def tool_calling_agent(smolagents: Any, ctx: LegContext, tools: list[Any], model: Any,
                       step_callbacks: dict[Any, Any] | None) -> Any:
    return smolagents.ToolCallingAgent(
        tools=tools,
        model=model,
        instructions=ctx.instructions,
        max_steps=MAX_STEPS,
        add_base_tools=False,
        verbosity_level=smolagents.LogLevel.OFF,
        max_tool_threads=1,
        step_callbacks=step_callbacks,
        stream_outputs=ctx.stream,  # a streamed leg: the model's answer streamed too (generate_stream)
    )
