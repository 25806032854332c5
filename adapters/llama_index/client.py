"""llama-index and LiteLLM, imported lazily (once per process, offline), and the model client on ctx.model.

The framework is imported on first use only (`import_framework`), so importing the adapter's package imports
no framework: the catalog imports every adapter class to list it."""

from __future__ import annotations

import contextvars
import os
import threading
from typing import Any

from arena.for_adapters import LegContext, ToolSpec

AGENT_NAME = "arena"

OFFLINE_ENV = {
    "LITELLM_LOCAL_MODEL_COST_MAP": "True",  # no fetch of the model-cost map at import
    "LITELLM_OFFLINE_MODE": "true",  # no catalog/tokenizer fetches
    "LITELLM_MODE": "PRODUCTION",  # no .env autoload
    "OTEL_SDK_DISABLED": "true",
}

# llama-index's id of the tool call being run (the model's tool_id), set by the agent's call_tool step
CALL_ID: contextvars.ContextVar[str | None] = contextvars.ContextVar("arena_llama_index_call_id", default=None)

_LI: dict[str, Any] = {}
_LI_LOCK = threading.Lock()


def import_framework() -> dict[str, Any]:
    """Import llama-index and LiteLLM once per process, offline, and return what the adapter uses."""
    with _LI_LOCK:
        if not _LI:
            _LI.update(_do_import())
    return _LI


def _do_import() -> dict[str, Any]:
    for key, value in OFFLINE_ENV.items():
        os.environ.setdefault(key, value)
    import litellm  # slow (seconds)

    for name in ("callbacks", "success_callback", "failure_callback", "input_callback", "service_callback"):
        setattr(litellm, name, [])
    litellm._async_success_callback = []
    litellm._async_failure_callback = []
    litellm.telemetry = False

    from llama_index.core.agent.workflow import AgentWorkflow, FunctionAgent
    from llama_index.core.agent.workflow.workflow_events import ToolCall, ToolCallResult
    from llama_index.core.llms import ChatMessage
    from llama_index.core.memory import ChatMemoryBuffer
    from llama_index.core.tools import FunctionTool, ToolMetadata
    from llama_index.core.workflow import Context, HumanResponseEvent, InputRequiredEvent, StopEvent, step
    from llama_index.llms.litellm import LiteLLM
    from pydantic import BaseModel, ConfigDict
    from workflows.events import StepState, StepStateChanged, UnhandledEvent, WorkflowIdleEvent

    class ArenaAgent(FunctionAgent):
        """FunctionAgent whose call_tool step makes llama-index's id of the call (`ToolCall.tool_id`) visible to
        the tool body (a context variable), so the harness logs it and a wait is keyed by it."""

        @step
        async def call_tool(self, ctx: Context, ev: ToolCall) -> ToolCallResult:
            token = CALL_ID.set(ev.tool_id)
            try:
                return await FunctionAgent.call_tool(self, ctx, ev)
            finally:
                CALL_ID.reset(token)

    class ArenaWorkflow(AgentWorkflow):
        """AgentWorkflow (several agents, handoffs) whose call_tool step makes llama-index's id of the call
        visible to the tool body, as ArenaAgent's does (in an AgentWorkflow the workflow's own steps run the
        agents' tools, not the agents' steps)."""

        @step
        async def call_tool(self, ctx: Context, ev: ToolCall) -> ToolCallResult:
            token = CALL_ID.set(ev.tool_id)
            try:
                return await AgentWorkflow.call_tool(self, ctx, ev)
            finally:
                CALL_ID.reset(token)

    class ArenaLiteLLM(LiteLLM):
        """LiteLLM for the harness endpoint: an OpenAI-compatible server with tool calling, which LiteLLM's model
        map may not know by name ("scripted"); its context window is not 2048 tokens (the fallback)."""

        @property
        def metadata(self) -> Any:
            meta = super().metadata
            return meta.model_copy(update={"is_function_calling_model": True,
                                           "context_window": max(meta.context_window, 128_000)})

    def schema_model(spec: ToolSpec) -> type:
        params = dict(spec.parameters)

        class Schema(BaseModel):
            model_config = ConfigDict(extra="allow")

            @classmethod
            def model_json_schema(cls, *args: Any, **kwargs: Any) -> dict[str, Any]:
                return dict(params)

        Schema.__name__ = Schema.__qualname__ = f"{spec.name}_args"
        return Schema

    return {
        "ArenaAgent": ArenaAgent, "ArenaWorkflow": ArenaWorkflow, "ArenaLiteLLM": ArenaLiteLLM,
        "ChatMemoryBuffer": ChatMemoryBuffer, "ChatMessage": ChatMessage, "Context": Context,
        "FunctionTool": FunctionTool, "ToolMetadata": ToolMetadata,
        "HumanResponseEvent": HumanResponseEvent, "InputRequiredEvent": InputRequiredEvent, "StopEvent": StopEvent,
        "WorkflowIdleEvent": WorkflowIdleEvent, "ToolCall": ToolCall, "ToolCallResult": ToolCallResult,
        "StepStateChanged": StepStateChanged, "StepState": StepState, "UnhandledEvent": UnhandledEvent, "schema_model": schema_model,
    }


def build_llm(ctx: LegContext, li: dict[str, Any]) -> Any:
    """LiteLLM on the harness endpoint (`openai/<name>`, ctx.model), with no client retries."""
    return li["ArenaLiteLLM"](
        model="openai/" + ctx.model.name, api_base=ctx.model.base_url, api_key=ctx.model.api_key,
        max_retries=1,  # tenacity's stop_after_attempt(1): one attempt
        # LiteLLM's openai client: no retries either (`num_retries` is LiteLLM's name for the client's
        # max_retries; llama-index's own `max_retries` keyword would clash with it)
        additional_kwargs={"num_retries": 0},
    )


def warm() -> None:
    """The tokenizer llama_index's chat memory builds once per process (tiktoken's BPE tables, from LiteLLM's
    bundled copy): in a fork server, so that a worker forked per item does not parse it again."""
    from llama_index.core.utils import get_tokenizer

    get_tokenizer()
