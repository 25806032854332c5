"""agno adapter: agno's own HITL tool flags, the run paused in agno's SqliteDb, resumed with `acontinue_run`.

Mechanism. Every harness tool becomes an `agno.tools.function.Function` built from its JSON schema
(`skip_entrypoint_processing=True`, the way agno's MCP toolkit wraps foreign tools); its body is one
harness call, `ctx.tools.acall(name, args, call_id=fc.call_id)`, where `fc` is agno's own `FunctionCall`
(agno injects it by the parameter's name), whose `call_id` is the model's id for the call.

- The approval tool (`ask`) is a `Function(external_execution=True)`: agno never executes it; the run
  stops with `RunOutput.status == RunStatus.paused` and one `RunRequirement` whose `tool_execution`
  holds the call (name, args, `tool_call_id`). Why external execution and not the other two flags:
  request_approval *is* the human step, so its result must be the human's answer. With
  `external_execution` agno takes that result verbatim (`RunRequirement.set_external_execution_result`)
  and sends it as the call's tool message, so the model reads `decision.as_text()` ("APPROVED: note",
  "DENIED: reason", an answer) exactly as vanilla's model does. `requires_confirmation` would make agno
  execute the tool on `confirm()` (and carry no note), and `requires_user_input` fills in the tool's
  *arguments* and then executes it: neither makes the decision the result.
- A gated tool (`tool_gate`: `requires_approval` in the spec) is a `Function(requires_confirmation=True)`,
  agno's tool-level gate: agno never calls it on the model's call and pauses with a requirement for it.
  Resume calls `RunRequirement.confirm()` (agno then executes the held call itself, in the resumed leg)
  or `RunRequirement.reject(note=decision.as_text())`: agno never runs the call and sends the note as the
  call's tool message (`reject_tool_call`: the note is `FunctionCall.error`, the message's content), so a
  deny reason reaches the model. `confirm()` takes no note and no arguments: an approve note is not
  carried, and an edit is sent as a rejection whose note is `decision.as_text()` (`edit_args=False`).
- Several gated calls in one model turn pause together (one requirement each): `multi_call`, one
  decision per requirement by `tool_call_id`.

State and a new process. The agent has `db=SqliteDb(db_file=<item workdir>/agno.db)`: agno persists the
paused run (messages, tool executions, requirements) in its session there. The leg state is JSON: the
db file, the session id, the run id, the paused requirements as agno serialises them
(`RunRequirement.to_dict()`, what an AgentOS client sends back) and the pending call ids. A resume,
in any process, rebuilds the requirements with `RunRequirement.from_dict`, applies the decision to the
requirement whose `tool_execution.tool_call_id` it names, and calls
`agent.acontinue_run(run_id=..., session_id=..., requirements=[...])`: agno reads the run itself (its
messages and tool results) back from its db. The agent also has `checkpoint="tool-batch"`, agno's
mid-run durability: the run is written after every tool batch (status RUNNING), not only at a pause or
the end.

On a server (`--store`, `ctx.store`), the same agent (or Team and its members) gets agno's own db for it in place
of SqliteDb, built per leg: `agno.db.postgres.PostgresDb(db_url=<the item's database, postgresql+psycopg>,
db_schema="ai")`, which creates its schema and tables (agno_sessions, agno_runs, ...) in the item's own database, or
`agno.db.redis.RedisDb(db_url=..., db_prefix=<the item's prefix without its trailing ":">)`, whose keys are all
`<db_prefix>:<table type>:<id>` (sessions, runs and their index sets; plain strings, sorted sets and sets, no Redis
module). Nothing else changes: the leg state names the db (no file) and the resume is the same `acontinue_run`.
Observed on agno 3.1.10: durable_state and crash_recovery end on both as on SqliteDb (crash_recovery's `continue`
items fail the same way, agno's, not the store's).

Recovery after a crash (`recover`), two ways agno documents. `resume`: the same call again in a new
process, with the state saved at the pause and the same decision (HITL docs: continue by run id with the
resolved requirements); agno keeps its own copy of a call that already has a result and runs the others
again under the same call id. `continue` (`continue_run`): `acontinue_run(run_id=..., session_id=...)` with
no requirements, which resumes a RUNNING run in place from its last tool-batch checkpoint (agno's
checkpointing docs, crash recovery). agno never persists the decision itself (requirements come from the
caller), so when the process died before the first checkpoint after the resume, its db still holds the
pause: agno then refuses an unanswered external call ("requires external execution, cannot continue run")
and treats an unconfirmed gated call as rejected (observed on crash_recovery).

Hostile resumes (resume_safety). agno's API acts on held requirements (confirm/reject/set a result): a
decision naming a call the pause does not hold has nothing to act on and is dropped; a held call
without a decision is passed on unresolved (agno then rejects an unconfirmed gated call with its own
text, "Function call was rejected by the user", and asks the model again; it refuses an unanswered
external call with a ValueError); a null decision (no value to carry through confirm/reject) is
treated as no decision. A replayed state is passed to agno as it is, never checked first: agno applies
a stale pause's requirements to the run as its db holds it now (it rejects the current pause's held
call, for which none was given, and asks the model again) rather than refusing the stale resume.

A new message instead of a decision (`message`, interruptions). agno's HITL API has no way to hand a paused run a
user message: a paused run continues only with its requirements resolved (`acontinue_run(requirements=...)`), and
`acontinue_run(input=...)` is documented for a COMPLETED run's follow-up or a RUNNING/ERROR resume, not a pause.
What agno's own chat interfaces do with a user's next message in a thread that holds a paused run is a new run in
the thread's session: AgentOS's AG-UI router (`agno/os/interfaces/agui/router.py`, a request without trailing tool
messages is "Fresh run: new user input", `entity.arun(input, session_id=thread_id)`) and its Slack handler
(`agno/os/interfaces/slack/event_handler.py`, `entity.arun(message_text, session_id=...)`). So the message leg is
`agent.arun(text, session_id=<the paused run's session>, add_history_to_context=True)` (agno's switch that puts a
session's earlier runs in a new run's context; a plain or streamed run like any other leg). The paused run is left
as agno keeps it. Observed on agno 3.1.10: agno leaves PAUSED runs out of a session's history
(`agno.run.base.HISTORY_SKIP_STATUSES`), so the new run's model is sent the system prompt and the message alone
(not the request it changes, not the held call); the held call is never answered and its run stays PAUSED in the
db, where a late `acontinue_run` with `confirm()` (interruptions' late approval) still executes it.

"Approve always" (`always`, interruptions): agno has none, so the channel is declared unsupported. A decision goes
to one requirement (`RunRequirement.confirm()` / `reject(note=...)`, agno/run/requirement.py), a tool's
`requires_confirmation` is a plain bool agno checks at every call (agno/tools/function.py), AgentOS's approvals API
resolves one approval as approved or rejected (agno/os/routers/approvals/schema.py, `ApprovalResolve`) and its Slack
and AG-UI interfaces show Approve/Deny per call; docs.agno.com/hitl documents no standing decision, and the feature
request for per-tool ALWAYS_ALLOW / ASK_ONCE_PER_CHAT permissions (agno-agi/agno#2780) was closed without one.

Input while paused (`input`, interruptions). agno has no call that adds input to a PAUSED run without deciding it: a
paused run moves only through `acontinue_run`, which resolves its requirements. Its `input` argument ("new
user-message text to append before resuming", also the AgentOS /continue form field) is documented for a COMPLETED
run's follow-up or a RUNNING/ERROR resume. So `add_input` keeps the text in the leg state (emulated) and the resume
passes it as `acontinue_run(..., requirements=[...], input=text)`. Observed on agno 3.1.10: agno appends it to the
run's messages before it answers the held call (`_maybe_append_input_message`, then `handle_tool_call_updates`), so
the model is sent the assistant's book_room call, the note as a user message, then the call's result: the note is
seen, in an order the OpenAI Chat Completions API refuses (a tool call must be followed by its result); the
scripted endpoint takes it.

Sibling calls. agno runs every call of the turn that carries no HITL flag (`asyncio.gather`) and holds
only the flagged ones: a consequential `book_room` emitted in the same turn as request_approval
(scripted-eager) executes in leg 0, before the run pauses; its result stays in the run's messages and it
is not executed again on resume. The same holds for reckless-parallel's second `search_rooms` beside a
gated book_room. Nothing here special-cases it; the harness's tool log shows it.

Streamed run (`stream`): every leg is `arun` / `acontinue_run` with `stream=True, stream_events=True,
yield_run_output=True` (agno then streams the model's answer too), read to its end. What it tells: each
ToolCallStartedEvent (a call agno runs: flagged calls, which agno holds, have none), each ToolCallCompletedEvent (its
result; a rejected or externally answered call has none), each active requirement of a RunPausedEvent (the pause).
The RunOutput the stream yields last is read as the plain run's result; a failed run ends on a RunErrorEvent
without it, and is read back from the session (`aget_run_output`). Observed on agno 3.1.10: a streamed run with
`checkpoint="tool-batch"` never pauses. The tool-batch callback copies the streaming loop's per-turn ModelResponse,
whose tool executions the stream never fills, over `run_response.tools` after every batch, the held one included;
agno then finds no paused tool, ends the run COMPLETED with no content, and the held call is neither run nor
answered. The agent is the same as in a plain run (the checkpoint is what `recover` stands on), so this shows.

No body pause: agno's pauses are flags checked before a tool runs (no primitive pauses inside a body), so
`body_pause` is not listed and flight_booking's purchase_hold arrives as an ordinary gated tool.

Delegation (`nested`, `handoff`; only when `agents_of(ctx)` is non-empty). agno's way for an agent to delegate is a
`Team` (`Agent(tools=[...])` refuses an agent's `as_tool()` marker: "To let this agent delegate to another agent,
use a Team"; `as_tool()` only publishes a component on AgentOS's MCP server). The desk is `agno.team.Team(members=[...],
instructions=<desk's>, db=SqliteDb)`, each delegate a member `Agent(id=name, name=name, role=description,
instructions, tools=<its own, gated ones requires_confirmation>, db=<the same SqliteDb>)`, as agno's team HITL
cookbook builds them (cookbook/03_teams/20_human_in_the_loop/confirmation_required.py). The leader holds no harness
tool and reaches a member only through agno's own `delegate_task_to_member(member_id, task)` (agno/team/
_default_tools.py; `member_id` is the member's id, shown in the leader's <team_members>): there is no tool per member
and no tool named after an agent. `via: tool` is `TeamMode.coordinate` (agno's default: the tool runs the member on
the leader's task and returns its answer as the tool result, the leader goes on: an agent called as a tool);
`via: handoff` is `TeamMode.route` with `determine_input_for_members=False`, agno's documented router (the member gets
the user's message verbatim and its reply ends the run; `delegate_task_to_member` with `stop_after_tool_call`).
agno has no transfer of the conversation itself: a routed member sees the user's message, not the leader's turns.
One Team has one mode, so delegates reached both ways at once are refused. No `checkpoint` (agno's team cookbook
sets none, and delegation has no crash to recover from).
A member's gated call pauses the member's run; agno's `delegate_task_to_member` copies its requirements onto the
team run (`_propagate_member_pause`, each stamped `member_agent_id`, `member_agent_name`, `member_run_id`), answers
the leader's tool call "Member '<name>' requires human input before continuing." and the team run ends PAUSED with
every member's requirement in `active_requirements` (two members delegated in one turn run concurrently, each to its
own gate, and pause together). `PendingRequest.agent` is agno's `member_agent_name`. The state is the same JSON as an
agent's (the team run's requirements, `RunRequirement.to_dict()`, with their member stamps); the resume is
`team.acontinue_run(run_id=..., session_id=..., requirements=[...])`, in any process: agno reads the team run and
the members' paused runs back from the team session in SqliteDb, routes each requirement to its member's
`continue_run`, then sends the leader's model the members' results ("Member results after human-in-the-loop
resolution: [<member>]: <answer> ...") as the content of every `delegate_task_to_member` result that had said
"requires human input". Observed on agno 3.1.10: in route mode too the leader's model is asked again after the
resume (agno's member-HITL continuation ignores `respond_directly`), and its answer, not the member's, ends the run.
A streamed team run (`Team.arun(..., stream=True, stream_events=True, yield_run_output=True)`) carries the members'
events too (`stream_member_events`); its pause is the team's `agno.run.team.RunPausedEvent`.

Offline. agno's telemetry is on by default (every run queues a post to agno's API host): `AGNO_TELEMETRY`
is set to "false" before agno is imported, and forced rather than defaulted, because agno re-reads it at
every run and it overrides the agent's own switch (`agent._init.set_telemetry`); the agent is also built
with `telemetry=False`. The model is `agno.models.openai.OpenAILike` (Chat Completions, not streaming)
pointed at `ctx.model` with `max_retries=0` on the openai client, `retries=0` and
`retry_with_guidance=False` on the model and `retries=0` on the agent: one attempt per request. No
compaction, memory, summaries or follow-ups (agno's defaults), so no tokenizer is loaded.
"""

from __future__ import annotations

from .adapter import AgnoAdapter

__all__ = ["AgnoAdapter"]
