"""What the llama_index adapter declares: its pause channels, each in llama-index's terms (a claim the harness
tests, never trusts)."""

from __future__ import annotations

from arena.for_adapters import AdapterInfo, Capabilities, Channel
from arena_builtins.arenas.delegation.channel import HANDOFF, NESTED

INFO = AdapterInfo(
    name="llama_index",
    framework="llama-index-core",
    channels=(
        Channel(
            name="ask",
            kind="native",
            mechanism=(
                "the approval tool's body awaits Context.wait_for_event(HumanResponseEvent, waiter_event="
                "InputRequiredEvent, waiter_id=call id); on WorkflowIdleEvent the leg saves Context.to_dict() to a "
                "file and cancel_run(); resume: Context.from_dict, agent.run(ctx=ctx), and once the restored run is idle "
                "ctx.send_event(HumanResponseEvent(response=decision text)) - the waiting step is replayed"
            ),
            carries=Capabilities(
                deny_reason=True, approve_note=True, free_text=True,
                notes=("the decision text is the HumanResponseEvent's response, which the approval tool returns as "
                       "its result. State = llama-index's own Context.to_dict() JSON in the item's work dir, plus "
                       "the chat memory's messages (to_dict skips the memory)."),
            ),
        ),
        Channel(
            name="tool_gate",
            kind="native",
            mechanism=(
                "llama-index has no tool-approval flag; its documented HITL form, a tool body that awaits "
                "Context.wait_for_event(HumanResponseEvent) before it acts: the gated tool waits, then makes the "
                "harness call only if the event approves it (the wait is the framework's own pause and resume)"
            ),
            carries=Capabilities(
                deny_reason=True, approve_note=False, free_text=False, edit_args=False,
                notes=("a denied call returns the decision text (\"DENIED: reason\") as its result; an approved "
                       "call's result is the tool's own (no note); an edit is not run with the human's arguments: "
                       "it returns the decision text"),
            ),
        ),
        Channel(
            name="body_pause",
            kind="native",
            mechanism=(
                "the tool prepares, then awaits Context.wait_for_event(HumanResponseEvent), then commits or aborts; "
                "llama-index replays the whole step on resume (once at restore, once when the event arrives), so prepare "
                "runs twice more"
            ),
        ),
        Channel(
            name="multi_call",
            kind="native",
            mechanism=(
                "each gated call of the turn waits under its own waiter_id / requirements={'call_id': id}; one idle "
                "pause holds them all; resume sends one HumanResponseEvent per decision, keyed by call_id"
            ),
        ),
        Channel(
            name="recover",
            kind="native",
            mechanism=(
                "the Context.to_dict() saved at the pause is restored again with Context.from_dict in a new process "
                "and the same HumanResponseEvent sent (llama-index docs: serialise the Context to resume a run); "
                "the replayed tool step calls the harness under the same call id"
            ),
        ),
        Channel(
            name="stream",
            kind="native",
            mechanism=(
                "handler.stream_events(expose_internal=True), the stream the plain leg already drives to the "
                "stop or the idle, read as a UI reads it: ToolCall, ToolCallResult and InputRequiredEvent (the "
                "pause, on its call); the suspension is the WorkflowIdleEvent after it, read as in the plain leg"
            ),
        ),
        Channel(
            name="message",
            kind="native",
            mechanism=(
                "the text sent as the waiting call's HumanResponseEvent(response=text) (llama-index's HITL docs: "
                "what the human enters at the prompt is the HumanResponseEvent), after Context.from_dict + "
                "agent.run(ctx=ctx) as for a decision; the gated body reads it as no approval and returns the "
                "text as its result (agent.run(user_msg=..., ctx=ctx) on the paused context drops user_msg)"
            ),
        ),
        Channel(
            name="always",
            kind="unsupported",
            mechanism=(
                "llama-index has no approve/reject-always: it has no tool-approval API at all (FunctionTool, "
                "ToolMetadata and BaseWorkflowAgent have no approval flag or policy; the HITL docs' "
                "InputRequiredEvent/HumanResponseEvent answer one wait_for_event, keyed by its waiter_id), and "
                "nothing in llama-index-core 0.14 / llama-index-workflows 2.26 or its docs applies a decision "
                "to later calls"
            ),
        ),
        Channel(
            name=NESTED,
            kind="unsupported",
            mechanism=(
                "llama-index's agent-as-tool is its Orchestrator pattern (docs: understanding/agent/multi_agent): "
                "a FunctionTool whose body awaits sub_agent.run(user_msg=...), a separate workflow run with its "
                "own Context. A wait (Context.wait_for_event) in the sub-agent's tool pauses only that inner run: its "
                "InputRequiredEvent goes to the inner handler's stream, which the outer run never sees, and the "
                "outer call_tool step stays busy awaiting the inner handler, so the outer run never goes idle and "
                "never pauses (observed: del-01 timed out, book_flight held inside the booking agent). Nothing "
                "forwards a nested wait to the caller or serialises an inner run inside the outer "
                "Context.to_dict() (llama-index-core 0.14.25 / llama-index-workflows 2.26.1: no nested-workflow support; the HITL "
                "docs cover a tool of the running workflow only)"
            ),
        ),
        Channel(
            name=HANDOFF,
            kind="native",
            mechanism=(
                "AgentWorkflow(agents=[root, *delegates], root_agent=root) with the root's "
                "can_handoff_to=[delegates]: llama-index's own handoff tool, named `handoff(to_agent, reason)` (the name is fixed: "
                "AgentWorkflow.aggregate_tool_results and FunctionAgent.handle_tool_call_results test "
                "tool_name == 'handoff'), sets current_agent_name in the run's store; the delegate's gated tool "
                "waits (Context.wait_for_event) in the same workflow, so the pause, Context.to_dict() and the "
                "resume are the tool_gate channel's; PendingRequest.agent is the store's current_agent_name"
            ),
        ),
        Channel(
            name="input",
            kind="emulated",
            mechanism=(
                "add_input writes a new snapshot whose saved chat memory has the text appended as a user "
                "ChatMessage (the ChatMemoryBuffer the resume puts back with ctx.store.set('memory')); the "
                "agent's next LLM call reads memory.aget() + scratchpad, so the note comes before the held "
                "turn. llama-index documents no input to a waiting run but the HumanResponseEvent, which "
                "decides the call, and agent.run(user_msg=..., ctx=ctx) drops user_msg on a paused context"
            ),
        ),
        # `--store postgres|redis`: no store of llama-index's own for the paused Context in this environment
        Channel(
            name="postgres",
            kind="unsupported",
            mechanism=(
                "llama-index-workflows 2.26.1 serialises the paused run as Context.to_dict() and keeps it in no "
                "store of its own; LlamaIndex's PostgreSQL run stores (PostgresWorkflowStore of "
                "llama-agents-server 0.8.0, DBOSRuntime of llama-agents-dbos 0.7.0) are not in .venv"
            ),
        ),
        Channel(
            name="redis",
            kind="unsupported",
            mechanism=(
                "llama-index-workflows 2.26.1 serialises the paused run as Context.to_dict() and has no Redis "
                "store for it (llama-agents-server 0.8.0's workflow stores are memory, SQLite, PostgreSQL and "
                "AgentData only); llama-index-storage-chat-store-redis keeps chat memory, not the paused Context"
            ),
        ),
    ),
)
