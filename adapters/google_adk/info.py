"""What the two ADK adapters declare: their pause channels, each in ADK's terms, and what each carries.

Both share every channel but `ask` (GATE_CHANNELS): google_adk's `ask` is a LongRunningFunctionTool,
google_adk_confirm's a FunctionTool(require_confirmation=True).
"""

from __future__ import annotations

from arena.for_adapters import AdapterInfo, Capabilities, Channel
from arena_builtins.arenas.delegation.channel import HANDOFF, MULTI_NESTED, NESTED

REJECTED_RESULT = {"error": "This tool call is rejected."}  # what FunctionTool.run_async returns on reject

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
    Channel(name=NESTED, kind="native", mechanism=NESTED_MECHANISM),
    Channel(name=HANDOFF, kind="native", mechanism=HANDOFF_MECHANISM),
    Channel(name=MULTI_NESTED, kind="unsupported", mechanism=(
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

# google_adk: LongRunningFunctionTool on the approval tool
INFO = AdapterInfo(
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

# google_adk_confirm: ADK tool confirmation on the approval tool
CONFIRM_INFO = AdapterInfo(
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
