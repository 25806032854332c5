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

Delegation (`nested`, `handoff`; only when `ctx.agents` is non-empty). agno's way for an agent to delegate is a
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

import os
import uuid
from typing import Any

from arena.for_adapters import (
    AdapterInfo,
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
    async_client,
)

DB_FILE = "agno.db"
PG_SCHEMA = "ai"  # agno's default schema for PostgresDb, made in the item's own database
MAX_TOOL_CALLS = 40  # agno's tool_call_limit for one run (a loop guard, far above any item's needs)
# a streamed leg: agno's events (not only the content), and the run's RunOutput as the stream's last item
STREAMED = {"stream": True, "stream_events": True, "yield_run_output": True}

# agno's switches, set before the first import of agno.
_ENV = {"AGNO_TELEMETRY": "false"}


def _import() -> None:
    """Import agno lazily, with its telemetry off. `AGNO_TELEMETRY` is forced, not defaulted: agno reads it
    at every run and it overrides `Agent(telemetry=False)`, so a "true" inherited from the environment
    would turn telemetry back on."""
    for key, value in _ENV.items():
        os.environ[key] = value
    import agno.agent  # noqa: F401

    _share_cancellation_across_loops()


class _ThreadLockAsync:
    """`async with` over a threading lock: what agno's in-memory cancellation manager holds it for is a few
    dict operations with no await inside, so a short blocking acquire is safe from any event loop."""

    def __init__(self, lock: Any) -> None:
        self._lock = lock

    async def __aenter__(self) -> None:
        self._lock.acquire()

    async def __aexit__(self, *exc: object) -> None:
        self._lock.release()


def _share_cancellation_across_loops() -> None:
    """agno registers every run with one process-wide `InMemoryRunCancellationManager`, whose `asyncio.Lock`
    binds to the first event loop that contends for it. The harness runs concurrent items in one process, each
    on its own loop, so a second loop's run failed with "is bound to a different event loop" (a flaky error
    item, nothing agno's users meet with one loop). The manager installed here is agno's own, with that lock
    guarded by its threading lock instead; cancellation itself is unchanged."""
    from agno.run import cancel
    from agno.run.cancellation_management.in_memory_cancellation_manager import InMemoryRunCancellationManager

    manager = cancel.get_cancellation_manager()
    if isinstance(manager, InMemoryRunCancellationManager) and not isinstance(manager._async_lock, _ThreadLockAsync):
        manager._async_lock = _ThreadLockAsync(manager._lock)


class AgnoAdapter:
    order = 90  # where it stands in `arena list` and the reports (lower first)
    # what a fork server imports before it forks workers (arena/worker/forkserver.py)
    preload = (
        "agno.agent",
        "agno.models.openai",
        "agno.db.sqlite",
        "agno.tools.function",
        "agno.run.requirement",
        "agno.run.agent",
        "openai",
        "sqlalchemy",
        # imported at an agent's first run
        "sqlite3",
        "agno.team",
        "agno.offload",
        "agno.agent._hooks",
        "agno.agent._response",
        "agno.agent._telemetry",
        "agno.utils.callables",
        "agno.utils.names",
    )

    @staticmethod
    def warm() -> None:
        """Set agno's switches in the fork server too, before anything could run there."""
        _import()

    info = AdapterInfo(
        name="agno",
        framework="agno",
        channels=(
            Channel(
                name="ask",
                kind="native",
                mechanism=(
                    "Function(external_execution=True) on request_approval: the run pauses (RunOutput.is_paused, "
                    "RunRequirement in active_requirements); resume with RunRequirement.set_external_execution_result"
                    "(decision text) and agent.acontinue_run(run_id=..., session_id=..., requirements=[...]) on "
                    "SqliteDb"
                ),
                carries=Capabilities(
                    deny_reason=True,
                    approve_note=True,
                    free_text=True,
                    notes=(
                        "The decision is the external call's result (set_external_execution_result), a free string "
                        "agno sends as the request_approval tool message, so notes, reasons and answers all reach the "
                        "model. Gated tools: RunRequirement.reject(note=...) is the held call's tool message; "
                        "confirm() carries no note."
                    ),
                ),
            ),
            Channel(
                name="tool_gate",
                kind="native",
                mechanism=(
                    "Function(requires_confirmation=True) on each gated tool: the run pauses with a RunRequirement; "
                    "RunRequirement.confirm() and agno executes the held call, or RunRequirement.reject(note=decision "
                    "text), whose note agno sends as the call's tool message; agent.acontinue_run(run_id=..., "
                    "requirements=[...])"
                ),
                carries=Capabilities(
                    deny_reason=True, approve_note=False, free_text=False, edit_args=False,
                    notes="reject(note=...) is the held call's result; confirm() takes no note and no arguments: an "
                          "edit is sent as a rejection whose note is the human's edit",
                ),
            ),
            Channel(
                name="multi_call",
                kind="native",
                mechanism=(
                    "every flagged call of the turn is a RunRequirement of the paused run; each confirmed or "
                    "rejected(note=...) by its own decision (by tool_execution.tool_call_id), then one acontinue_run"
                ),
            ),
            Channel(
                name="message",
                kind="native",
                mechanism=(
                    "agent.arun(text, session_id=<the paused run's session>, add_history_to_context=True): a new run "
                    "in the same session, as agno's AgentOS interfaces (AG-UI, Slack) run a user's next message; the "
                    "paused run is left PAUSED, untouched"
                ),
            ),
            Channel(
                name="always",
                kind="unsupported",
                mechanism=(
                    "agno has no decision that stands for later calls: RunRequirement.confirm()/reject(note) decide one "
                    "held call (agno/run/requirement.py), requires_confirmation is a plain bool on the Function, checked "
                    "on every call (agno/tools/function.py), and the approvals API resolves one approval, approved or "
                    "rejected (agno/os/routers/approvals/schema.py); nothing in docs.agno.com/hitl, and the request for "
                    "ALWAYS_ALLOW / ASK_ONCE_PER_CHAT tool permissions (agno-agi/agno#2780) was closed without one"
                ),
            ),
            Channel(
                name="input",
                kind="emulated",
                mechanism=(
                    "add_input keeps the text in the leg state; the resume hands it over as agno's "
                    "acontinue_run(..., requirements=[...], input=text), documented for a COMPLETED or RUNNING/ERROR "
                    "run, not a PAUSED one: agno appends it as a user message between the held call and its result"
                ),
            ),
            Channel(
                name="recover",
                kind="native",
                ways=("resume", "continue"),
                mechanism=(
                    "Agent(checkpoint='tool-batch') on SqliteDb; in a new process, the requirements saved at the pause "
                    "(RunRequirement.to_dict/from_dict) with the same decision and agent.acontinue_run(run_id=..., "
                    "session_id=..., requirements=...), or (way continue) agent.acontinue_run(run_id=..., "
                    "session_id=...) alone, which resumes a RUNNING run in place from its last tool-batch checkpoint "
                    "(agno docs: HITL continue by run id; checkpointing, crash recovery)"
                ),
            ),
            Channel(
                name="nested",
                kind="native",
                mechanism=(
                    "agno.team.Team(mode=TeamMode.coordinate, members=[Agent(id=<name>, tools=[...]), ...], db=SqliteDb): "
                    "the leader calls agno's delegate_task_to_member(member_id, task) tool, which runs the member and "
                    "returns its answer as the tool result; a member's requires_confirmation call pauses the team run "
                    "(TeamRunOutput.is_paused, RunRequirement.member_agent_name in active_requirements); "
                    "team.acontinue_run(run_id=..., session_id=..., requirements=[...]) routes each requirement to its "
                    "member's continue_run and hands the leader the members' results"
                ),
            ),
            Channel(
                name="handoff",
                kind="native",
                mechanism=(
                    "agno.team.Team(mode=TeamMode.route, determine_input_for_members=False, members=[...]): agno's "
                    "router pattern; the leader hands the request to one member with delegate_task_to_member, the member "
                    "gets the user's message verbatim and its reply ends the run (delegate_task_to_member with "
                    "stop_after_tool_call); a member's requires_confirmation call pauses the team run, resumed with "
                    "team.acontinue_run(run_id=..., session_id=..., requirements=[...]). Not a transfer of the "
                    "conversation: agno has no handoff primitive, the member sees the user's message, not the leader's "
                    "turns"
                ),
            ),
            Channel(
                name="stream",
                kind="native",
                mechanism=(
                    "agent.arun(..., stream=True, stream_events=True, yield_run_output=True) and "
                    "acontinue_run(..., stream=True, stream_events=True, yield_run_output=True) read to their end "
                    "(ToolCallStartedEvent, ToolCallCompletedEvent, RunPausedEvent's active requirements); the "
                    "paused run's requirements from the RunOutput the stream yields last (from the session in "
                    "SqliteDb when the stream ends on a RunErrorEvent)"
                ),
            ),
            Channel(
                name="postgres",
                kind="native",
                mechanism=(
                    "agno.db.postgres.PostgresDb(db_url=postgresql+psycopg://<the item's database>, db_schema='ai') as "
                    "the agent's (and a Team's and its members') db instead of SqliteDb: agno creates its schema and "
                    "tables itself (SQLAlchemy, psycopg 3) and keeps the session with its paused run there; resumed "
                    "in a new process with acontinue_run(run_id=..., session_id=..., requirements=[...])"
                ),
            ),
            Channel(
                name="redis",
                kind="native",
                mechanism=(
                    "agno.db.redis.RedisDb(db_url=redis://..., db_prefix=<the item's prefix>) as the agent's (and a "
                    "Team's and its members') db instead of SqliteDb: agno writes every key as "
                    "<db_prefix>:<table>:<id> (JSON strings, sorted-set and set indexes; no Redis module needed) and "
                    "keeps the session with its paused run there; resumed in a new process with "
                    "acontinue_run(run_id=..., session_id=..., requirements=[...])"
                ),
            ),
        ),
    )

    def __init__(self) -> None:
        self._agent: Any = None
        self._model: Any = None
        self._db: Any = None

    async def aclose(self) -> None:
        if self._model is not None and self._model.async_client is not None:
            await self._model.async_client.close()
        self._model = None
        if self._db is not None:
            engine = getattr(self._db, "db_engine", None)  # SqliteDb, PostgresDb
            if engine is not None:
                engine.dispose()
            client = getattr(self._db, "redis_client", None)  # RedisDb
            if client is not None:
                client.close()
            self._db = None

    # -- construction ----------------------------------------------------------------------------

    def _build(self, ctx: LegContext) -> Any:
        if self._agent is not None:
            return self._agent
        _import()
        if ctx.agents:  # delegation: agno's multi-agent construct, a Team of member agents
            return self._build_team(ctx)
        from agno.agent import Agent

        self._model = self._model_for(ctx)
        self._db = _db(ctx)
        self._agent = Agent(
            model=self._model,
            instructions=ctx.instructions,
            tools=[_function(spec, ctx) for spec in ctx.tools.specs],
            db=self._db,
            telemetry=False,
            retries=0,
            # agno's mid-run durability: the run is written to the db after every tool batch (status RUNNING),
            # not only when it pauses or ends, so a crashed run can be continued from there (`continue_run`).
            checkpoint="tool-batch",
            tool_call_limit=MAX_TOOL_CALLS,
        )
        return self._agent

    def _model_for(self, ctx: LegContext) -> Any:
        from agno.models.openai import OpenAILike
        from openai import AsyncOpenAI

        # One attempt per request: no openai-client retries, no agno model retries or guidance retries. The
        # client is handed to the model ready-made (agno uses a cached `async_client` as it is): agno's own
        # `http_client=` takes only an `httpx.AsyncClient`, which the openai SDK's transport here is not.
        client = AsyncOpenAI(base_url=ctx.model.base_url, api_key=ctx.model.api_key, max_retries=0,
                             http_client=async_client())
        return OpenAILike(id=ctx.model.name, base_url=ctx.model.base_url, api_key=ctx.model.api_key,
                          max_retries=0, async_client=client, retries=0, retry_with_guidance=False)

    def _build_team(self, ctx: LegContext) -> Any:
        """The desk as an agno `Team` whose members are the delegates, each an `Agent` holding its own tools (its
        gated ones `requires_confirmation`), all on the one SqliteDb, as agno's team HITL cookbook builds it
        (cookbook/03_teams/20_human_in_the_loop/confirmation_required.py). The leader holds no harness tool: it
        reaches a member only through agno's own `delegate_task_to_member(member_id, task)`. Every member's id is its
        AgentSpec name (agno's member id, what the leader passes as `member_id`). Mode: `TeamMode.coordinate` (the
        leader's tool call runs the member and reads its answer as the tool's result: the agent called as a tool)
        when the delegates are reached as tools, `TeamMode.route` with `determine_input_for_members=False` (agno's
        documented router: the member gets the user's message verbatim and its reply ends the run) when they are
        handed the conversation; agno's Team has one mode, so delegates reached both ways are refused."""
        from agno.agent import Agent
        from agno.team import Team, TeamMode

        vias = {a.via for a in ctx.agents}
        if len(vias) > 1:
            raise ValueError("an agno Team has one mode: its members are all delegated to (coordinate) or all routed "
                             "to (route), not both")
        self._model = self._model_for(ctx)
        self._db = _db(ctx)
        members = [
            Agent(
                id=a.name,
                name=a.name,
                role=a.description,
                model=self._model,
                instructions=a.instructions,
                tools=[_function(spec, ctx) for spec in ctx.own_tools(a.name)],
                db=self._db,
                telemetry=False,
                retries=0,
                tool_call_limit=MAX_TOOL_CALLS,
            )
            for a in ctx.agents
        ]
        routed = vias == {"handoff"}
        self._agent = Team(
            # a fixed id (agno derives none from a missing name but a random one): the Team a new process builds
            # is the team whose session and runs the db holds
            id="desk",
            name="desk",
            model=self._model,
            members=members,
            mode=TeamMode.route if routed else TeamMode.coordinate,
            # route: the user's message goes to the member verbatim (agno's "Router" pattern)
            determine_input_for_members=not routed,
            instructions=ctx.instructions,
            tools=[_function(spec, ctx) for spec in ctx.own_tools(None)],
            db=self._db,
            telemetry=False,
            retries=0,
            tool_call_limit=MAX_TOOL_CALLS,
        )
        return self._agent

    # -- legs ------------------------------------------------------------------------------------

    async def start(self, ctx: LegContext) -> LegResult:
        agent = self._build(ctx)
        session_id = f"arena-{ctx.item.id}-{uuid.uuid4().hex[:8]}"
        if ctx.stream:
            result = await _streamed(agent, agent.arun(ctx.item.input, session_id=session_id, **STREAMED), ctx)
        else:
            result = await agent.arun(ctx.item.input, session_id=session_id)
        return self._outcome(result, ctx)

    async def resume(self, state: dict[str, Any], decision: Decision | DecisionSet, ctx: LegContext) -> LegResult:
        from agno.run.requirement import RunRequirement

        agent = self._build(ctx)
        if isinstance(decision, Decision) and decision.kind is DecisionKind.message:
            return await self._message(agent, state, decision, ctx)
        requirements = [RunRequirement.from_dict(d) for d in state["requirements"]]
        held = {r.tool_execution.tool_call_id: r for r in requirements
                if r.tool_execution is not None and r.tool_execution.tool_call_id in state["call_ids"]}
        if isinstance(decision, DecisionSet):
            # One decision per held requirement, by the call id it names, as given: a held call without one is
            # passed on unresolved, a decision naming a call the pause does not hold has no requirement to act
            # on (agno's API acts on held requirements), a null decision carries no value and is no decision.
            for d in decision.decisions:
                key = d.call_id if d.call_id is not None else (state["call_ids"][0] if len(held) == 1 else None)
                requirement = held.get(key) if key is not None else None
                if requirement is not None and d.kind is not DecisionKind.null:
                    _apply(requirement, d)
        else:
            requirement = held.get(state["call_ids"][0])
            if requirement is None:
                raise ValueError(f"the saved state holds no requirement for {state['call_ids'][0]!r}")
            if decision.kind is not DecisionKind.null:
                _apply(requirement, decision)
        run = {"run_id": state["run_id"], "session_id": state["session_id"], "requirements": requirements}
        if state.get("inputs"):  # input added while paused (`add_input`): agno's own `input` of acontinue_run
            run["input"] = "\n\n".join(state["inputs"])
        if ctx.stream:
            result = await _streamed(agent, agent.acontinue_run(**run, **STREAMED), ctx)
        else:
            result = await agent.acontinue_run(**run)
        return self._outcome(result, ctx)

    async def add_input(self, state: dict[str, Any], text: str, ctx: LegContext) -> dict[str, Any]:
        """Input added while paused (the `input` channel), no decision. agno has no call that adds input to a PAUSED
        run on its own: a paused run moves only through `acontinue_run`, which must resolve its requirements. What
        it has is `acontinue_run(input=...)` ("new user-message text to append before resuming", documented for a
        COMPLETED or RUNNING/ERROR run), so the text is kept in the leg state (a copy: the pause's own state is
        unchanged) and handed to agno with the decision at the resume, where agno appends it as a user message to
        the run's messages before it answers the held call."""
        return {**state, "inputs": [*state.get("inputs", []), text]}

    async def _message(self, agent: Any, state: dict[str, Any], message: Decision, ctx: LegContext) -> LegResult:
        """A new user message instead of a decision, delivered as agno's own chat interfaces deliver a user's next
        message in a thread: a new run in the paused run's session, `arun(text, session_id=...)` (AgentOS's AG-UI
        router, "Fresh run: new user input", and its Slack handler run every new message this way, whatever the
        thread holds paused), with the session's history in context (`add_history_to_context=True`, agno's switch
        for a multi-turn session). Nothing is done to the paused run or its requirement: agno leaves it PAUSED in
        its db and leaves paused runs out of a new run's history (`HISTORY_SKIP_STATUSES`), and a later
        `acontinue_run` of it (a late approval) is agno's to take or refuse."""
        run = {"session_id": state["session_id"], "add_history_to_context": True}
        if ctx.stream:
            result = await _streamed(agent, agent.arun(message.text, **run, **STREAMED), ctx)
        else:
            result = await agent.arun(message.text, **run)
        return self._outcome(result, ctx)

    async def continue_run(self, state: dict[str, Any], ctx: LegContext) -> LegResult:
        """Recovery way `continue`: `acontinue_run(run_id, session_id)` with no requirements, the decision not
        given again. agno resumes a RUNNING run in place from its last tool-batch checkpoint. A run its db still
        holds as paused (the process died before that checkpoint) is continued without the decision, which agno
        never persisted: it refuses an unanswered external call (ValueError) and rejects an unconfirmed gated
        call with its own text. Whatever agno does is the measurement."""
        agent = self._build(ctx)
        if ctx.stream:
            result = await _streamed(agent, agent.acontinue_run(run_id=state["run_id"], session_id=state["session_id"],
                                                                **STREAMED), ctx)
        else:
            result = await agent.acontinue_run(run_id=state["run_id"], session_id=state["session_id"])
        return self._outcome(result, ctx)

    def _outcome(self, result: Any, ctx: LegContext) -> LegResult:
        from agno.run.base import RunStatus

        if result.status == RunStatus.completed:
            content = result.content  # the model's last answer, as agno kept it
            return LegResult.finished(content if isinstance(content, str) else str(content or ""))
        if result.status != RunStatus.paused:  # ERROR (e.g. the model endpoint failed), CANCELLED, ...
            return LegResult.errored(f"agno run ended with status {result.status.value}: {result.content}")
        active = [r for r in result.active_requirements if r.tool_execution is not None]
        if not active:
            return LegResult.errored("agno paused the run with no active requirement")
        # a Team's pause on a member's call names the member (agno's `RunRequirement.member_agent_name`, set where
        # the member's pause is propagated to the team run); an Agent's own requirements have none
        pending = [PendingRequest(tool=r.tool_execution.tool_name, args=dict(r.tool_execution.tool_args or {}),
                                  call_id=r.tool_execution.tool_call_id, agent=r.member_agent_name) for r in active]
        state = {
            **_db_ref(ctx),
            "session_id": result.session_id,
            "run_id": result.run_id,
            # agno's own serialisation of the pause's requirements (plain JSON)
            "requirements": [r.to_dict() for r in result.requirements or []],
            "call_ids": [p.call_id for p in pending],
        }
        gated = set(ctx.gated_tools)
        if len(pending) > 1 and not all(p.tool in gated for p in pending):
            names = [p.tool for p in pending]
            return LegResult.errored(f"agno paused on several calls that are not all gated tools: {names}")
        return LegResult.suspended(pending if len(pending) > 1 else pending[0], state)


def _db(ctx: LegContext) -> Any:
    """agno's own db for the run's store (`LegContext.store`), built per leg (a new process, a new connection):
    `SqliteDb` on the item's work directory (the default), `PostgresDb` on the item's own PostgreSQL database
    (SQLAlchemy with psycopg 3; agno creates its schema "ai" and its tables there itself, `create_schema=True`), or
    `RedisDb` whose `db_prefix` is the item's key prefix (agno writes every key as `<db_prefix>:<table>:<id>`, so the
    prefix's own trailing ":" is agno's separator; plain strings, sorted sets and sets, no Redis module)."""
    store = ctx.store
    if store.kind == "postgres":
        from agno.db.postgres import PostgresDb

        return PostgresDb(db_url=store.sqlalchemy_url("psycopg"), db_schema=PG_SCHEMA)
    if store.kind == "redis":
        from agno.db.redis import RedisDb

        return RedisDb(db_url=store.url, db_prefix=_redis_prefix(ctx))
    from agno.db.sqlite import SqliteDb

    return SqliteDb(db_file=os.path.join(ctx.workdir, DB_FILE))


def _redis_prefix(ctx: LegContext) -> str:
    prefix = ctx.store.prefix
    return prefix[:-1] if prefix.endswith(":") else prefix


def _db_ref(ctx: LegContext) -> dict[str, str]:
    """Where agno keeps the run, as names only (the leg state is JSON; a new process connects again)."""
    if ctx.store.kind == "postgres":
        return {"db": "postgres", "db_schema": PG_SCHEMA}
    if ctx.store.kind == "redis":
        return {"db": "redis", "db_prefix": _redis_prefix(ctx)}
    return {"db_file": os.path.join(ctx.workdir, DB_FILE)}


async def _streamed(agent: Any, events: Any, ctx: LegContext) -> Any:
    """Read a streamed run to its end, handing over what its events tell: each tool agno starts (the model's
    call) and each that completes (its result), each active requirement of a RunPausedEvent (the pause). The
    run's RunOutput is the stream's last item; a run that failed ends on a RunErrorEvent instead, and is read
    back from the session as agno stored it."""
    from agno.run import agent as agent_events
    from agno.run import team as team_events
    from agno.team import Team

    # A Team's stream carries its own events and, from inside `delegate_task_to_member`, its members' (agno's
    # `stream_member_events`, on by default): tool calls and results of both; the run's pause is the team's
    # RunPausedEvent (a member's own pause event precedes it, and is the same held call).
    final = (team_events.TeamRunOutput,) if isinstance(agent, Team) else (agent_events.RunOutput,)
    started = (agent_events.ToolCallStartedEvent, team_events.ToolCallStartedEvent)
    completed = (agent_events.ToolCallCompletedEvent, team_events.ToolCallCompletedEvent)
    paused = team_events.RunPausedEvent if isinstance(agent, Team) else agent_events.RunPausedEvent

    output, last = None, None
    async for event in events:
        if isinstance(event, final):
            output = event
            continue
        if not isinstance(agent, Team) or isinstance(event, team_events.BaseTeamRunEvent):
            last = event  # the run's own event (a member's names the member's run)
        if isinstance(event, started) and event.tool is not None:
            ctx.told("tool_call", str(event.tool.tool_name), event.tool.tool_call_id)
        elif isinstance(event, completed) and event.tool is not None:
            ctx.told("tool_result", str(event.tool.tool_name), event.tool.tool_call_id, str(event.tool.result))
        elif isinstance(event, paused):
            for held in (r.tool_execution for r in event.active_requirements if r.tool_execution is not None):
                ctx.told("pause", str(held.tool_name), held.tool_call_id)
    if output is None and last is not None and last.run_id is not None:
        output = await agent.aget_run_output(run_id=last.run_id, session_id=last.session_id)
    if output is None:
        raise RuntimeError("agno's event stream ended without the run's output")
    return output


def _apply(requirement: Any, decision: Decision) -> None:
    """Hand one decision to its requirement through agno's own methods."""
    if requirement.needs_external_execution:  # the approval tool: the decision is its result
        requirement.set_external_execution_result(decision.as_text())
    elif requirement.needs_confirmation:  # a gated tool: agno runs it only once confirmed
        if decision.kind is DecisionKind.approve:
            requirement.confirm()
        else:  # deny, or an edit agno cannot run: the text is the call's result
            requirement.reject(note=decision.as_text())
    else:
        raise ValueError(f"requirement for {requirement.tool_execution.tool_name!r} takes no decision "
                         f"(pause type {requirement.pause_type!r})")


def _function(spec: ToolSpec, ctx: LegContext) -> Any:
    """The harness tool as an agno Function, with agno's own HITL flag where the harness needs a pause."""
    from agno.tools.function import Function

    async def call(fc: Any, **kwargs: Any) -> str:
        # agno injects its FunctionCall as `fc`; its call_id is the model's id for the call. For the approval
        # tool this body never runs while agno honours external_execution; if it ever did, the harness logs it.
        return str(await ctx.tools.acall(spec.name, kwargs, call_id=fc.call_id))

    return Function(
        name=spec.name,
        description=spec.description,
        parameters=dict(spec.parameters),
        entrypoint=call,
        skip_entrypoint_processing=True,  # the spec's schema is sent as it is
        external_execution=True if spec.kind is ToolKind.approval else None,
        requires_confirmation=True if (spec.requires_approval and spec.kind is not ToolKind.approval) else None,
    )
