"""What the agno adapter declares: its pause channels, each in agno's terms."""

from __future__ import annotations

from arena.for_adapters import AdapterInfo, Capabilities, Channel
from arena_builtins.arenas.delegation.channel import HANDOFF, NESTED

INFO = AdapterInfo(
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
            name=NESTED,
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
            name=HANDOFF,
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
