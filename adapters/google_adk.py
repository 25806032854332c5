"""Google ADK: two native pauses, both over a resumable `App`, a `Runner` and a SQLite session store.

The agent is an `LlmAgent` over `google.adk.models.lite_llm.LiteLlm("openai/<name>")` pointed at the
harness's OpenAI-compatible endpoint. The harness's read/write tools are `BaseTool` subclasses whose
declaration is the spec's JSON schema (`parameters_json_schema`) and whose body is one
`ctx.tools.acall`. Sessions live in `SqliteSessionService` (aiosqlite, no extra package) under
`ctx.workdir`; every leg opens the store, runs the Runner to the natural end of its event stream and
closes it, so the state a leg hands back is only how to reopen it (db path, app/user/session ids,
invocation id, the call to answer): a resume works from the file, as a new process would.

`google_adk` (GoogleADKAdapter): `LongRunningFunctionTool` on request_approval, in an `App` with
`ResumabilityConfig(is_resumable=True)`; the function body returns None, so ADK writes no interim
response. What ADK 2.13 really does (measured, see tests/adapters/test_google_adk.py):
- If the long-running function returns a value (ADK's own docs return `{"status": "pending"}`), ADK
  emits that as the call's FunctionResponse and the agent loop goes straight on: it calls the model
  again with the pending status, with or without resumability. The run ends only because the model
  then answers in text. That is no pause, so this adapter does not use it.
- Returning None: the model turn that carries the call has `long_running_tool_ids` and is the last
  event of its step, so `BaseLlmFlow.run_async` ends the run. With sibling calls in the same turn
  (scripted-eager) a sibling's FunctionResponse becomes the step's last event; a non-resumable App
  then calls the model again (ADK fills the missing response with an error), while a resumable App
  stops (`decide_step_resume` -> PAUSE, the long-running call being unanswered). So the resumable
  App is the configuration in which ADK itself stops; the sibling has already executed by then.
The adapter consumes every event; it reports a suspension only when the stream ended by itself with
the long-running call unanswered and no model output after it. Resume: a user `FunctionResponse`
with the same id and name, `{"result": decision.as_text()}`, run with the paused `invocation_id`.

`google_adk_confirm` (GoogleADKConfirmAdapter): ADK tool confirmation, `FunctionTool(...,
require_confirmation=True)` on request_approval. The first call returns ADK's placeholder error and
ADK emits an `adk_request_confirmation` call (long-running) and stops (with scripted-eager, after
running the sibling book_room of the same turn, as above). Resume: a `FunctionResponse`
to that call carrying a `ToolConfirmation` (`confirmed`, `payload`). On confirm ADK runs the
request_approval body, which the adapter owns and which returns the payload (decision.as_text()).
On reject ADK writes its own fixed result `{"error": "This tool call is rejected."}` without running
the body: the deny reason (sent in the payload) never reaches the model.

Tool-level gate (approval_gate), both adapters: a spec with `requires_approval` is the same one
harness call wrapped in `FunctionTool(require_confirmation=True)`, ADK's only tool-level gate. ADK
answers the model's call with its placeholder, emits `adk_request_confirmation` and stops; the
pending request is the gated call (name, args, id). Confirmed, ADK executes the held call itself;
rejected, it never runs and the model reads the fixed rejection result. Ordinary sibling calls of
that turn run in the same step, before the stop.

A new message instead of a decision (interruptions, the `message` channel), both adapters: the user's text is sent
as the session's next user turn, `Runner.run_async(user_id, session_id, new_message=Content(role="user",
parts=[Part(text)]))`, with no invocation_id and no FunctionResponse. That is ADK's own rule: "Function responses
resume an existing invocation while text starts a new one" (`Runner._validate_new_message`; the tool-confirmation
docs: a confirmation sent without the paused invocation_id "starts a new invocation"). Text with the paused
invocation_id re-enters that invocation on its original user message without appending the text (`run_node_async`:
`existing_user_content`): tried, the leg ends with no model call at all. The adapter neither answers nor cancels
the held call. What ADK 2.13 does (measured on interruptions): the new invocation's request carries the gated call
with the placeholder FunctionResponse ADK wrote at the pause (`{"error": "This tool call requires confirmation,
please approve or reject."}`), then the text; the long-running adk_request_confirmation stays unanswered in the
session (`drop_orphaned_function_calls` leaves long-running calls alone), so a late confirmation of it still resumes
the old invocation and ADK runs the superseded call.

"Approve always" (the `always` channel): unsupported, ADK has none. A ToolConfirmation is `confirmed` plus a
`payload` for the one call it answers; `require_confirmation` (bool or a predicate over the call's arguments) is the
application's own rule, not a decision of the human's that stands for later calls; no session-level permission or
approval policy exists in google-adk 2.13 or its tool-confirmation docs. Emulating one here would measure the adapter.

Input while paused (the `input` channel, `add_input`), emulated: ADK documents no input to a paused invocation (text
through `Runner.run_async` starts a new invocation, which is the `message` channel; `_validate_new_message` refuses
text beside the resuming FunctionResponse). The adapter appends the note to the stored session as a user text Event
(`SqliteSessionService.append_event`) and resumes as usual. Measured on interruptions (int-19..21): ADK leaves the
note out of the first model request after the resume (`rearrange_events_for_latest_function_response` drops every
event between the paused call and its result) and shows it from the next request on, after that call's result; by
then the model has already searched for the next meeting as first asked.

Delegation (the `nested` and `handoff` channels; only when `LegContext.agents` is non-empty): the run's agent (the
desk) is an `LlmAgent` holding only its own tools, with one `LlmAgent` per delegate in its `sub_agents`, each holding
that delegate's tools (its gated ones are the same `FunctionTool(require_confirmation=True)`). A delegate called as
a tool is a `mode="single_turn"` sub-agent: ADK offers it to the desk as a tool of its name with one `request`
argument (`_SingleTurnAgentTool`) and runs it inline in the desk's session and invocation (`tool_context.run_node`,
branch `<delegate>@<call id>`). That is ADK's recommended form: `AgentTool(agent=...)` runs the agent in a nested
Runner over a throwaway InMemorySessionService, and a paused delegate comes back as the tool result "Error: agent ...
stopped waiting on unresolved long-running tool call(s) ..., which AgentTool cannot resume" (tools/agent_tool.py,
whose docstring and warning point to single_turn sub_agents; measured in tests/adapters/test_google_adk.py). A
delegate handed the conversation is a `mode="chat"` sub-agent, reached by ADK's automatic
`transfer_to_agent(agent_name=...)` tool. The delegate's gated call emits `adk_request_confirmation` on an event
authored by the delegate: that author is `PendingRequest.agent`. With two delegates in one turn each asks on its own
event, so the pause collects every unanswered confirmation of the leg. The state is the same JSON as ever (sqlite
path, session, invocation, the confirmation ids), so a new process resumes it from the session store; the
confirmations go back in one message via `Runner.run_async(invocation_id=...)`. What ADK 2.13 does (measured on
delegation): one delegate's pause resumes, book_flight / cancel_flight run once when confirmed and the desk reads the
delegate's answer; a rejection is ADK's fixed text, so the reason never reaches the delegate. Two delegates in one
turn run at once; the first to ask (the changes agent) ends the desk's step and ADK cancels the other, before or after
its own ask (a race, plain or streamed). If both asked, both confirmations are held, but on resume only the cancelled
one's branch goes on: the delegate that asked first ends at once without running its confirmed call, and the desk
reads `null` as its answer. If the other had not asked, the pause holds the first delegate's call alone (a decision
for the other's call is then sent under its id, as for any call not held: ADK re-runs that delegate to a second pause
if its call was already recorded, else refuses the message, "Function call not found"). Which of these happens
varies from run to run, so the adapter declares its `multi_nested` channel `unsupported` with that said: the
two-delegate items are not measured on it (their outcome would be a race, not a measurement).

Stores (`--store`, `LegContext.store`; the postgres and redis channels, both adapters): only the session service
changes, wherever SqliteSessionService is used (create the session, each leg's Runner, add_input). postgres: ADK's
`DatabaseSessionService(db_url="postgresql+asyncpg://...")` on the item's own database; asyncpg is the driver ADK
names for PostgreSQL (`_ASYNC_DRIVER_BY_BACKEND`, the CLI's `postgresql+asyncpg` scheme) and ADK creates its own
tables there (sessions, events, app_states, user_states, adk_internal_metadata). redis: ADK 2.13's own
`google.adk.integrations.redis.RedisSessionService` (the `google-adk[redis]` extra, redis-py asyncio; plain
GET/SET/WATCH+MULTI, no Redis modules), `RedisSessionServiceConfig(key_prefix=<item prefix> + "adk:session:")`: the
whole session (events and state) is one JSON string at `<prefix>adk:session:<app>:<user>:<session>` (app/user state
keys, unused here, under the same prefix), with ADK's default 7-day TTL. Each leg opens the service and closes it
(the engine disposed; the redis client, made as ADK makes its own, closed), so a restart of the server between legs
is met with fresh connections. The paused state then holds no path: `store` (its kind) and the same ids. Measured
(durable_state and crash_recovery, every leg in a new process): the same outcome, item by item and check by check,
as on SQLite; no stale-session error (ADK issue #3717) came up with the long-running tool.

LiteLLM is told to stay offline before it is first imported (local model-cost map, offline mode, no
callbacks); OpenTelemetry's SDK is disabled unless the environment already decided.

Streamed legs (`ctx.stream`): the same Runner with `RunConfig(streaming_mode=StreamingMode.SSE)`. ADK then
yields partial events (LiteLLM's chunks: one per argument delta of each call, with the model's call id, the
aggregated event's own event id and already the long-running flag) before each aggregated one. A UI acts on
the aggregated events (ADK's StreamingMode docs), so only those are told and read for the outcome, which is
then the plain run's.

Tool results: ADK hands a tool's non-dict return value to the model as the JSON object
`{"result": <value>}`; the harness tools return strings, so every tool message on the wire is that
envelope (the decision too). That is ADK's behaviour and is left as it is.
"""

from __future__ import annotations

import contextlib
import inspect
import json
from abc import ABC, abstractmethod
import os
import threading
import uuid
import warnings
from typing import Any, AsyncIterator

from arena.tools import body as bodypause
from arena.types import (
    AdapterInfo,
    AgentSpec,
    Capabilities,
    Channel,
    Decision,
    DecisionKind,
    DecisionSet,
    LegContext,
    LegResult,
    PendingRequest,
    ToolKind,
    ToolSpec,
)
from arena_builtins.adapters._litellm import DEFERRED_MODELS

DB_NAME = "adk-sessions.sqlite"
PG_DRIVER = "asyncpg"  # DatabaseSessionService's async PostgreSQL driver (its _ASYNC_DRIVER_BY_BACKEND)
REDIS_KEY_PREFIX = "adk:session:"  # RedisSessionServiceConfig.key_prefix's default, after the item's prefix
APP_NAME = "arena"
USER_ID = "arena"
AGENT_NAME = "arena_agent"
CONFIRMATION_CALL = "adk_request_confirmation"  # google.adk.utils._function_call_names
REJECTED_RESULT = {"error": "This tool call is rejected."}  # what FunctionTool.run_async returns on reject

_OFFLINE_ENV = {
    "LITELLM_LOCAL_MODEL_COST_MAP": "True",  # no fetch of the model-cost map at import
    "LITELLM_OFFLINE_MODE": "true",  # no catalog/tokenizer/blog fetches
    "LITELLM_MODE": "PRODUCTION",  # no .env autoload (ADK sets this too)
    "OTEL_SDK_DISABLED": "true",
}
_ADK: dict[str, Any] = {}
_ADK_LOCK = threading.Lock()


def _adk() -> dict[str, Any]:
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
    from google.adk.agents.run_config import StreamingMode
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
            return _declaration(types, self._arena_spec)

        async def run_async(self, *, args: dict[str, Any], tool_context: Any) -> Any:
            # ADK's id for this call (ToolContext.function_call_id): the harness logs it, tools may de-duplicate by it
            return await self._ctx.tools.acall(self._arena_spec.name, dict(args),
                                               call_id=tool_context.function_call_id)

    class SpecFunctionTool(FunctionTool):
        """A FunctionTool declared by the spec's JSON schema (not by the Python signature)."""

        def _get_declaration(self) -> types.FunctionDeclaration:
            return _declaration(types, self.func.__arena_spec__)

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


def _declaration(types: Any, spec: ToolSpec) -> Any:
    return types.FunctionDeclaration(
        name=spec.name, description=spec.description, parameters_json_schema=json.loads(json.dumps(spec.parameters))
    )


_JSON_TYPES = {"string": str, "integer": int, "number": float, "boolean": bool, "array": list, "object": dict}


def _spec_function(spec: ToolSpec, body: Any, context_type: Any) -> Any:
    """An async function named after the spec whose signature is the spec's arguments (+ tool_context).

    ADK's FunctionTool binds arguments, checks mandatory ones and injects the ToolContext by the
    function's signature, so the generated function carries the schema's parameters as keyword-only
    parameters; the declaration the model sees is the schema itself (SpecFunctionTool).
    """

    properties = spec.parameters.get("properties") or {}
    required = set(spec.parameters.get("required") or [])
    params = [inspect.Parameter("tool_context", inspect.Parameter.KEYWORD_ONLY, annotation=context_type)]
    annotations: dict[str, Any] = {"tool_context": context_type, "return": Any}
    for name, schema in properties.items():
        annotation = _JSON_TYPES.get(schema.get("type") if isinstance(schema, dict) else None, Any)
        default = inspect.Parameter.empty if name in required else None
        params.append(inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation))
        annotations[name] = annotation

    async def call(*, tool_context: Any, **kwargs: Any) -> Any:
        return await body(tool_context, kwargs)

    call.__name__ = call.__qualname__ = spec.name
    call.__doc__ = spec.description
    call.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    call.__annotations__ = annotations
    call.__arena_spec__ = spec  # type: ignore[attr-defined]
    return call


def _parts(event: Any) -> list[Any]:
    return list(event.content.parts or []) if event.content is not None else []


def _text(event: Any) -> str:
    return "".join(p.text for p in _parts(event) if p.text and not p.thought)


def _where(state: dict[str, Any]) -> dict[str, Any]:
    """The part of a paused state that says where its session lives and which one it is (JSON ids only)."""
    return {k: state[k] for k in ("db", "store", "app", "user", "session") if k in state}


@contextlib.asynccontextmanager
async def _sessions(ctx: LegContext, state: dict[str, Any]) -> AsyncIterator[Any]:
    """ADK's session service for this leg, opened here and closed when the leg is done (a new connection per leg).

    sqlite (default): `SqliteSessionService(<workdir>/adk-sessions.sqlite)`, as always. `--store postgres`: ADK's
    `DatabaseSessionService(db_url="postgresql+asyncpg://...")` on the item's own database (ADK creates its tables
    there on first use; asyncpg is the PostgreSQL driver ADK names for it). `--store redis`: ADK's
    `RedisSessionService` (google.adk.integrations.redis) with `key_prefix=<item prefix>adk:session:`, over a
    redis.asyncio client made as ADK makes its own (`from_url(uri, decode_responses=True)`) and closed here."""
    store = ctx.store
    kind = state.get("store", "sqlite")
    if kind != store.kind:
        raise RuntimeError(f"the paused ADK session is in the {kind} store, this leg was given {store.kind}")
    if store.kind == "sqlite":
        service = _adk()["SqliteSessionService"](state["db"])
        try:
            yield service
        finally:
            await service.close()
    elif store.kind == "postgres":
        from google.adk.sessions.database_session_service import DatabaseSessionService

        service = DatabaseSessionService(db_url=store.sqlalchemy_url(PG_DRIVER))
        try:
            yield service
        finally:
            await service.close()
    elif store.kind == "redis":
        import redis.asyncio as redis_asyncio
        from google.adk.integrations.redis import RedisSessionService, RedisSessionServiceConfig

        client = redis_asyncio.from_url(store.url, decode_responses=True)
        config = RedisSessionServiceConfig(uri=store.url, key_prefix=store.prefix + REDIS_KEY_PREFIX)
        try:
            yield RedisSessionService(config=config, redis_client=client)
        finally:
            await client.aclose()
    else:
        raise ValueError(f"unknown store {store.kind!r}")


class _ADKBase(ABC):
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

    info: AdapterInfo
    # Resumable App: the configuration in which ADK itself stops at a long-running call even when a
    # sibling call answered in the same step. Off only in tests that show what happens without it.
    resumable: bool = True
    # Delegates called as tools (delegation, `via="tool"`) as single_turn sub_agents, ADK's recommended way. True
    # only in the test that shows what `AgentTool(agent=...)` does instead (it cannot resume a paused delegate).
    agent_tool: bool = False

    async def start(self, ctx: LegContext) -> LegResult:
        adk = _adk()
        # where the session lives: the SQLite file under the workdir, or (`--store`) only which store holds it
        where = {"db": os.path.join(ctx.workdir, DB_NAME)} if ctx.store.kind == "sqlite" else {"store": ctx.store.kind}
        state: dict[str, Any] = {
            **where,
            "app": APP_NAME,
            "user": USER_ID,
            "session": f"arena-{ctx.item.id}-{uuid.uuid4().hex}",
        }
        async with _sessions(ctx, state) as service:
            await service.create_session(app_name=state["app"], user_id=state["user"], session_id=state["session"])
        types = adk["types"]
        message = types.Content(role="user", parts=[types.Part(text=ctx.item.input)])
        return await self._leg(ctx, state, message, invocation_id=None)

    async def resume(self, state: dict[str, Any], decision: Decision | DecisionSet, ctx: LegContext) -> LegResult:
        types = _adk()["types"]
        if isinstance(decision, Decision) and decision.kind is DecisionKind.message:
            # A new message instead of a decision: the user's text as the session's next user turn, with no
            # invocation_id and no FunctionResponse. ADK: "Function responses resume an existing invocation while
            # text starts a new one" (Runner._validate_new_message); the paused call is left to ADK.
            message = types.Content(role="user", parts=[types.Part(text=decision.text)])
            return await self._leg(ctx, state, message, invocation_id=None)
        if isinstance(decision, DecisionSet):
            # One ToolConfirmation per decision, all in one message. It carries a bool to the framework: a
            # denial and an edit (ADK checks that the confirmed call's arguments are the stored ones) are both
            # rejections, which the model reads as ADK's fixed text.
            # A held call without a decision gets no confirmation; a null decision confirms None; a decision naming
            # a call that is not held is sent under that id. What ADK does then is what resume_safety measures.
            parts = []
            held_calls = state.get("calls") or [{"confirm_id": state["call_id"], "call_id": state.get("model_call_id")}]
            known = {h["call_id"]: h["confirm_id"] for h in held_calls}
            for d in decision.decisions:
                confirmed = None if d.kind is DecisionKind.null else d.kind is DecisionKind.approve
                answer = {"confirmed": confirmed, "payload": d.as_text() or None}
                parts.append(types.Part(function_response=types.FunctionResponse(
                    id=known.get(d.call_id, d.call_id), name=CONFIRMATION_CALL, response=answer)))
            message = types.Content(role="user", parts=parts)
            return await self._leg(ctx, state, message, invocation_id=state["invocation"])
        if state["call_name"] == CONFIRMATION_CALL:
            # A ToolConfirmation. An answer confirms (its text is what the approval tool returns);
            # only a denial rejects.
            answer = {"confirmed": decision.kind is not DecisionKind.deny, "payload": decision.as_text()}
        else:
            answer = self._lro_response(decision)
        response = types.FunctionResponse(id=state["call_id"], name=state["call_name"], response=answer)
        message = types.Content(role="user", parts=[types.Part(function_response=response)])
        return await self._leg(ctx, state, message, invocation_id=state["invocation"])

    async def add_input(self, state: dict[str, Any], text: str, ctx: LegContext) -> dict[str, Any]:
        """Input while paused (the `input` channel), emulated: ADK has no API for input to a paused invocation (text
        through Runner.run_async starts a new invocation, the `message` channel, and Runner._validate_new_message
        refuses text beside the resuming FunctionResponse). So the note is written into the stored session by hand,
        a user-authored text Event (stamped with the paused invocation_id) through the session service's
        `append_event`; nothing runs, and the state to resume is unchanged. What ADK then makes of that event is
        ADK's: its contents builder (`rearrange_events_for_latest_function_response`, flows/llm_flows/tools/
        _rearranger.py) drops every event between the paused call and its result from the first request after the
        resume, and shows the note from the next request on, after the resumed call's result."""
        adk = _adk()
        types = adk["types"]
        async with _sessions(ctx, state) as service:
            session = await service.get_session(app_name=state["app"], user_id=state["user"],
                                                session_id=state["session"])
            if session is None:
                raise LookupError(f"no stored ADK session {state['session']!r} to add input to")
            note = adk["Event"](author="user", invocation_id=state["invocation"],
                                content=types.Content(role="user", parts=[types.Part(text=text)]))
            await service.append_event(session, note)
        return state

    # -- per mechanism -----------------------------------------------------------------------------

    @abstractmethod
    def _approval_tool(self, spec: ToolSpec) -> Any:
        """The framework-native approval tool for this mechanism."""

    def _lro_response(self, decision: Decision) -> dict[str, Any]:
        raise RuntimeError(f"{type(self).__name__} pauses only on tool confirmations")

    def _lro_pauses(self, event: Any, approval: str | None) -> list[tuple[Any, PendingRequest]]:
        """Pause calls of a long-running approval tool on this event (none by default)."""
        return []

    def _confirmed_tools(self, ctx: LegContext) -> set[str]:
        """Tools whose calls pause as adk_request_confirmation."""
        return set(ctx.gated_tools)

    # -- shared ------------------------------------------------------------------------------------

    def _tools(self, ctx: LegContext, specs: list[ToolSpec]) -> list[Any]:
        adk = _adk()
        tools = []
        for spec in specs:
            if spec.kind is ToolKind.approval:
                tools.append(self._approval_tool(spec))
            elif spec.requires_approval:
                tools.append(_gated_tool(spec, ctx))
            elif spec.body_pause:
                tools.append(_body_tool(spec, ctx))
            else:
                tools.append(adk["HarnessTool"](spec, ctx))
        return tools

    def _app(self, ctx: LegContext) -> Any:
        adk = _adk()
        # max_retries=0: LiteLLM's openai client retries twice by default; no adapter's client retries
        model = adk["LiteLlm"](model="openai/" + ctx.model.name, api_base=ctx.model.base_url, api_key=ctx.model.api_key,
                               max_retries=0)
        instructions = ctx.instructions
        delegates = [_delegate_agent(spec, model, self._tools(ctx, ctx.own_tools(spec.name)), self.agent_tool)
                     for spec in ctx.agents]
        wrapped = [d for d, spec in zip(delegates, ctx.agents) if self.agent_tool and spec.via == "tool"]
        agent = adk["LlmAgent"](
            name=AGENT_NAME,
            model=model,
            # A provider, so ADK inserts the text verbatim (no {placeholder} state templating).
            instruction=lambda _readonly_ctx: instructions,
            tools=self._tools(ctx, ctx.own_tools(None) if ctx.agents else ctx.tools.specs) + [
                adk["AgentTool"](agent=d) for d in wrapped],
            **({"sub_agents": [d for d in delegates if all(d is not w for w in wrapped)]} if delegates else {}),
        )
        resumability = adk["ResumabilityConfig"](is_resumable=True) if self.resumable else None
        return adk["App"](name=APP_NAME, root_agent=agent, resumability_config=resumability)

    async def _leg(self, ctx: LegContext, state: dict[str, Any], message: Any, invocation_id: str | None) -> LegResult:
        """Run the Runner until its event stream ends by itself; then read how the run stopped."""
        adk = _adk()
        events: list[Any] = []
        # a streamed leg: ADK's SSE mode, partial events (the model's chunks) besides the aggregated ones
        streaming = {"run_config": adk["RunConfig"](streaming_mode=adk["StreamingMode"].SSE)} if ctx.stream else {}
        told_calls: set[str] = set()
        async with _sessions(ctx, state) as service:
            runner = adk["Runner"](app=self._app(ctx), session_service=service)
            try:
                stream = runner.run_async(
                    user_id=state["user"], session_id=state["session"], invocation_id=invocation_id,
                    new_message=message, **streaming,
                )
                try:
                    async for event in stream:
                        events.append(event)
                        if ctx.stream:
                            _tell(ctx, event, told_calls)
                finally:
                    await stream.aclose()
            finally:
                await runner.close()
        if ctx.stream:  # the partial events are chunks of the aggregated ones that follow them
            events = [e for e in events if not e.partial]
        return self._outcome(ctx, state, events)

    def _pause_calls(self, ctx: LegContext, event: Any) -> list[tuple[Any, PendingRequest]]:
        """(call to answer, the request it stands for) for each pause call on this event."""
        approval = next((s.name for s in ctx.tools.specs if s.kind is ToolKind.approval), None)
        out = self._lro_pauses(event, approval)
        confirmed = self._confirmed_tools(ctx) | {s.name for s in ctx.body_pause_tools}
        ids = event.long_running_tool_ids or set()
        for fc in event.get_function_calls():
            if fc.id in ids and fc.name == CONFIRMATION_CALL:
                original = (fc.args or {}).get("originalFunctionCall") or {}
                if original.get("name") in confirmed:
                    args = dict(original.get("args") or {})
                    shown = ((fc.args or {}).get("toolConfirmation") or {}).get("payload")
                    if isinstance(shown, dict) and "amount" in shown:  # what a paused tool body will charge
                        args["amount"] = shown["amount"]
                    out.append((fc, PendingRequest(tool=original["name"], args=args, call_id=original.get("id"))))
        return out

    @staticmethod
    def _went_on(ctx: LegContext, events: list[Any], index: int) -> bool:
        """Whether the run went on after the pause call on `events[index]`: any later model output (text or calls),
        whatever the event flags say. With delegates, only the asking delegate's own and the desk's output count: a
        sibling delegate of the same desk turn still runs its own branch to its own gate (ADK runs them at once)."""
        asking = events[index].author
        own = {AGENT_NAME, asking} if ctx.agents else {AGENT_NAME}
        return any(e.author in own and (_text(e) or e.get_function_calls()) for e in events[index + 1 :])

    def _outcome(self, ctx: LegContext, state: dict[str, Any], events: list[Any]) -> LegResult:
        authors = {AGENT_NAME, *(a.name for a in ctx.agents)}  # the run's agents (the desk and its delegates)
        answered = {fr.id for e in events for fr in e.get_function_responses() if fr.id}
        pause: tuple[int, Any, Any, PendingRequest] | None = None
        for index, event in enumerate(events):
            for call, pending in self._pause_calls(ctx, event):
                if call.id not in answered:
                    pause = (index, event, call, pending)
        # the events that hold the pause: the pause call's own; with delegates, every event of the leg (each
        # delegate of the desk's turn asks on an event of its own, authored by it)
        holding = ([e for e in events] if ctx.agents else [pause[1]]) if pause else []
        held = [(call, pending) for e in holding for call, pending in self._pause_calls(ctx, e)
                if call.id not in answered and call.name == CONFIRMATION_CALL and pending.tool in ctx.gated_tools]
        if ctx.agents:  # whose call it is: the author of the event that asks (ADK names the agent that ran the tool)
            asking = {call.id: e.author for e in holding for call, _ in self._pause_calls(ctx, e)}
            held = [(call, pending.model_copy(update={"agent": asking[call.id]})) for call, pending in held]
            if pause is not None:
                pause = (*pause[:3], pause[3].model_copy(update={"agent": pause[1].author}))
        if pause is not None and len(held) > 1:  # several gated calls of one turn, each with its confirmation
            index, event = pause[0], pause[1]
            went_on = any(self._went_on(ctx, events, i) for i, e in enumerate(events)
                          if any(c.id in {h.id for h, _ in held} for c in e.get_function_calls()))
            if not went_on:
                paused = {**_where(state), "invocation": event.invocation_id,
                          "call_id": held[0][0].id, "call_name": CONFIRMATION_CALL,
                          "calls": [{"confirm_id": c.id, "call_id": p.call_id} for c, p in held]}
                return LegResult.suspended([p for _, p in held], paused)
        if pause is not None:
            index, event, call, pending = pause
            # Did the framework go on after the pause call? Any later model output (text or calls)
            # means it did not stop there, whatever the event flags say.
            went_on = self._went_on(ctx, events, index)
            if not went_on:
                paused = {
                    **_where(state),
                    "invocation": event.invocation_id,
                    "call_id": call.id,
                    "call_name": call.name,
                    "model_call_id": pending.call_id,  # the id the model gave the paused call
                }
                return LegResult.suspended(pending, paused)
        finals = [e for e in events if e.author in authors and _text(e) and not e.partial]
        if finals:
            return LegResult.finished(_text(finals[-1]))
        if pause is not None:
            return LegResult.errored("the run went on after the pause call but gave no final answer")
        return LegResult.errored("the run ended with neither a final answer nor a pending approval")


def _delegate_agent(spec: AgentSpec, model: Any, tools: list[Any], agent_tool: bool = False) -> Any:
    """A delegate as ADK builds one: an `LlmAgent` in the desk's `sub_agents`, holding its own tools.

    `via="tool"`: `mode="single_turn"`, which ADK exposes to the parent as a tool named after the agent (one
    `request` argument; `_SingleTurnAgentTool`) and runs inline in the parent's session (`tool_context.run_node`):
    ADK's recommended replacement for `AgentTool`, whose nested session is discarded so it "cannot resume" a paused
    sub-agent (tools/agent_tool.py). `via="handoff"`: `mode="chat"` (a sub-agent's default), reached by ADK's
    automatic `transfer_to_agent(agent_name=...)` tool. (`agent_tool`, tests only: a plain LlmAgent for the desk to
    wrap in `AgentTool(agent=...)`.)"""
    adk = _adk()
    instructions = spec.instructions
    return adk["LlmAgent"](
        name=spec.name,
        description=spec.description,
        model=model,
        instruction=lambda _readonly_ctx: instructions,
        tools=tools,
        mode=("single_turn" if not agent_tool else None) if spec.via == "tool" else "chat",
    )


def _tell(ctx: LegContext, event: Any, told_calls: set[str]) -> None:
    """Hand over what one event of a streamed leg tells, as a UI acting on ADK's SSE stream reads it.

    Only aggregated (non-partial) events count: ADK's own docs have a UI act on final function calls, and the
    partial events repeat each call chunk by chunk (same call id, no args or partial args, the long-running
    flag already set). Each call is told once by its id. A long-running call is the pause: the approval
    tool's own call, or ADK's adk_request_confirmation, told as the call it holds (originalFunctionCall). A
    function response is a tool's output unless its event asks for that call's confirmation
    (`actions.requested_tool_confirmations`): then it is ADK's placeholder (or the body's interim status)
    that goes with the confirmation request, not a result.
    """
    if event.partial:
        return
    waiting = event.long_running_tool_ids or set()
    for call in event.get_function_calls():
        if call.name == CONFIRMATION_CALL:
            original = (call.args or {}).get("originalFunctionCall") or {}
            if call.id in waiting and original.get("name"):
                ctx.told("pause", original["name"], original.get("id"))
            continue
        if call.id not in told_calls:
            told_calls.add(call.id)
            ctx.told("tool_call", call.name, call.id)
        if call.id in waiting:
            ctx.told("pause", call.name, call.id)
    confirming = event.actions.requested_tool_confirmations or {}
    for response in event.get_function_responses():
        if response.id not in confirming:
            ctx.told("tool_result", response.name, response.id, _response_text(response.response))


def _response_text(response: Any) -> str:
    """A tool's output as the stream carries it: ADK's {"result": value} envelope opened, else the object."""
    if isinstance(response, dict) and set(response) == {"result"}:
        value = response["result"]
        return value if isinstance(value, str) else json.dumps(value, default=str)
    return json.dumps(response, default=str)


def _body_tool(spec: ToolSpec, ctx: LegContext) -> Any:
    """A tool whose body pauses: prepare, then `tool_context.request_confirmation(payload=amount)`.

    ADK pauses on the confirmation request and, once it is answered, runs the tool again from its
    first line with `tool_context.tool_confirmation` set: commit if confirmed, abort if not.
    """
    adk = _adk()

    async def run(tool_context: Any, args: dict[str, Any]) -> Any:
        # the same id on the run after the confirmation: ADK rebuilds the ToolContext from the original call
        call_id = tool_context.function_call_id
        prepared = await bodypause.prepare(ctx.tools, spec, args, call_id=call_id)
        if not bodypause.ready(prepared):
            return bodypause.refused(prepared)
        confirmation = tool_context.tool_confirmation
        if confirmation is None:
            tool_context.request_confirmation(hint=f"Approve charging ${prepared.get('amount')}",
                                              payload={"amount": prepared.get("amount")})
            return {"status": "awaiting the traveller's confirmation"}
        text = confirmation.payload if isinstance(confirmation.payload, str) else ""
        decision = Decision(kind=DecisionKind.approve) if confirmation.confirmed else Decision(
            kind=DecisionKind.deny, text=text.removeprefix("DENIED").lstrip(": "))
        return await bodypause.finish(ctx.tools, spec, prepared, decision, call_id=call_id)

    return adk["SpecFunctionTool"](_spec_function(spec, run, adk["ToolContext"]))


def _gated_tool(spec: ToolSpec, ctx: LegContext) -> Any:
    """A gated harness tool: ADK asks for confirmation first, and runs the harness call only if confirmed."""
    adk = _adk()

    async def run(tool_context: Any, args: dict[str, Any]) -> str:
        return await ctx.tools.acall(spec.name, args, call_id=tool_context.function_call_id)

    return adk["SpecFunctionTool"](_spec_function(spec, run, adk["ToolContext"]), require_confirmation=True)


TOOL_GATE_MECHANISM = (
    "FunctionTool(require_confirmation=True) on each gated tool: adk_request_confirmation (long-running) in a "
    "resumable App; answered with a ToolConfirmation FunctionResponse; ADK runs the held call itself if confirmed"
)
TOOL_GATE_NOTES = (
    "Gated tools: confirmed, ADK executes the held call and the model reads the tool's own result (no note); "
    f"rejected, the call never runs and the model reads ADK's fixed {REJECTED_RESULT!r} (no reason)."
)


BODY_PAUSE_MECHANISM = (
    "tool_context.request_confirmation(payload=amount) inside the tool's body after its prepare step "
    "(adk_request_confirmation, resumable App); answered with a ToolConfirmation: ADK runs the tool again from "
    "its first line with tool_context.tool_confirmation set"
)
GATE_CAPABILITIES = Capabilities(deny_reason=False, approve_note=False, free_text=False, edit_args=False,
                                 notes=TOOL_GATE_NOTES + " An edit is a rejection: ADK refuses a confirmation whose "
                                 "arguments differ from the held call's.")
MULTI_CALL_MECHANISM = (
    "one adk_request_confirmation per gated call of the turn on one event (args.originalFunctionCall.id); "
    "answered with one ToolConfirmation FunctionResponse per call in one message"
)
MESSAGE_MECHANISM = (
    "Runner.run_async(user_id, session_id, new_message=Content(role='user', parts=[Part(text)])) on the paused "
    "session with no invocation_id and no FunctionResponse: a new invocation (ADK: function responses resume an "
    "invocation, text starts a new one); the pending confirmation/long-running call is left unanswered to ADK"
)
ALWAYS_MECHANISM = (
    "ADK has no approve/reject-always: a ToolConfirmation (tools/tool_confirmation.py: hint, confirmed, payload) "
    "answers only the adk_request_confirmation it is sent for; FunctionTool(require_confirmation=bool|callable) is "
    "the app's own predicate, not a human decision; no session-level permission or approval policy in google-adk 2.13 "
    "(flows/llm_flows/tools/_confirmation.py, plugins/) or its tool-confirmation docs (tools-custom/confirmation)"
)
INPUT_MECHANISM = (
    "by hand: a user text Event appended to the paused session via SqliteSessionService.append_event (ADK has no "
    "input-to-a-paused-invocation API; Runner refuses text beside the resuming FunctionResponse); ADK's contents "
    "builder drops it from the first request after the resume and shows it from the next, after the resumed call"
)
NESTED_MECHANISM = (
    "LlmAgent(sub_agents=[LlmAgent(name=<delegate>, mode='single_turn', tools=[...])]): ADK exposes each single_turn "
    "sub-agent to the desk as a tool named after it (one 'request' argument, _SingleTurnAgentTool) and runs it inline "
    "in the desk's session (tool_context.run_node, branch '<delegate>@<call id>'); the delegate's "
    "FunctionTool(require_confirmation=True) call emits adk_request_confirmation authored by the delegate and the "
    "resumable App stops; answered with a ToolConfirmation FunctionResponse via Runner.run_async(invocation_id=...). "
    "Not AgentTool(agent=...): its nested InMemorySessionService session is discarded, so a paused sub-agent returns "
    "'Error: ... which AgentTool cannot resume' (tools/agent_tool.py, which recommends single_turn sub_agents)"
)
HANDOFF_MECHANISM = (
    "LlmAgent(sub_agents=[LlmAgent(name=<delegate>, mode='chat', tools=[...])]): ADK's automatic "
    "transfer_to_agent(agent_name=...) tool hands the invocation to the delegate; its "
    "FunctionTool(require_confirmation=True) call emits adk_request_confirmation authored by the delegate and the "
    "resumable App stops; answered with a ToolConfirmation FunctionResponse via Runner.run_async(invocation_id=...), "
    "which resumes in the delegate"
)
POSTGRES_MECHANISM = (
    "google.adk.sessions.DatabaseSessionService(db_url='postgresql+asyncpg://.../<item db>') (SQLAlchemy async, "
    "ADK's own tables created on first use) in place of SqliteSessionService, opened and closed per leg; the paused "
    "state is only the app/user/session ids and the invocation_id, resumed via Runner.run_async(invocation_id=...)"
)
REDIS_MECHANISM = (
    "google.adk.integrations.redis.RedisSessionService (ADK 2.13, the google-adk[redis] extra: redis-py asyncio, "
    "plain GET/SET/WATCH-MULTI, no Redis modules) with RedisSessionServiceConfig(key_prefix='<item prefix>"
    "adk:session:'; default ttl_seconds 7 days) in place of SqliteSessionService: one JSON value per session "
    "(events and state) under '<prefix>adk:session:<app>:<user>:<session>'; resumed via Runner.run_async("
    "invocation_id=...)"
)
# the channels both ADK adapters have besides their approval tool's pause
GATE_CHANNELS = (
    Channel(name="tool_gate", kind="native", mechanism=TOOL_GATE_MECHANISM, carries=GATE_CAPABILITIES),
    Channel(name="body_pause", kind="native", mechanism=BODY_PAUSE_MECHANISM),
    Channel(name="multi_call", kind="native", mechanism=MULTI_CALL_MECHANISM),
    Channel(name="recover", kind="native", mechanism=(
        "the SqliteSessionService session (with --store, the postgres/redis channel's session service) and the paused "
        "invocation_id, in a new process: the same FunctionResponse sent again via Runner.run_async(invocation_id=...) "
        "(ADK docs, resume a stopped agent with a resumable App)")),
    Channel(name="message", kind="native", mechanism=MESSAGE_MECHANISM),
    Channel(name="always", kind="unsupported", mechanism=ALWAYS_MECHANISM),
    Channel(name="input", kind="emulated", mechanism=INPUT_MECHANISM),
    Channel(name="nested", kind="native", mechanism=NESTED_MECHANISM),
    Channel(name="handoff", kind="native", mechanism=HANDOFF_MECHANISM),
    Channel(name="multi_nested", kind="unsupported", mechanism=(
        "ADK runs the delegates of one turn at once; the first to ask for a confirmation ends the desk's step and "
        "ADK cancels the others, before or after their own ask (a race): if both asked, only one branch goes on at "
        "the resume and the other's confirmed call never runs; if not, the pause holds one delegate's call and ADK "
        "re-runs the other or refuses the resume ('Function call not found'), varying from run to run")),
    Channel(name="postgres", kind="native", mechanism=POSTGRES_MECHANISM),
    Channel(name="redis", kind="native", mechanism=REDIS_MECHANISM),
    Channel(name="stream", kind="native", mechanism=(
        "Runner.run_async(..., run_config=RunConfig(streaming_mode=StreamingMode.SSE)) read to its end: the "
        "aggregated (non-partial) events' function calls (once per call id) and function responses, and their "
        "long_running_tool_ids as the pause (the approval call, or adk_request_confirmation's originalFunctionCall); "
        "the paused state read from those events as in the plain run (invocation_id, the call to answer)")),
)


class GoogleADKAdapter(_ADKBase):
    order = 60
    info = AdapterInfo(
        name="google_adk",
        framework="google-adk",
        channels=(
            Channel(
                name="ask",
                kind="native",
                mechanism=(
                    "LongRunningFunctionTool on the approval tool (body returns None: no interim response) in an "
                    "App with ResumabilityConfig(is_resumable=True); SqliteSessionService; resumed with a "
                    "FunctionResponse for the same call id via Runner.run_async(invocation_id=...)"
                ),
                carries=Capabilities(
                    deny_reason=True,
                    approve_note=True,
                    free_text=True,
                    notes=(
                        "The decision is the long-running call's FunctionResponse, {'result': decision.as_text()}, "
                        "so notes, reasons and answers all reach the model as request_approval's result. The pause "
                        "holds only with a None-returning function and a resumable App: a function returning a "
                        "pending status lets ADK call the model again at once, and a non-resumable App goes on "
                        "after a sibling call's response. " + TOOL_GATE_NOTES
                    ),
                ),
            ),
            *GATE_CHANNELS,
        ),
    )

    # What the long-running function returns at once. None: no interim FunctionResponse. Anything
    # else (ADK's docs return {"status": "pending"}) is sent to the model as the call's result and
    # the loop carries on; tests set it to show exactly that.
    interim_result: Any = None

    def _approval_tool(self, spec: ToolSpec) -> Any:
        adk = _adk()
        interim = self.interim_result

        async def pending(tool_context: Any, args: dict[str, Any]) -> Any:
            return interim

        return adk["SpecLongRunningTool"](_spec_function(spec, pending, adk["ToolContext"]))

    def _lro_response(self, decision: Decision) -> dict[str, Any]:
        return {"result": decision.as_text()}

    def _lro_pauses(self, event: Any, approval: str | None) -> list[tuple[Any, PendingRequest]]:
        ids = event.long_running_tool_ids or set()
        return [
            (fc, PendingRequest(tool=fc.name, args=dict(fc.args or {}), call_id=fc.id))
            for fc in event.get_function_calls()
            if fc.id in ids and fc.name == approval
        ]


class GoogleADKConfirmAdapter(_ADKBase):
    order = 61
    info = AdapterInfo(
        name="google_adk_confirm",
        framework="google-adk",
        channels=(
            Channel(
                name="ask",
                kind="native",
                mechanism=(
                    "FunctionTool(require_confirmation=True) on the approval tool: adk_request_confirmation "
                    "(long-running) in a resumable App; SqliteSessionService; answered with a ToolConfirmation "
                    "FunctionResponse via Runner.run_async(invocation_id=...)"
                ),
                carries=Capabilities(
                    deny_reason=False,
                    approve_note=True,
                    free_text=True,
                    notes=(
                        "A ToolConfirmation is confirmed True/False plus a payload. Confirmed: ADK runs the "
                        "adapter-owned request_approval body, which returns the payload (decision.as_text()), so "
                        "notes and answers reach the model. Rejected: ADK does not run the body and writes its own "
                        f"fixed result {REJECTED_RESULT!r}; the reason sent in the payload is dropped. " + TOOL_GATE_NOTES
                    ),
                ),
            ),
            *GATE_CHANNELS,
        ),
    )

    def _approval_tool(self, spec: ToolSpec) -> Any:
        adk = _adk()

        async def confirmed(tool_context: Any, args: dict[str, Any]) -> str:
            # ADK runs this only once the call was confirmed; the decision travels in the payload.
            confirmation = tool_context.tool_confirmation
            payload = confirmation.payload if confirmation is not None else None
            return payload if isinstance(payload, str) else Decision(kind=DecisionKind.approve).as_text()

        return adk["SpecFunctionTool"](_spec_function(spec, confirmed, adk["ToolContext"]), require_confirmation=True)

    def _confirmed_tools(self, ctx: LegContext) -> set[str]:
        approval = {s.name for s in ctx.tools.specs if s.kind is ToolKind.approval}
        return approval | set(ctx.gated_tools)
