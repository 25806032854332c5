"""What the OpenAI Agents SDK adapter declares: its pause channels, each in the SDK's terms, and what they carry."""

from __future__ import annotations

from arena.for_adapters import AdapterInfo, Capabilities, Channel
from arena_builtins.arenas.delegation.channel import DEEP_NESTED, HANDOFF, NESTED, SHARED_NAME
from arena_builtins.arenas.follow_up.channel import FOLLOW_UP, OUTPUT_GUARD
from arena_builtins.arenas.resume_safety.channel import LIVE_TWIN
from arena_builtins.arenas.run_context.channel import RUN_CONTEXT

INFO = AdapterInfo(
    name="openai_agents",
    framework="openai-agents",
    channels=(
        Channel(
            name="ask",
            kind="native",
            mechanism=(
                "FunctionTool(needs_approval=True) -> RunResult.interruptions (ToolApprovalItem); "
                "state = RunResult.to_state().to_string(); resume: RunState.from_string, "
                "RunState.approve / RunState.reject(rejection_message=...), Runner.run(agent, state)"
            ),
            carries=Capabilities(
                deny_reason=True,
                approve_note=True,
                free_text=True,
                notes=(
                    "deny: the reason travels as RunState.reject(rejection_message=...), which the SDK sends "
                    "verbatim as the approval tool's output. approve: RunState.approve() carries no payload; "
                    "the note (or an answer) reaches the model as the output of the adapter-owned approval "
                    "tool body, which the SDK runs only after approve()."
                ),
            ),
        ),
        Channel(
            name="tool_gate",
            kind="native",
            mechanism=(
                "FunctionTool(needs_approval=True) on the gated tool -> RunResult.interruptions (ToolApprovalItem); "
                "state = RunResult.to_state().to_string(); resume: RunState.approve(item) runs the tool, "
                "RunState.reject(item, rejection_message=decision.as_text()) is its output; an approval carries no note"
            ),
            carries=Capabilities(
                deny_reason=True, approve_note=False, free_text=False, edit_args=False,
                notes="RunState.reject(rejection_message=...) is the held call's output; approve() carries no payload "
                      "and no arguments: an edit is sent as a rejection naming the human's arguments",
            ),
        ),
        Channel(
            name="multi_call",
            kind="native",
            mechanism=(
                "every gated call of the turn in RunResult.interruptions (ToolApprovalItem.call_id); each approved "
                "(RunState.approve) or rejected (RunState.reject(rejection_message=...)) by its own decision, then "
                "one Runner.run"
            ),
        ),
        Channel(
            name="recover",
            kind="native",
            mechanism=(
                "the RunState saved at the pause (RunState.to_string) is restored with RunState.from_string in a "
                "new process and the approval given again, then Runner.run (SDK docs, human in the loop: "
                "serialise the state to resume later)"
            ),
        ),
        Channel(
            name="message",
            kind="native",
            mechanism=(
                "RunState.from_string(agent, state).add_input(text) (staged as a user message, admitted before "
                "the next model call), no approve()/reject() of the held call, then Runner.run(agent, state) / "
                "Runner.run_streamed (SDK docs, results: add input before resuming)"
            ),
        ),
        Channel(
            name="always",
            kind="native",
            mechanism=(
                "RunState.approve(item, always_approve=True) / RunState.reject(item, always_reject=True, "
                "rejection_message=...): a sticky decision stored in the RunState for later calls of the same "
                "tool (the approval item's agent) for the rest of the run (SDK docs, human in the loop)"
            ),
        ),
        Channel(
            name="input",
            kind="native",
            mechanism=(
                "RunState.from_string(agent, state).add_input(text) -> to_string(): staged as a user message, "
                "admitted immediately before the next model call of the resumed run, after the held call's "
                "decision (SDK docs, results: add input before resuming)"
            ),
        ),
        Channel(
            name=NESTED,
            kind="native",
            mechanism=(
                "Agent.as_tool(tool_name=<agent>, tool_description=...) on the run's agent; the delegate's "
                "FunctionTool(needs_approval=True) call surfaces in the outer RunResult.interruptions "
                "(ToolApprovalItem.agent = the delegate); RunState.approve / reject on the outer state reach the "
                "nested run, whose state RunState.to_string() serialises with the agent-tool call "
                "(agent_run_state); Runner.run(agent, state) resumes it"
            ),
        ),
        Channel(
            name=HANDOFF,
            kind="native",
            mechanism=(
                "Agent(handoffs=[handoff(delegate)]) (tool transfer_to_<agent>); the delegate's "
                "FunctionTool(needs_approval=True) call -> RunResult.interruptions (ToolApprovalItem.agent = the "
                "delegate); RunState.from_string(starting agent, s), approve / reject, Runner.run resumes with "
                "the delegate as the current agent"
            ),
        ),
        Channel(
            name=LIVE_TWIN,
            kind="native",
            mechanism="live_twin: RunResult.to_state() twice on the paused result (kept in the process by its state "
                      "string); the run's own resume takes the first with approve()/reject() and Runner.run(agent, "
                      "state), the twin is resumed as it is",
        ),
        Channel(
            name=FOLLOW_UP,
            kind="native",
            mechanism="the run's conversation is an in-memory SQLiteSession given to Runner.run at the start, on every "
                      "resume and with the user's next message (Runner.run(agent, text, session=session)), which the SDK "
                      "sends with the session's history",
        ),
        Channel(
            name=OUTPUT_GUARD,
            kind="native",
            mechanism="Agent(output_guardrails=[@output_guardrail that passes any non-empty answer], "
                      "tool_use_behavior=a ToolsToFinalOutputFunction: a room search that found nothing free is the answer, any "
                      "other result goes back to the model",
        ),
        Channel(
            name=RUN_CONTEXT,
            kind="native",
            mechanism="the run's context= on Runner.run / Runner.run_streamed, at the start and on every resume with the "
                      "restored RunState (Runner.run(agent, state, context=...)); Agent(instructions=callable) writes the "
                      "instructions from RunContextWrapper.context at each model call",
        ),
        Channel(
            name=DEEP_NESTED,
            kind="native",
            mechanism="a delegate's Agent holds its own delegates as Agent.as_tool(); the innermost ToolApprovalItem "
                      "surfaces in the outer RunResult.interruptions and RunState.approve/reject reach it through both "
                      "nested runs (serialised with the outer state)",
        ),
        Channel(
            name=SHARED_NAME,
            kind="native",
            mechanism="the run's Agent(name=...) takes the item's name, the name of a delegate's own Agent reached with "
                      "as_tool(); RunState.approve/reject find the nested run's item, the outer to_string() carries it",
        ),
        Channel(
            name="stream",
            kind="native",
            mechanism=(
                "Runner.run_streamed(...) and its stream_events() read to their end (run item events "
                "tool_called, tool_output); then RunResultStreaming.interruptions and to_state(), as after "
                "Runner.run (the stream has no event of its own for a pending approval)"
            ),
        ),
        Channel(
            name="postgres",
            kind="native",
            mechanism=(
                "the run's session is agents.extensions.memory.SQLAlchemySession (openai-agents[sqlalchemy]) on an "
                "async engine postgresql+asyncpg:// of the item's database, create_tables=True (agent_sessions, "
                "agent_messages), passed to Runner.run with the same session id on every resume (SDK docs, human "
                "in the loop: streaming and sessions); the paused RunState.to_string() is kept, as the SDK docs "
                "say to (human in the loop: long-running approvals, store it in a database), in a table "
                "arena_run_states of the same database (arena's KeptRecords: asyncpg), one row per pause; the leg "
                "state is {session_id, state_id}; resume: RunState.from_string(agent, row), approve / reject, "
                "Runner.run(agent, state, session=...)"
            ),
        ),
        Channel(
            name="redis",
            kind="native",
            mechanism=(
                "the run's session is agents.extensions.memory.RedisSession (openai-agents[redis]) on a "
                "redis.asyncio client, key_prefix=<item prefix>agents:session (keys <prefix>agents:session:<id> "
                "and <prefix>agents:session:<id>:messages), passed to Runner.run with the same session id on every "
                "resume (SDK docs, human in the loop: streaming and sessions); the paused RunState.to_string() is "
                "kept, as the SDK docs say to (human in the loop: long-running approvals), in the hash "
                "<prefix>agents:run_state:<id> (arena's KeptRecords: redis.asyncio), one per pause; the leg state is "
                "{session_id, state_id}; resume: RunState.from_string(agent, value), approve / reject, "
                "Runner.run(agent, state, session=...)"
            ),
        ),
    ),
)
