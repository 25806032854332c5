"""ADK and LiteLLM, imported lazily once per process and offline; the model client and the resumable `App`.

LiteLLM is told to stay offline before it is first imported (local model-cost map, offline mode, no
callbacks); OpenTelemetry's SDK is disabled unless the environment already decided.
"""

from __future__ import annotations

import json
import os
import threading
import warnings
from typing import Any

from arena.for_adapters import LegContext, ToolSpec

APP_NAME = "arena"
USER_ID = "arena"
AGENT_NAME = "arena_agent"

_OFFLINE_ENV = {
    "LITELLM_LOCAL_MODEL_COST_MAP": "True",  # no fetch of the model-cost map at import
    "LITELLM_OFFLINE_MODE": "true",  # no catalog/tokenizer/blog fetches
    "LITELLM_MODE": "PRODUCTION",  # no .env autoload (ADK sets this too)
    "OTEL_SDK_DISABLED": "true",
}
_ADK: dict[str, Any] = {}
_ADK_LOCK = threading.Lock()


def adk() -> dict[str, Any]:
    """Import ADK and LiteLLM once per process, offline, and return what the adapter uses."""
    with _ADK_LOCK:
        if not _ADK:
            _ADK.update(_import_adk())
    return _ADK


def _import_adk() -> dict[str, Any]:
    for key, value in _OFFLINE_ENV.items():
        os.environ.setdefault(key, value)
    # ADK warns on every process's first ResumabilityConfig that the feature is experimental.
    warnings.filterwarnings("ignore", message=r"\[EXPERIMENTAL\] ResumabilityConfig", category=UserWarning)
    import litellm  # slow (seconds): only here, once

    # No logging/observability callbacks (LiteLLM's own usage telemetry is proxy-only and off).
    for name in ("callbacks", "success_callback", "failure_callback", "input_callback", "service_callback"):
        setattr(litellm, name, [])
    litellm._async_success_callback = []
    litellm._async_failure_callback = []

    from google.adk.agents import LlmAgent, RunConfig
    # run_config imports StreamingMode without re-exporting it (mypy: attr-defined)
    from google.adk.agents.run_config import StreamingMode  # type: ignore[attr-defined]
    from google.adk.apps import App, ResumabilityConfig
    from google.adk.events.event import Event
    from google.adk.models.lite_llm import LiteLlm
    from google.adk.runners import Runner
    from google.adk.sessions.sqlite_session_service import SqliteSessionService
    from google.adk.tools.agent_tool import AgentTool
    from google.adk.tools.base_tool import BaseTool
    from google.adk.tools.function_tool import FunctionTool
    from google.adk.tools.long_running_tool import LongRunningFunctionTool
    from google.adk.tools.tool_context import ToolContext
    from google.genai import types

    class HarnessTool(BaseTool):
        """A harness tool: declared by its JSON schema; its whole body is one harness call."""

        def __init__(self, spec: ToolSpec, ctx: LegContext):
            super().__init__(name=spec.name, description=spec.description)
            self._arena_spec = spec
            self._ctx = ctx

        def _get_declaration(self) -> types.FunctionDeclaration:
            return declaration(types, self._arena_spec)

        async def run_async(self, *, args: dict[str, Any], tool_context: Any) -> Any:
            # ADK's id for this call (ToolContext.function_call_id): the harness logs it, tools may de-duplicate by it
            return await self._ctx.tools.acall(self._arena_spec.name, dict(args),
                                               call_id=tool_context.function_call_id)

    class SpecFunctionTool(FunctionTool):
        """A FunctionTool declared by the spec's JSON schema (not by the Python signature)."""

        def _get_declaration(self) -> types.FunctionDeclaration | None:  # FunctionTool's return type
            return declaration(types, self.func.__arena_spec__)  # type: ignore[attr-defined]  # set by spec_function

    class SpecLongRunningTool(LongRunningFunctionTool, SpecFunctionTool):
        """LongRunningFunctionTool over the JSON-schema declaration (it still appends its NOTE)."""

    return {
        "LlmAgent": LlmAgent,
        "RunConfig": RunConfig,
        "StreamingMode": StreamingMode,
        "App": App,
        "ResumabilityConfig": ResumabilityConfig,
        "LiteLlm": LiteLlm,
        "Runner": Runner,
        "SqliteSessionService": SqliteSessionService,
        "HarnessTool": HarnessTool,
        "AgentTool": AgentTool,
        "SpecFunctionTool": SpecFunctionTool,
        "SpecLongRunningTool": SpecLongRunningTool,
        "ToolContext": ToolContext,
        "types": types,
        "Event": Event,
    }


def declaration(types: Any, spec: ToolSpec) -> Any:
    return types.FunctionDeclaration(
        name=spec.name, description=spec.description, parameters_json_schema=json.loads(json.dumps(spec.parameters))
    )


def model(ctx: LegContext) -> Any:
    """ADK's LiteLlm pointed at the harness's OpenAI-compatible endpoint."""
    adk_ = adk()
    # max_retries=0: LiteLLM's openai client retries twice by default; no adapter's client retries
    return adk_["LiteLlm"](model="openai/" + ctx.model.name, api_base=ctx.model.base_url, api_key=ctx.model.api_key,
                           max_retries=0)


def app(agent: Any, resumable: bool) -> Any:
    """The `App` over the run's agent: resumable (`ResumabilityConfig(is_resumable=True)`) unless a test says not."""
    adk_ = adk()
    resumability = adk_["ResumabilityConfig"](is_resumable=True) if resumable else None
    return adk_["App"](name=APP_NAME, root_agent=agent, resumability_config=resumability)
