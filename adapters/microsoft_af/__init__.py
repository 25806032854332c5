"""Microsoft Agent Framework: tool approval (`approval_mode="always_require"`) on an `AgentSession`.

The approval tool is a `FunctionTool` declared `always_require`. When the model calls it, the
framework's function-invocation loop does not run it: `Agent.run` returns a response whose
`user_input_requests` hold `function_approval_request` contents, and the session records them as
pending (its `tool_approval` state). That is the pause. The leg's state is the serialised session
(`AgentSession.to_dict()`, plain JSON) plus the serialised requests, so a later leg (or another
process) restores it with `AgentSession.from_dict()` and answers with
`request.to_function_approval_response(approved)` in a new user message on the same session.

How the decision reaches the model:
- approve: the framework executes the approval tool's body, which this adapter owns; it returns
  `decision.as_text()` ("APPROVED" / "APPROVED: note"), so the model sees what vanilla's model sees.
  The framework's approval response itself carries only a bool: the note travels in that body.
- deny: the framework never runs the body and writes its own fixed tool result,
  "Error: Tool call invocation was rejected by user." The response has no field for a reason, so
  the deny reason cannot reach the model (`deny_reason=False`).
- answer: sent as an approval whose body returns the answer text (the only way a text gets back).

The approval body never calls the harness for an approved request. If the framework ever ran it
without a decision the adapter passed in, the body forwards the call to `ctx.tools`, so the harness
logs the approval tool as executed and the checks fail: nothing is hidden.

Tool-level gate (approval_gate): a tool marked `requires_approval` (book_room) is a `FunctionTool`
with `approval_mode="always_require"` whose body is one harness call. The run stops with a
`function_approval_request` for it, the same pause as above (pending = that call). Resume answers
`to_function_approval_response(decision.approved)`: approved, the framework runs the body (the harness
logs book_room in the resumed leg); otherwise it never runs and the framework writes its fixed
rejection text as book_room's result, so the deny reason (and an approval note) cannot reach the model.

Streamed legs (`ctx.stream`): `agent.run(..., stream=True)` (1.23 has no `run_stream`), its
`AgentResponseUpdate`s read to the end, then the stream's `get_final_response()`, which assembles them with
`AgentResponse.from_updates` and stores the session's history as `agent.run` does; that response is read as
the plain one.

A new message instead of a decision (interruptions, the `message` channel): the framework's documented way
to give a paused run new input is a new `agent.run` on the same session (the tool-approval docs: the caller passes
the user's input "back to the agent as part of a new agent run"). So the message is sent as that: the session is
restored with `AgentSession.from_dict` and `agent.run(text, session=session)` is called with no approval response.
The adapter neither answers nor cancels the held call; what the framework does with it is measured. In 1.23 its
function-invocation loop (`_tools._resolve_approval_responses`, step 2: "With no new decision, hide any
still-pending batch from model input while keeping it resumable in history",
`_remove_unanswered_approval_batches_from_model_input`) leaves the held call and its approval request out of what
that run sends the model; the session's history keeps both (`_sessions._approval_controls_to_keep`), and the next
pause's requests replace it in the session's pending-approval record. A later run that carries an approval response
sends the model the history with the held call back in it, still without a result (the trace shows it `unanswered`).

"Approve always" (interruptions' `always` items, the `always` channel): the framework's own "don't ask again" is
`create_always_approve_tool_response(request)` read by `ToolApprovalMiddleware` (agent_framework/_harness/
_tool_approval.py; .NET docs: ToolApprovalAgent, AlwaysApproveToolApprovalResponseContent): the middleware records a
`ToolApprovalRule` for the tool (any arguments) in the session's `tool_approval` state and auto-approves later
approval requests matching it. The adapter answers an approve marked `always` with that response and puts the
middleware on the agent from that leg on (a leg whose session holds a rule keeps it). It is not on from the start:
it also queues a turn's several approval requests and shows them one per pause, so the multi_call pause (one pause,
every gated call of the turn) would not exist; and with it on from the start, int-17 books the denied R301 anyway:
R301 waits in the queue, the always approval of R102 records the rule, and the middleware auto-approves the queued
R301 before any decision on it is asked for. The framework has no standing rejection (rules only approve): a deny
marked `always` is a plain denial of its call, and the next call of the tool asks again.

Input while paused (the `input` channel): `add_input` restores the session and queues the note with the
framework's `enqueue_messages(session, message)` (agent_framework/_sessions.py: "Enqueue messages for the next model
call in the given session"); the queue lives in `session.state`, so `to_dict()` keeps it in the state the decision
resumes. `MessageInjectionMiddleware` (on every leg, a no-op while nothing is queued) drains it into the resumed
run's next model call, after the held call's result. Without per-service-call history persistence (this adapter's
plain Agent) the drained note reaches that one model call only: later calls of the run and the session's history do
not carry it.

Delegation (`agents_of(ctx)`, the delegation arena; other arenas never take this path). Each delegate is its own
`Agent` (its name, instructions and the harness tools it holds, gated ones `always_require` as above), and the desk
(the run's agent, `ctx.instructions`, no tool of its own) gets it as a tool with the framework's agent-as-tool API,
`delegate.as_tool(name=<agent name>, description=...)` (agent_framework/_agents.py `BaseAgent.as_tool`; its one
argument is the default `task`); a streamed leg passes `as_tool(stream_callback=...)` so the delegate's updates
are told as they stream (its `function_approval_request` update too, told as a pause the run then does not keep).
In 1.23 a delegate's gated call does NOT pause the run: the wrapper runs the delegate with
`stream=True` on a private `AgentSession`, finds the `function_approval_request`, and raises `ToolExecutionException`
("cannot continue because its sub-agent requested approval ... Use a workflow for interactive, delayed, or durable
approval"); the desk's function loop turns that into the tool result "Error: Function failed." and the desk model
goes on. The docstring says so ("Child function approvals are not propagated into the calling agent"): the fix
for microsoft/agent-framework#4963 is PR #8527 (merged, "fail closed"), not #8442 (closed unmerged, which would
have resumed the nested approval). The adapter wires `as_tool` as documented and the arena measures that. If a run
ever pauses with a delegate's request, the pending call's `agent` is derived from which delegate holds the pending
call's tool (the framework's request names no agent), and the state is the desk's session as above.
Handoffs (`via: handoff`) are not written yet (no `handoff` channel): agent-framework-core 1.23.0 has none of its
own; the handoff workflow (`HandoffBuilder`) lives in the separate distribution agent-framework-orchestrations
(`agent_framework.orchestrations` only re-exports it lazily), which this adapter's requirements do not install yet.

Sibling calls in the approval turn (scripted-eager's `book_room`) are the framework's business:
with a session it holds non-approval siblings and runs them when the approval batch resumes, as
"already approved", whatever the decision was. The trace shows it.
The same holds for reckless-parallel's second `search_rooms` beside a gated book_room.
"""

from __future__ import annotations

from .adapter import MicrosoftAFAdapter

__all__ = ["MicrosoftAFAdapter"]
