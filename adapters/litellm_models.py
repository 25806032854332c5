"""What LiteLLM leaves to a process's first call, for the adapters that reach the model through it (google_adk,
llama_index): the pydantic models it defers, recorded in both adapters' forked workers. Their fork servers build
them once (`complete`, arena/worker/forkserver.py `complete_models`) instead of every worker forked per item."""

from __future__ import annotations

DEFERRED_MODELS = (
    "litellm.types.router.GenericLiteLLMParams",
    "litellm.types.router.LiteLLM_Params",
    "litellm.types.services.ServiceLoggerPayload",
    "litellm.types.utils.ChatCompletionMessageToolCall",
    "litellm.types.utils.Choices",
    "litellm.types.utils.Function",
    "litellm.types.utils.Message",
    "litellm.types.utils.ModelResponse",
    "litellm.types.utils.Usage",
    "litellm.responses.litellm_completion_transformation.tool_search._SessionMessageFields",
    "litellm.responses.litellm_completion_transformation.tool_search._ToolCallFields",
    "litellm.responses.litellm_completion_transformation.tool_search._ToolCallFunctionFields",
)
