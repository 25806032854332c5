"""Strands Agents (`strands-agents`): interrupts, raised in a tool's body or in a `BeforeToolCallEvent` hook.

Mechanism. Strands' interrupt system (strands docs, "Interrupts"): a tool body or a hook callback calls
`interrupt(name, reason=...)`; the agent's loop stops and `invoke_async` returns an `AgentResult` with
`stop_reason == "interrupt"` and `result.interrupts` (`strands.interrupt.Interrupt(id, name, reason)`). A resume
invokes the agent again with a list of `{"interruptResponse": {"interruptId": id, "response": ...}}`: strands
runs the interrupted tool or hook again *from the top*, and this time `interrupt()` returns the response.

- `ask` (human_in_the_loop): request_approval is a strands tool built with `strands.tool(..., context=True)`
  whose body calls `tool_context.interrupt("arena:request_approval", reason={call})`. Its response is
  `decision.as_text()`, which the body returns: the model reads the decision (a note, a reason, an answer) as
  request_approval's tool result. Nothing runs before the interrupt in that body, so the re-run costs nothing.
- `tool_gate` (approval_gate, doc_review, resume_safety): a `HookProvider` whose `BeforeToolCallEvent`
  callback calls `event.interrupt("arena:approve_tool", reason={call})` for each tool in `ctx.gated_tools`,
  the pattern strands documents for approving a tool call ("Interrupts", BeforeToolCallEvent). The response
  is the decision as JSON. Approved: the callback returns and strands runs the tool; an edit rewrites
  `event.tool_use` (which a BeforeToolCallEvent callback may write) with the human's arguments first. Denied:
  `event.cancel_tool = decision.as_text()`, which strands puts verbatim as the held call's (error) tool
  result, so "DENIED: reason" is what the model reads. An approval carries no note: the model reads the
  tool's own result. Why not the vended `strands.vended_interventions.hitl.HumanInTheLoop`: it interrupts in
  the same hook, but a refusal becomes `cancel_tool = "CONFIRMATION_FAILED: <its own prompt>"`, so the
  human's reason could never reach the model; the documented hook keeps the reason.
- `body_pause` (flight_booking's purchase_hold): the tool prepares, then `tool_context.interrupt(...)` in its
  body; since strands re-runs the body from the top on resume, *prepare runs again in the resumed leg* (the
  harness logs it: measured, not hidden), then commits or aborts by the decision. The response is keyed by the
  interrupt id (the call and the interrupt's name), not by what was prepared: when the price changed during the
  pause, the re-run prepares at the new price and the stored approval commits it (flight_booking fb-15).
- `multi_call`: several gated calls of one model turn each raise their own interrupt (the default
  ConcurrentToolExecutor runs every call of the turn); all of them come back in `result.interrupts` and the
  pause holds them all. Each decision is sent under the interrupt id of the call it names. A held call
  without a decision gets no response (strands' hook then runs with no response and interrupts again); a
  decision for a call the pause does not hold is sent with that call id as its `interruptId` (strands keys
  responses by interrupt id, which is opaque, so no id is made up): strands refuses it with
  `KeyError: no interrupt found`; a null decision is a `None` response, which strands reads as no response.

Sibling call (a consequential tool called in the same model turn as the approval request, scripted-eager):
nothing special-cases it. Strands' ConcurrentToolExecutor runs every tool call of the turn; only the
interrupted one is held, so a sibling `book_room` *executes in leg 0, before the run stops*. Its result is
kept in the paused tool execution (`_interrupt_state.pending_tool_execution.completed_tool_results`) and on
resume strands does not run it again; the model then reads the decision and the booking together.

The same pause resumed twice: the session has moved on after the first resume, and strands refuses the
responses ("agent is not in interrupt state"); two resumes at once (two processes) both read the still-paused
session and both run the held call: a FileSessionManager session has no claim or lock on a pause.

A new message instead of a decision (`message`, interruptions): delivered the way strands takes new user input,
the restored session's agent invoked with the text as its prompt (`invoke_async(text)`, `stream_async(text)` in a
streamed leg); nothing answers the held interrupt first. Strands documents interrupts as resumed with a list of
`interruptResponse`s (docs, "Interrupts") and enforces it: in interrupt state any other prompt raises `TypeError:
prompt_type=<class 'str'> | must resume from interrupt with list of interruptResponse's`
(`strands.interrupt._InterruptState.resume`, before anything runs). The leg ends errored with that text (measured:
the held call is `refused`), and the session stays paused on the held call: a late approval of it still runs it.

Approve always (`always`, interruptions int-15..17): strands' (t)rust, as its docs write the approval hook under
"Interrupts" > Session Management ("session manage the responses to avoid repeated interrupts on subsequent tool
calls": `if event.agent.state.get(...) == "t": return` before `event.interrupt`) and as its vended
`HumanInTheLoop(enable_trust=True)` does (`hitl:trusted_tools` in agent.state, checked first in
`_requires_approval`). An approve marked always records the tool in `agent.state` (TRUSTED), which the session
persists; the Gate returns without interrupting for a trusted tool. Strands has no reject-always (neither the docs
hook nor HumanInTheLoop keeps a denial), so a deny marked always is its call's denial alone: int-16's second
booking pauses again. At one pause holding two calls (int-17), the trusting call's hook runs first on resume and
the sibling's hook then finds the tool trusted and never reads its own (deny) response: the denied call runs. The
vended HumanInTheLoop(enable_trust=True) does the same (an interrupt answered "t" and its sibling's answered "n":
both calls run).

Input while paused (`input`, int-19..21), emulated: strands has no way to add input to a paused agent without
answering its interrupts (in interrupt state it takes only interruptResponse blocks, `_InterruptState.resume`, and
the persisted conversation ends with the held toolUse, whose result must come next). `add_input` restores the
session's agent, appends the note to `agent.state` (NOTES) and writes it with `FileSessionManager.sync_agent`;
nothing is invoked, the interrupts are untouched. Every agent carries strands' `ContextInjector` plugin
(`strands.vended_plugins.context_injector`, trigger "everyTurn"), which folds the notes into the latest user
message of each model call, ephemerally (never in the history): after the resume that is the message with the
held call's result, so the model reads the tool result, then the note.

Deny reason: carried on every channel (as the approval tool's result; `cancel_tool` text on the gate).

Streamed run (`stream`): every leg reads `agent.stream_async(...)` to its end instead of `invoke_async` (which
reads the same stream and keeps only its last event). What it tells: each model message's toolUse blocks (the
calls), the tools' results message (each toolResult, named by its call's toolUse), each `tool_interrupt_event`
(the pause, on the interrupted call); the pause itself is read from the last event's AgentResult, as before.
A turn's results come in one message after the whole turn ran: a sibling that ran before the pause is told in
the resumed leg, with the turn's other results, and a resumed leg replays the held toolUse without a message
(its tool is named from the restored conversation).

New process: the agent has a `FileSessionManager(session_id=..., storage_dir=<item workdir>/strands)`; strands
writes the conversation and its interrupt state (`_internal_state.interrupt_state`, including the pending
tool execution) into the session's `agent.json` and message files. The leg's state is JSON: the session id,
the storage directory and the pause's interrupt ids. A resume in any process builds the same agent with the
same session manager (which restores messages and interrupt state) and invokes it with the responses.
Recovery after a crash (`recover`): `resume` is the same resume again, with the same decision, from whatever the
session store holds (strands keeps the latest state only: once the resumed leg got past the pause, strands
refuses the interrupt responses, "agent is not in interrupt state"); `continue` invokes the restored agent with
no prompt (`continue_run`). Tools get strands' `toolUseId` as their call id.

Delegation (`agents_of(ctx)`, the delegation arena; nothing of it runs elsewhere). Each delegate is a strands Agent of
its own (its instructions, the tools it holds, the same gate hook, no session manager), named after its AgentSpec.
- `nested` (via tool): strands' agents as tools, `delegate.as_tool(name=, description=)` in the desk's `tools`
  (`strands.agent._agent_as_tool._AgentAsTool`, preserve_context=False: the delegate starts from its initial state on
  each call; its tool takes one `input` string). A delegate's gated call interrupts in the delegate's own
  BeforeToolCallEvent hook; `_AgentAsTool.stream` propagates it to the desk as a ToolInterruptEvent, renamed
  `v1:agent_as_tool:<desk toolUseId>:<inner id>`, and stores the delegate's interrupted turn
  (`take_snapshot(preset="session")`: messages, state, interrupt state) in the desk's interrupt state
  (`context["sub_agent_interrupted_turns"]`), which the desk's FileSessionManager writes to its agent.json. The
  desk's `result.interrupts` holds every delegate's interrupt of the turn (both delegates of del-10..12 run
  concurrently, each to its own gate). A resume invokes the desk with the interruptResponse's under those ids;
  strands re-runs the desk's interrupted agent-tool calls, each reloads its delegate's turn and forwards it its own
  responses (prefix stripped), so the delegate's hook gets the decision and its loop goes on from the held call.
- `handoff` (via handoff): strands' `strands.multiagent.Swarm(nodes=[desk, *delegates], entry_point=desk,
  session_manager=FileSessionManager(...))`. The desk hands off by Swarm's handoff tool; the next node gets the
  Swarm's context text (the user's request, the handoff message), not the desk's messages. A node's gated call
  interrupts in its hook; the Swarm stops INTERRUPTED with `result.interrupts`, keeping the node's messages and
  interrupt state in its own interrupt state (`multi_agent.json`, written by the session manager); a resume
  invokes the Swarm with the responses, which resumes that node. The handoff tool is strands' own
  `handoff_to_agent(agent_name, message, context)`.
- The pause names the delegate (`PendingRequest.agent`) by `event.agent.name` of the BeforeToolCallEvent that raised
  the interrupt (the delegate's strands Agent), carried in the interrupt's reason. The leg's state is as elsewhere
  (session id, storage directory, interrupt ids): a new process rebuilds the desk (or the Swarm) on the same
  session and resumes (del-13..16). A streamed leg unwraps the delegates' own events (`tool_stream_event` of an
  agent tool, `multiagent_node_stream` of a Swarm node) and tells them like the desk's.

Offline: `model=` is always passed (an `Agent()` without one builds a BedrockModel, whose boto3 session
contacts the EC2 metadata service), `AWS_EC2_METADATA_DISABLED=true` as a backstop, `OTEL_SDK_DISABLED=true`
(strands' tracer only uses the global OpenTelemetry provider, a no-op unless someone installs one; nothing is
exported), `callback_handler=None` (no printing). The model is `strands.models.openai.OpenAIModel` given an
`AsyncOpenAI(max_retries=0)` on the harness endpoint; it streams (`stream: true`), which the endpoint serves.
"""

from __future__ import annotations

from .adapter import StrandsAdapter

__all__ = ["StrandsAdapter"]
