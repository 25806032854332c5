"""What the Microsoft Agent Framework adapter declares: its pause channels, each in the framework's terms, and what
each carries."""

from __future__ import annotations

from arena.for_adapters import AdapterInfo, Capabilities, Channel
from arena_builtins.arenas.delegation.channel import NESTED

REJECTED_RESULT = "Error: Tool call invocation was rejected by user."  # agent_framework/_tools.py, fixed text

INFO = AdapterInfo(
    name="microsoft_af",
    framework="agent-framework-core",
    channels=(
        Channel(
            name="ask",
            kind="native",
            mechanism=(
                'FunctionTool(approval_mode="always_require") -> AgentResponse.user_input_requests '
                "(function_approval_request) on an AgentSession; resumed with "
                "to_function_approval_response(approved) from AgentSession.from_dict(session.to_dict())"
            ),
            carries=Capabilities(
                deny_reason=False,
                approve_note=True,
                free_text=True,
                notes=(
                    "The approval response carries only a bool. On approve the framework runs the approval "
                    "tool's body, which the adapter owns and which returns the decision text, so notes and "
                    "answers reach the model as the tool result. On deny the framework writes its own fixed "
                    f"result {REJECTED_RESULT!r}: the reason is dropped. Gated tools (approval_gate) get the same bool "
                    "response: a denial is that fixed text, and an approval note has no way to the model."
                ),
            ),
        ),
        Channel(
            name="tool_gate",
            kind="native",
            mechanism=(
                'FunctionTool(approval_mode="always_require") on each gated tool -> AgentResponse.user_input_requests '
                "(function_approval_request); resumed with to_function_approval_response(approved) on the "
                "AgentSession restored by from_dict; a denial's tool result is the framework's fixed rejection text"
            ),
            carries=Capabilities(
                deny_reason=False, approve_note=False, free_text=False, edit_args=False,
                notes="the approval response is a bool: a denial is the framework's fixed rejection text; an approved "
                      "call is re-bound to the stored one, so an edit is sent as a rejection",
            ),
        ),
        Channel(
            name="multi_call",
            kind="native",
            mechanism=(
                "one function_approval_request per gated call of the turn (function_call.call_id); each answered "
                "with to_function_approval_response(approved) in one message"
            ),
        ),
        Channel(
            name="recover",
            kind="native",
            mechanism=(
                "AgentSession.from_dict of the session saved at the pause and the same approval response, in a "
                "new process (agent-framework docs: a serialised session resumes a conversation)"
            ),
        ),
        Channel(
            name="message",
            kind="native",
            mechanism=(
                "agent.run(text, session=AgentSession.from_dict(state)) with no approval response: a new agent "
                "run on the paused session; the framework leaves the unanswered approval batch out of that "
                "run's model input and keeps it in the session's history"
            ),
        ),
        Channel(
            name="always",
            kind="native",
            mechanism=(
                "create_always_approve_tool_response(request) + ToolApprovalMiddleware (agent_framework._harness."
                "_tool_approval): a standing rule for the tool in the session's tool_approval state; later "
                "requests matching it are auto-approved. The middleware is on from the leg of the first always "
                "(it also queues a turn's several requests one per pause). No standing rejection exists: a deny "
                "marked always denies its call alone"
            ),
        ),
        Channel(
            name="input",
            kind="native",
            mechanism=(
                "enqueue_messages(AgentSession.from_dict(state), Message(user, note)) -> to_dict(): queued in "
                "the session state; the resumed run's MessageInjectionMiddleware drains it into its next model "
                "call (that call only: the plain Agent does not persist it), after the held call's result"
            ),
        ),
        Channel(
            name=NESTED,
            kind="native",
            mechanism=(
                "Agent.as_tool(name=<agent>, description=...) of a delegate Agent whose gated tools are "
                'FunctionTool(approval_mode="always_require"), in the desk Agent\'s tools. In 1.23 the wrapper '
                "does not propagate the delegate's function_approval_request: it raises ToolExecutionException "
                '(fail closed, PR #8527) and the desk reads "Error: Function failed." as the tool result'
            ),
        ),
        Channel(
            name="stream",
            kind="native",
            mechanism=(
                "agent.run(..., stream=True, session=...) read to its end (AgentResponseUpdate contents: "
                "function_call, function_result, function_approval_request as the pause); then the stream's "
                "get_final_response() (AgentResponse.from_updates, session history stored) read as after "
                "agent.run: its user_input_requests and the AgentSession"
            ),
        ),
        # `--store postgres|redis`: the framework has no store of its own for the paused session there
        Channel(
            name="postgres",
            kind="unsupported",
            mechanism=(
                "agent-framework-core 1.23.0 has no PostgreSQL store for the paused AgentSession (its pending "
                "approval requests live in session.state['tool_approval']): sessions go to session.to_dict() or "
                "SessionStore/FileSessionStore (memory, files), workflow checkpoints to InMemory/"
                "FileCheckpointStorage, and agent-framework-postgres 1.0.0a261015 is only a pgvector vector store "
                "(PostgresStore)"
            ),
        ),
        Channel(
            name="redis",
            kind="unsupported",
            mechanism=(
                "agent-framework-core 1.23.0 has no Redis store for the paused AgentSession: agent-framework-redis "
                "1.0.0b261022 (not in .venv: it pins redis<7.2.1, .venv has 8.2.0) has only RedisHistoryProvider "
                "(the chat history, not the pending approval requests in session.state['tool_approval']), "
                "RedisContextProvider and a vector store, no SessionStore or CheckpointStorage"
            ),
        ),
    ),
)
