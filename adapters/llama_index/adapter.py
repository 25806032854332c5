"""The llama_index adapter: a FunctionAgent (an AgentWorkflow under delegation) whose tools wait on
`Context.wait_for_event(HumanResponseEvent)`; a leg drives the run's event stream to its answer or its idle pause."""

from __future__ import annotations

from typing import Any

from arena.for_adapters import Adapter, Decision, DecisionSet, LegContext, LegResult, PendingRequest
from arena_builtins.arenas.delegation.channel import agents_of
from arena_builtins.adapters.litellm_models import DEFERRED_MODELS

from .client import AGENT_NAME, build_llm, import_framework
from .client import warm as warm_tokenizer
from .decision import response_events
from .delegation import build_delegation
from .info import INFO
from .outcome import drive
from .store import add_note, restore
from .tools import tool_factory


class LlamaIndexAdapter(Adapter):
    order = 75  # where it stands in `arena list` and the reports (lower first)
    requires = ("llama-index-llms-litellm", "litellm")
    # LiteLLM keeps a process-wide logging worker bound to one event loop: each item in a forked worker of its own
    concurrent = False
    # what a fork server imports before it forks workers (arena/worker/forkserver.py)
    preload = (
        "litellm",
        "llama_index.core",
        "llama_index.core.agent.workflow",
        "llama_index.core.memory",
        "llama_index.core.tools",
        "llama_index.core.workflow",
        "llama_index.llms.litellm",
        "workflows",
        "workflows.events",
        "workflows.runtime.control_loop.runner",
        "workflows.plugins.basic",
        "workflows.representation.build",
        "workflows.representation.validate",
        "workflows.runtime.verbose",
        "tiktoken",
        # what LiteLLM imports at its first call
        "litellm.proxy._types",
        "litellm.llms.litellm_proxy.chat.transformation",
        "litellm.llms.github_copilot.authenticator",
        "litellm.llms.github_copilot.github_host",
        "litellm.llms.github_copilot.per_user_auth",
        "litellm._service_logger",
        "litellm.llms.openai.chat.gpt_audio_transformation",
        "litellm.llms.openai_like.dynamic_config",
        "litellm.integrations.generic_api.generic_api_callback",
        "litellm.integrations.prometheus_services",
        "litellm.litellm_core_utils.logging_callback_manager",
        "litellm.proxy.openai_files_endpoints.common_utils",
        "litellm.proxy.spend_tracking.savings",
    )
    # the pydantic models LiteLLM builds at a worker's first call (it defers them): built once in the fork server
    complete = DEFERRED_MODELS
    warm = staticmethod(warm_tokenizer)

    info = INFO

    def __init__(self) -> None:
        self._agent: Any = None
        self._llm: Any = None

    async def aclose(self) -> None:
        self._agent = None

    # -- construction ----------------------------------------------------------------------------

    def _build(self, ctx: LegContext) -> Any:
        if self._agent is not None:
            return self._agent
        li = import_framework()
        tool = tool_factory(ctx, li)
        llm = build_llm(ctx, li)
        self._llm = llm
        if agents_of(ctx):
            self._agent = build_delegation(ctx, li, tool, llm)
            return self._agent
        self._agent = li["ArenaAgent"](name=AGENT_NAME, tools=[tool(s) for s in ctx.tools.specs], llm=llm,
                                       system_prompt=ctx.instructions, streaming=False, timeout=None)
        return self._agent

    # -- legs ------------------------------------------------------------------------------------

    async def start(self, ctx: LegContext) -> LegResult:
        agent = self._build(ctx)
        handler = agent.run(user_msg=ctx.item.input)
        return await drive(handler, ctx, held=[])

    async def add_input(self, state: dict[str, Any], text: str, ctx: LegContext) -> dict[str, Any]:
        """Input while paused (the `input` channel, emulated): a copy of the saved snapshot (a new file: the state
        handed back at the pause keeps pointing at its own) whose chat memory ends with the text as a user
        message; the resume puts that memory back, and the agent's next LLM call reads it before the held turn
        (memory, then the scratchpad)."""
        return add_note(import_framework(), state, text, ctx)

    async def resume(self, state: dict[str, Any], decision: Decision | DecisionSet, ctx: LegContext) -> LegResult:
        li = import_framework()
        agent = self._build(ctx)
        handler = await restore(li, agent, state, self._llm)
        pending = [PendingRequest.model_validate(p) for p in state["pending"]]
        events = response_events(li, decision, pending)
        return await drive(handler, ctx, held=pending, deliver=events)
