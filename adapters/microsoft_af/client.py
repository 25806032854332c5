"""agent_framework imported lazily with its telemetry off, the chat client on the harness endpoint, and the run's
Agent on it (its tools and middleware)."""

from __future__ import annotations

import os
from typing import Any, Callable

from arena.for_adapters import LegContext, kit

from .tools import call_id_middleware, tool

_TELEMETRY_ENV = {
    "OTEL_SDK_DISABLED": "true",
    "ENABLE_INSTRUMENTATION": "false",  # ObservabilitySettings, read when agent_framework is imported
    "ENABLE_SENSITIVE_DATA": "false",
    "AGENT_FRAMEWORK_USER_AGENT_DISABLED": "true",  # no agent-framework User-Agent / feature token
    "AGENT_FRAMEWORK_FEATURE_MASK_DISABLED": "true",
}


def framework() -> Any:
    """Import agent_framework lazily, with its telemetry off before the first import."""
    for key, value in _TELEMETRY_ENV.items():
        os.environ.setdefault(key, value)
    import agent_framework
    from agent_framework.observability import disable_instrumentation

    disable_instrumentation()  # sticky: no spans/metrics/logs from agent_framework in this process
    return agent_framework


def chat_client(ctx: LegContext) -> Any:
    """The framework's OpenAI chat-completion client on the harness endpoint, one per adapter."""
    from agent_framework.openai import OpenAIChatCompletionClient

    return OpenAIChatCompletionClient(model=ctx.model.name, async_client=kit.openai_client(ctx))


def build_agent(af: Any, ctx: LegContext, client: Any, grant: Callable[[], str | None], standing: bool) -> Any:
    """The run's Agent (no delegation): the harness tools, and its middleware. `standing`: ToolApprovalMiddleware
    is on for this leg (see `always`); `grant`: the approval body's next granted text."""
    tools = [tool(af, spec, ctx, grant) for spec in ctx.tools.specs]
    # MessageInjectionMiddleware drains what `add_input` queued on the session (a no-op while nothing is);
    # ToolApprovalMiddleware records an "always approve" and answers later matching requests with it. It is
    # outermost, as create_harness_agent places it.
    middleware: list[Any] = [af.ToolApprovalMiddleware()] if standing else []
    middleware += [af.MessageInjectionMiddleware(), af.function_middleware(call_id_middleware)]
    return af.Agent(client=client, instructions=ctx.instructions, name="room_booker", tools=tools,
                    middleware=middleware)
