"""The SDK's model client: `OpenAIChatCompletionsModel` over `AsyncOpenAI` pointed at the harness endpoint (Chat
Completions, not Responses), on the harness's shared `async_client`; tracing off globally and per run."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from arena.for_adapters import LegContext, kit

if TYPE_CHECKING:
    from .adapter import OpenAIAgentsAdapter

MAX_TURNS = 20
AGENT_NAME = "arena"


def chat_model(adapter: OpenAIAgentsAdapter, ctx: LegContext) -> Any:
    """The run's model, its client kept on the adapter (closed by `aclose`); the SDK imported here, with its tracing
    turned off globally."""
    import agents
    from agents import OpenAIChatCompletionsModel

    agents.set_tracing_disabled(True)
    adapter._client = kit.openai_client(ctx)
    return OpenAIChatCompletionsModel(model=ctx.model.name, openai_client=adapter._client)


def run_config() -> Any:
    from agents import RunConfig

    return RunConfig(tracing_disabled=True, trace_include_sensitive_data=False)
