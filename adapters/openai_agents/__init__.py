"""OpenAI Agents SDK (`openai-agents`): native tool approval.

The approval tool is a `FunctionTool` declared with `needs_approval=True`. When the model calls it,
`Runner.run` stops and returns `result.interruptions` (`ToolApprovalItem`s); the leg's state is the
SDK's own serialised run state, `result.to_state().to_string()`. A resume restores it with
`await RunState.from_string(agent, state)`, applies the decision with `state.approve(item)` or
`state.reject(item, rejection_message=...)` and continues with `Runner.run(agent, state)`.

How the decision reaches the model: on approve (or an answer) the SDK runs the approval tool, whose
adapter-owned body returns `decision.as_text()` ("APPROVED", "APPROVED: note", or the answer) as the
tool output; on deny the SDK never runs it and sends the rejection message, `decision.as_text()`
("DENIED: reason"), as the tool output. The approval tool never goes through `ctx.tools`.

The model is `OpenAIChatCompletionsModel` over `AsyncOpenAI` pointed at the harness endpoint (Chat
Completions, not Responses). Tracing is off globally and per run, so nothing is exported.

Sibling tool calls (scripted-eager) are not special-cased: whatever the SDK does with them shows up
in the harness's tool log.

Tool-level gate (approval_gate): a tool marked `requires_approval` (book_room) is the same kind of
`FunctionTool(needs_approval=True)`, but its body is the ordinary harness call. The SDK stops on it
with a `ToolApprovalItem` before running it; on approve it runs the body (one `ctx.tools.acall`)
after `RunState.approve(item)`, on deny `RunState.reject(item, rejection_message=decision.as_text())`
makes "DENIED: reason" the tool's output and the body never runs.

A new message instead of a decision (interruptions): the SDK documents `RunState.add_input(text)` for new user
input that arrives while a run is paused ("Add input before resuming", docs/results.md; "Cancel streaming after
the current turn", docs/streaming.md): the text is staged as a user message and admitted immediately before the
run's next model call, after its unfinished work. The adapter restores the state, calls `add_input` and nothing
else (no approve(), no reject(): the human decided nothing), and resumes with `Runner.run` / `Runner.run_streamed`.
What the SDK then does with the held call, which has no decision, is what the arena measures; if `add_input`
raises (a state it refuses input on), the leg raises.

Approve / reject always (interruptions' `always` items): the SDK's own sticky decision,
`RunState.approve(item, always_approve=True)` / `RunState.reject(item, always_reject=True, rejection_message=...)`
("pass always_approve=True or always_reject=True to persist the same decision for future calls to the same tool
identity during the rest of the run", docs/human_in_the_loop.md, "How the approval flow works"; stored in the run
state, so it survives to_string/from_string). A later call of that tool is then decided by the runner without an
interruption (a sticky rejection answers it with the same rejection message). At a pause holding several calls the
decisions are applied in the order of `get_interruptions()`, as the docs' loop does. In openai-agents 0.24.0 that
order matters: an exact decision stands against a sticky one recorded before it ("Exact call decisions override
sticky defaults", run_context.py `_get_approval_status_for_record`), but a sticky decision recorded after it resets
the record (`_apply_approval_decision`: `rejected = []`), erasing the exact one.

Input while paused (interruptions' `input` items): `add_input(state, text, ctx)` restores the state, stages the
text with `RunState.add_input(text)` and returns `to_string()` (the staged input is part of the serialised state,
docs/results.md "Add input before resuming": `state.add_input(...)`, then `state.approve(...)`, then
`Runner.run(agent, state)`); the decision is then applied by `resume` as for any pause. The runner admits the
staged input as a user message immediately before its next model call, after the held call's result.

Delegation (`LegContext.agents`, the delegation arena; nothing of this runs elsewhere): each delegate is an `Agent`
of its own holding its tools, its gated ones `FunctionTool(needs_approval=True)`. A `via: tool` delegate is
`delegate.as_tool(tool_name=<its name>, tool_description=...)` on the run's agent (the `nested` channel; one string
argument, the SDK's `input`); a `via: handoff` delegate is `handoff(delegate)` in the run's agent's `handoffs`,
whose default tool name is `transfer_to_<name>` (the `handoff` channel). When a delegate called as a tool reaches its
gated call, the SDK ends the nested run with interruptions, keeps it by tool call, and surfaces its
`ToolApprovalItem`s in the OUTER `RunResult.interruptions` (agent.py `Agent.as_tool`, `record_agent_tool_run_result`);
`RunState.approve` / `reject` on the outer state are applied to the nested run's state that owns the item
(run_state.py `_find_nested_approval_state`), and the resumed tool call resumes the nested run from it. The outer
`to_string()` serialises each pending nested run's own state with its tool call (`agent_run_state`,
`_serialize_pending_nested_agent_tool_runs`), restored by `RunState.from_string(desk, s)` in any process, so the state
is the same JSON string as above. After a handoff the delegate is the run's current agent and its interruption is
an ordinary one of the run. `PendingRequest.agent` is `ToolApprovalItem.agent.name`, the agent whose call the SDK
holds. In a streamed leg the delegates called as tools run streamed too (`as_tool(on_stream=...)`, the SDK's
callback for a nested agent's stream events), and their tool calls and outputs are handed over like the run's own.

PostgreSQL / Redis (`ctx.store.kind` postgres / redis; nothing of this runs on the default store, where the leg state is
the RunState string itself): the run has a Session of the SDK's own store class for that server, and the paused RunState
is kept on the same server, so the leg state is only ids, `{"session_id": ..., "state_id": ...}`.
- The Session: `agents.extensions.memory.SQLAlchemySession` (the `sqlalchemy` extra; an async engine over
  `postgresql+asyncpg://` on the item's database, `create_tables=True`: its tables `agent_sessions` /
  `agent_messages`) or `agents.extensions.memory.RedisSession` (the `redis` extra; `key_prefix=<ctx.store.prefix>
  agents:session`, so its keys are `<prefix>agents:session:<session id>` and `...:<session id>:messages`), passed to
  every `Runner.run` / `Runner.run_streamed` of the run, the same session id on each resume (docs/human_in_the_loop.md,
  "Streaming and sessions": "keep passing the same session instance when you resume from RunState, or pass another
  session object configured for the same session ID and backing store"). The SDK writes the conversation items to it
  (the input, the model's calls and the tools' outputs, the resumed turn's too); it builds a resumed run's model input
  from the RunState, not from the session (run.py: `prepare_input_with_session` is skipped for a RunState input).
- The RunState: the SDK has no store class of its own for it; its docs tell the application to keep it ("RunState is
  designed to be durable. Use state.to_json() or state.to_string() to store pending work in a database or queue and
  recreate it later with RunState.from_json(...) or RunState.from_string(...)", docs/human_in_the_loop.md,
  "Long-running approvals"). The adapter keeps `to_string()` and the session id as a record of arena's `KeptRecords`
  (the shared helper of the adapters that keep a paused state behind an id): a row of a table `arena_run_states` (id,
  fields, created_at) of the item's database, or the hash `<prefix>agents:run_state:<id>`; each pause is a new record
  (the pause-time state a crash recovery resumes again is never overwritten). Connections are opened per leg, or per
  record, and closed at its end.
"""

from .adapter import OpenAIAgentsAdapter

__all__ = ["OpenAIAgentsAdapter"]
