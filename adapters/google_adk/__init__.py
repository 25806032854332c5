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
response. What ADK 2.13 really does (measured, see tests/adapters/google_adk/test_outcome.py):
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

Delegation (the `nested` and `handoff` channels; only when `agents_of(ctx)` is non-empty): the run's agent (the
desk) is an `LlmAgent` holding only its own tools, with one `LlmAgent` per delegate in its `sub_agents`, each holding
that delegate's tools (its gated ones are the same `FunctionTool(require_confirmation=True)`). A delegate called as a
tool is a `mode="single_turn"` sub-agent: ADK offers it to the desk as a tool of its name with one `request` argument
(`_SingleTurnAgentTool`) and runs it inline in the desk's session and invocation (`tool_context.run_node`, branch
`<delegate>@<call id>`). That is ADK's recommended form: `AgentTool(agent=...)` runs the agent in a nested Runner
over a throwaway InMemorySessionService, and a paused delegate comes back as the tool result "Error: agent ...
stopped waiting on unresolved long-running tool call(s) ..., which AgentTool cannot resume" (tools/agent_tool.py,
whose docstring and warning point to single_turn sub_agents; measured in
tests/adapters/google_adk/test_delegation.py). A delegate handed the conversation is a `mode="chat"` sub-agent,
reached by ADK's automatic `transfer_to_agent(agent_name=...)` tool. The delegate's gated call emits
`adk_request_confirmation` on an event authored by the delegate: that author is the pending call's `agent`. With two
delegates in one turn each asks on its own event, so the pause collects every unanswered confirmation of the leg. The
state is the same JSON as ever (sqlite path, session, invocation, the confirmation ids), so a new process resumes it
from the session store; the confirmations go back in one message via `Runner.run_async(invocation_id=...)`. What ADK
2.13 does (measured on delegation): one delegate's pause resumes, book_flight / cancel_flight run once when confirmed
and the desk reads the delegate's answer; a rejection is ADK's fixed text, so the reason never reaches the delegate.
Two delegates in one turn run at once; the first to ask (the changes agent) ends the desk's step and ADK cancels the
other, before or after its own ask (a race, plain or streamed). If both asked, both confirmations are held, but on
resume only the cancelled one's branch goes on: the delegate that asked first ends at once without running its
confirmed call, and the desk reads `null` as its answer. If the other had not asked, the pause holds the first
delegate's call alone (a decision for the other's call is then sent under its id, as for any call not held: ADK
re-runs that delegate to a second pause if its call was already recorded, else refuses the message, "Function call
not found"). Which of these happens varies from run to run, so the adapter declares its `multi_nested` channel
`unsupported` with that said: the two-delegate items are not measured on it (their outcome would be a race, not a
measurement).

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

from .adapter import ADKBase, GoogleADKAdapter, GoogleADKConfirmAdapter

__all__ = ["ADKBase", "GoogleADKAdapter", "GoogleADKConfirmAdapter"]
