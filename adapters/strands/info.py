"""What the strands adapter declares: its pause channels, each in strands' terms, and what each carries."""

from __future__ import annotations

from arena.for_adapters import AdapterInfo, Capabilities, Channel
from arena_builtins.arenas.delegation.channel import HANDOFF, NESTED

INFO = AdapterInfo(
    name="strands",
    framework="strands-agents",
    channels=(
        Channel(
            name="ask",
            kind="native",
            mechanism=(
                "tool interrupt: request_approval is a strands.tool(context=True) whose body calls "
                "tool_context.interrupt(...); the run stops with stop_reason='interrupt' (result.interrupts); "
                "resume: agent([{'interruptResponse': {'interruptId': id, 'response': decision text}}]), the "
                "body runs again and returns the response"
            ),
            carries=Capabilities(
                deny_reason=True, approve_note=True, free_text=True,
                notes="the interrupt's response is a free value: the body returns decision.as_text() as "
                      "request_approval's result. State = the FileSessionManager session (JSON) + interrupt ids.",
            ),
        ),
        Channel(
            name="tool_gate",
            kind="native",
            mechanism=(
                "HookProvider on BeforeToolCallEvent: event.interrupt(...) for each gated tool; resume with "
                "interruptResponse: approved, the hook returns and strands runs the tool (an edit rewrites "
                "event.tool_use); denied, event.cancel_tool = decision text (the held call's result)"
            ),
            carries=Capabilities(
                deny_reason=True, approve_note=False, free_text=False, edit_args=True,
                notes="cancel_tool's text is the denied call's tool result, verbatim; an approved call's result "
                      "is the tool's own (no note); an edit sets event.tool_use's input before strands runs it",
            ),
        ),
        Channel(
            name="body_pause",
            kind="native",
            mechanism=(
                "the tool prepares, then tool_context.interrupt(...) inside its body; strands runs the body again "
                "from the top on resume (prepare runs again), where interrupt() returns the decision"
            ),
        ),
        Channel(
            name="multi_call",
            kind="native",
            mechanism=(
                "each gated call of the turn interrupts in its own BeforeToolCallEvent (ConcurrentToolExecutor); "
                "result.interrupts holds them all; one interruptResponse per decision, by interrupt id"
            ),
        ),
        Channel(
            name="recover",
            kind="native",
            mechanism=(
                "the FileSessionManager session (agent.json: messages and interrupt state) is restored by a new "
                "Agent with the same session_id in a new process, and invoked again with the same "
                "interruptResponse list (strands docs, interrupts: interrupts are session managed); or "
                "(continue) the same session invoked with no prompt, agent() (strands-agents/sdk-python#1111)"
            ),
            ways=("resume", "continue"),
        ),
        Channel(
            name="message",
            kind="native",
            mechanism=(
                "the restored session's Agent invoked with the message as its prompt, agent.invoke_async(text) "
                "(stream_async in a streamed leg), strands' way to take new user input; at a pause strands takes "
                "only interruptResponse's and raises TypeError on the message (_InterruptState.resume)"
            ),
        ),
        Channel(
            name="always",
            kind="native",
            mechanism=(
                "(t)rust, strands docs Interrupts > Session Management: an approve marked always records the tool "
                "in agent.state (session-persisted) and the BeforeToolCallEvent hook lets later calls of it run "
                "without an interrupt (trust checked before interrupting, as there and in the vended "
                "HumanInTheLoop(enable_trust=True)); strands has no reject-always: a deny marked always denies "
                "its call alone"
            ),
        ),
        Channel(
            name="input",
            kind="emulated",
            mechanism=(
                "strands takes only interruptResponse's at a pause (_InterruptState.resume): add_input sets the "
                "note in the restored session's agent.state (FileSessionManager.sync_agent) and the agent's "
                "ContextInjector plugin (trigger everyTurn) folds it into each later model call's latest user "
                "message, after the held call's result; ephemeral, never in the history"
            ),
        ),
        Channel(
            name=NESTED,
            kind="native",
            mechanism=(
                "agents as tools: each delegate is a strands Agent (its own BeforeToolCallEvent gate hook) given "
                "to the desk as delegate.as_tool(name=, description=) (strands.agent._agent_as_tool._AgentAsTool, "
                "preserve_context=False); the delegate's interrupt propagates to the desk's result.interrupts as "
                "a ToolInterruptEvent (ids 'v1:agent_as_tool:<desk toolUseId>:<inner id>'), its interrupted turn "
                "(take_snapshot(preset='session')) kept in the desk's interrupt state, which the desk's "
                "FileSessionManager persists; resume: desk([{'interruptResponse': ...}]), strands reloads the "
                "delegate's turn and forwards it the responses"
            ),
        ),
        Channel(
            name=HANDOFF,
            kind="native",
            mechanism=(
                "strands.multiagent.Swarm(nodes=[desk, *delegates], entry_point=desk, session_manager="
                "FileSessionManager): a node's gated call interrupts in its BeforeToolCallEvent hook, the Swarm "
                "stops INTERRUPTED with result.interrupts (the node's messages and interrupt state in the Swarm's "
                "interrupt state, persisted in multi_agent.json); resume: swarm(interruptResponse list); the desk "
                "hands off by the Swarm's own handoff_to_agent(agent_name, message, context) tool"
            ),
        ),
        Channel(
            name="stream",
            kind="native",
            mechanism=(
                "agent.stream_async(...) instead of invoke_async, read to its end: 'message' events (the model's "
                "toolUse blocks, the toolResult message), 'tool_interrupt_event' (the pause); the pause is read "
                "from the final {'result': AgentResult} event (stop_reason='interrupt', result.interrupts), as "
                "after invoke_async"
            ),
        ),
        # `--store postgres|redis`: strands has no session manager of its own for either server
        Channel(
            name="postgres",
            kind="unsupported",
            mechanism=(
                "strands-agents 1.62.0 has no PostgreSQL session manager (it ships FileSessionManager, "
                "S3SessionManager, SnapshotSessionManager over LocalFileStorage/InMemoryStorage/S3Storage, and "
                "RepositorySessionManager for a SessionRepository the user writes); PostgreSQL ones are community "
                "packages (e.g. strands-postgresql-session-manager 0.2.0), none in .venv"
            ),
        ),
        Channel(
            name="redis",
            kind="unsupported",
            mechanism=(
                "strands-agents 1.62.0 has no Redis session manager; the community strands-valkey-session-manager "
                "0.1.0 its docs list is not in .venv, writes fixed `session:<id>` keys (no key prefix option) and "
                "needs RedisJSON (JSON.GET), which Redis 7.0.15 here lacks"
            ),
        ),
    ),
)
