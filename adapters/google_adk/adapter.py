"""The two ADK adapters: one leg is one Runner run over a resumable App, read to the natural end of its events.

Each method is a dispatch to the package's concern modules; the subclasses choose the approval tool's pause (a
LongRunningFunctionTool, or a FunctionTool(require_confirmation=True)) and how it is answered.
"""

from __future__ import annotations

from abc import abstractmethod
from typing import Any

from arena.for_adapters import Adapter, Decision, DecisionKind, DecisionSet, LegContext, LegResult, PendingRequest
from arena.for_adapters import ToolKind, ToolSpec, kit
from arena_builtins.adapters.litellm_models import DEFERRED_MODELS

from . import client, delegation, outcome, stream, tools
from .decision import decision_message
from .info import CONFIRM_INFO, INFO
from .input import append_note, user_message
from .store import open_session, sessions


class ADKBase(Adapter):
    """Shared leg machinery; subclasses choose the approval tool's pause and how it is answered.

    Gated tools (a spec with `requires_approval`, the approval_gate arena) are the same in both
    adapters: ADK's only tool-level gate, `FunctionTool(require_confirmation=True)` around the one
    harness call, paused as `adk_request_confirmation` and answered with a ToolConfirmation.
    """

    requires = ("litellm",)  # ADK's LiteLlm: its model client
    # LiteLLM keeps one process-wide logging worker bound to an event loop: each item in a forked worker of its own
    concurrent = False

    # what a fork server imports before it forks workers (arena/worker/forkserver.py)
    preload = (
        "litellm",
        "google.adk.agents",
        "google.adk.agents.run_config",
        "google.adk.apps",
        "google.adk.models.lite_llm",
        "google.adk.runners",
        "google.adk.sessions.sqlite_session_service",
        # the --store postgres / redis session services (imported only by a leg on that store)
        "google.adk.sessions.database_session_service",
        "sqlalchemy.dialects.postgresql.asyncpg",
        "google.adk.integrations.redis",
        "redis.asyncio",
        "google.adk.tools.function_tool",
        "google.adk.tools.long_running_tool",
        "google.genai",
        # imported lazily on first use
        "google.adk.agents.llm_agent",
        "google.adk.apps.app",
        "google.adk.auth.auth_preprocessor",
        "google.adk.flows.llm_flows.auto_flow",
        "google.adk.flows.llm_flows.single_flow",
        "google.adk.flows.llm_flows.functions",
        "google.adk.memory.in_memory_memory_service",
        "google.adk.models.google_llm",
        "google.adk.tools.agent_tool",
        "google.adk.workflow._workflow",
        "google.adk.workflow._node_runner",
        "google.adk.workflow._llm_agent_wrapper",
        "google.adk.workflow._tool_node",
        "google.adk.a2a.agent",
        "google.adk.agents._agent_router",
        "google.adk.telemetry.node_tracing",
        "google.adk.tools.google_search_tool",
        "google.adk.tools.vertex_ai_search_tool",
        "litellm._service_logger",
        "litellm.proxy._types",
        "litellm.llms.litellm_proxy.chat",
        "litellm.litellm_core_utils.logging_callback_manager",
        "litellm.proxy",
        "litellm.llms.litellm_proxy",
        "litellm.integrations.prometheus_services",
        "litellm.llms.litellm_proxy.chat.transformation",
        "litellm.llms.github_copilot.authenticator",
        "litellm.llms.github_copilot.github_host",
        "litellm.llms.github_copilot.per_user_auth",
        "litellm.llms.openai.chat.gpt_audio_transformation",
        "litellm.llms.openai_like.dynamic_config",
        "litellm.proxy.openai_files_endpoints.common_utils",
        "litellm.proxy.spend_tracking.savings",
        "google.adk.tools._node_tool",
        "google.adk.workflow._node_runner_utils",
        "authlib",
        "fastapi",
        "opentelemetry.propagate",
    )
    # the pydantic models LiteLLM and google-genai build at a worker's first call (they defer it): built once in the
    # fork server instead (arena/worker/forkserver.py, complete_models)
    complete = (
        *DEFERRED_MODELS,
        "google.genai.types.AudioTranscriptionConfig",
        "google.genai.types.Content",
        "google.genai.types.FunctionCall",
        "google.genai.types.FunctionDeclaration",
        "google.genai.types.FunctionResponse",
        "google.genai.types.GenerateContentConfig",
        "google.genai.types.GenerateContentResponseUsageMetadata",
        "google.genai.types.LiveConnectConfig",
        "google.genai.types.Part",
        "google.genai.types.Tool",
        "google.genai.types.UserContent",
    )

    # Resumable App: the configuration in which ADK itself stops at a long-running call even when a
    # sibling call answered in the same step. Off only in tests that show what happens without it.
    resumable: bool = True
    # Delegates called as tools (delegation, `via="tool"`) as single_turn sub_agents, ADK's recommended way. True
    # only in the test that shows what `AgentTool(agent=...)` does instead (it cannot resume a paused delegate).
    agent_tool: bool = False

    async def start(self, ctx: LegContext) -> LegResult:
        state = await open_session(ctx)
        return await self._leg(ctx, state, user_message(ctx.item.input), invocation_id=None)

    async def resume(self, state: dict[str, Any], decision: Decision | DecisionSet, ctx: LegContext) -> LegResult:
        if isinstance(decision, Decision) and decision.kind is DecisionKind.message:
            # A new message instead of a decision: the user's text as the session's next user turn, with no
            # invocation_id and no FunctionResponse. ADK: "Function responses resume an existing invocation while
            # text starts a new one" (Runner._validate_new_message); the paused call is left to ADK.
            return await self._leg(ctx, state, user_message(decision.text), invocation_id=None)
        return await self._leg(ctx, state, decision_message(state, decision, self.lro_response),
                               invocation_id=state["invocation"])

    async def add_input(self, state: dict[str, Any], text: str, ctx: LegContext) -> dict[str, Any]:
        """Input while paused (the `input` channel), emulated: ADK has no API for input to a paused invocation (text
        through Runner.run_async starts a new invocation, the `message` channel, and Runner._validate_new_message
        refuses text beside the resuming FunctionResponse). So the note is written into the stored session by hand,
        a user-authored text Event (stamped with the paused invocation_id) through the session service's
        `append_event`; nothing runs, and the state to resume is unchanged. What ADK then makes of that event is
        ADK's: its contents builder (`rearrange_events_for_latest_function_response`, flows/llm_flows/tools/
        _rearranger.py) drops every event between the paused call and its result from the first request after the
        resume, and shows the note from the next request on, after the resumed call's result."""
        return await append_note(ctx, state, text)

    # -- per mechanism -----------------------------------------------------------------------------

    @abstractmethod
    def approval_tool(self, spec: ToolSpec) -> Any:
        """The framework-native approval tool for this mechanism."""

    def lro_response(self, decision: Decision) -> dict[str, Any]:
        raise RuntimeError(f"{type(self).__name__} pauses only on tool confirmations")

    def lro_pauses(self, event: Any, approval: str | None) -> list[tuple[Any, PendingRequest]]:
        """Pause calls of a long-running approval tool on this event (none by default)."""
        return []

    def confirmed_tools(self, ctx: LegContext) -> set[str]:
        """Tools whose calls pause as adk_request_confirmation."""
        return set(ctx.gated_tools)

    # -- shared ------------------------------------------------------------------------------------

    def _app(self, ctx: LegContext) -> Any:
        model = client.model(ctx)
        agent = delegation.desk_agent(ctx, model, lambda specs: tools.build_tools(ctx, specs, self.approval_tool),
                                      self.agent_tool)
        return client.app(agent, self.resumable)

    async def _leg(self, ctx: LegContext, state: dict[str, Any], message: Any, invocation_id: str | None) -> LegResult:
        """Run the Runner until its event stream ends by itself; then read how the run stopped."""
        adk = client.adk()
        events: list[Any] = []
        streaming = stream.run_config(ctx)
        told_calls: set[str] = set()
        async with sessions(ctx, state) as service:
            runner = adk["Runner"](app=self._app(ctx), session_service=service)
            try:
                run = runner.run_async(
                    user_id=state["user"], session_id=state["session"], invocation_id=invocation_id,
                    new_message=message, **streaming,
                )
                try:
                    async for event in run:
                        events.append(event)
                        if ctx.stream:
                            stream.tell(ctx, event, told_calls)
                finally:
                    await run.aclose()
            finally:
                await runner.close()
        if ctx.stream:  # the partial events are chunks of the aggregated ones that follow them
            events = [e for e in events if not e.partial]
        return outcome.outcome(self, ctx, state, events)


class GoogleADKAdapter(ADKBase):
    order = 60
    info = INFO

    # What the long-running function returns at once. None: no interim FunctionResponse. Anything
    # else (ADK's docs return {"status": "pending"}) is sent to the model as the call's result and
    # the loop carries on; tests set it to show exactly that.
    interim_result: Any = None

    def approval_tool(self, spec: ToolSpec) -> Any:
        return tools.long_running_approval_tool(spec, self.interim_result)

    def lro_response(self, decision: Decision) -> dict[str, Any]:
        return {"result": decision.as_text()}

    def lro_pauses(self, event: Any, approval: str | None) -> list[tuple[Any, PendingRequest]]:
        ids = event.long_running_tool_ids or set()
        return [
            (fc, PendingRequest(tool=fc.name, args=dict(fc.args or {}), call_id=fc.id))
            for fc in event.get_function_calls()
            if fc.id in ids and fc.name == approval
        ]


class GoogleADKConfirmAdapter(ADKBase):
    order = 61
    info = CONFIRM_INFO

    def approval_tool(self, spec: ToolSpec) -> Any:
        return tools.confirmed_approval_tool(spec)

    def confirmed_tools(self, ctx: LegContext) -> set[str]:
        approval = {s.name for s in kit.tools_by_kind(ctx, ToolKind.approval)}
        return approval | set(ctx.gated_tools)
