"""LlamaIndex workflows adapter: a tool waits for a `HumanResponseEvent` (`Context.wait_for_event`), the pause is
the workflow going idle on that wait.

The agent is llama-index's `FunctionAgent` (a `Workflow`) over `llama_index.llms.litellm.LiteLLM("openai/<name>")`
pointed at the harness endpoint (non-streaming Chat Completions). The harness tools become `FunctionTool`s built
from their JSON schemas; each ordinary tool's body is one harness call (`ctx.tools.acall`, with llama-index's
own id for the call, the model's `tool_id`).

The pause (every channel): llama-index has no tool-approval flag; its documented human-in-the-loop form is a tool
that takes the workflow `Context` and awaits `ctx.wait_for_event(HumanResponseEvent, waiter_event=
InputRequiredEvent(...), waiter_id=<call id>, requirements={"call_id": <call id>})`. The approval tool's body is
only that wait (it returns the decision text: that is what the model reads); a gated tool's body waits, then makes
the harness call if approved; a body-pause tool prepares, waits, then commits or aborts. The adapter streams the
run's events (`handler.stream_events(expose_internal=True)`); when the workflow reports `WorkflowIdleEvent` with
`InputRequiredEvent`s seen, every step is blocked on a wait: that is the suspension. The leg saves
`handler.ctx.to_dict()` (llama-index's own JSON serialisation of the run: store, queues, in-progress steps,
waiters) in a new file under the item's work directory (one per pause, so an older state keeps pointing at its own
snapshot) and ends the run with `handler.cancel_run()`. The state is that file's path plus the pending calls
(JSON).

Resume (any process): `Context.from_dict(agent, saved)`, `handler = agent.run(ctx=ctx)`; restoring runs every
step that was waiting again (it waits again), and once the restored run reports `WorkflowIdleEvent` (it is waiting)
the leg sends one `handler.ctx.send_event(HumanResponseEvent(response=decision.as_text(), call_id=...,
decision=...))` per decision, then reads the stream until the run stops or goes idle again. Why after the idle:
events sent at once (right after `run(ctx=ctx)`, as the docs show for one wait) raced the re-run of several waiting
steps (doc_review's dr-01, 7 held calls: some steps ran twice, one never). **llama-index
replays the waiting step in full** when the event arrives (documented: "replays the entire step"): the tool body
above the wait runs once more when the context is restored and once more when the event arrives (a body-pause
tool's prepare shows twice in the resuming leg, and prepares at the price of that moment). Memory trap: the
agent's chat memory (`ctx.store["memory"]`, a `ChatMemoryBuffer`) is skipped by `to_dict()` (UnserializableKeyWarning); the leg saves
its messages beside the context and the resume puts them back with `ctx.store.set("memory", ...)` before the
first event is sent.

A sibling call (a consequential tool in the same model turn as the approval request): FunctionAgent sends every
tool call of the turn as its own `ToolCall` event and runs them at once (`call_tool`, 4 workers); only the calls
whose body waits are held, so a sibling `book_room` executes in the pausing leg, before the workflow goes idle.
Its result is kept in the serialised context (collected for `aggregate_tool_results`), never executed again.

A deny reason: the decision travels as the `HumanResponseEvent` the waiting body receives; the approval tool
returns `decision.as_text()` ("DENIED: reason") as its result, and a gated call denied returns the same text as
its result without running. An approval note reaches the model through the approval tool, not through a gated
call (whose result is the tool's own). An edit is not emulated: a gated call answered with an edit does not run
and returns `decision.as_text()` (the human's arguments, as text) - `edit_args=False`.

Several held calls (multi_call): each gated call of the turn waits under its own `waiter_id`/requirement (its call
id), so one idle pause holds them all; the resume sends exactly one event per decision given, keyed by its
`call_id` (a decision naming a call that is not held is sent too, under that id: nothing waits for it and
llama-index reports it unhandled; a held call without a decision gets no event and keeps waiting, so the run goes
idle again and the leg suspends again on it). A null decision is sent as an event with `decision` kind null,
which the body reads as not approved.

A new message instead of a decision (`message`, interruptions): llama-index documents one way for a human's input
to reach a run that waits on a prompt, the `HumanResponseEvent` the waiting step asked for (its HITL pages: the
caller reads the `InputRequiredEvent`, takes what the human enters - `input()`, a web form, a websocket reply - and
sends `HumanResponseEvent(response=...)`). The resume sends the message that way, as any decision: restore,
`agent.run(ctx=ctx)`, and at the idle one `HumanResponseEvent(response=<the text>, call_id=<the held call>)` (to
the first held call when several wait; the others keep waiting). The gated body reads it as no approval: the call
does not run and its result is the text, which the model reads as the tool's output (not as a user turn). The
multi-turn form, `agent.run(user_msg=..., ctx=ctx)`, does not apply to a paused run: a restored snapshot
`is_running`, so `Workflow.run` sends no start event and `BaseWorkflowAgent.run` discards `user_msg` (the run just
waits again on the same call: the message never reaches the model). The first pause's snapshot keeps no record of
the message: resumed again with an approval (a late approval), its replayed step books.

No "approve always" (`always`, interruptions int-15..17): llama-index has no tool-approval API at all, so nothing
of its own decides later calls of a tool from one decision (no always_approve, session permission or approval
policy in llama-index-core's agent/tools or llama-index-workflows, nor in its HITL docs: a HumanResponseEvent
answers the one wait_for_event that asked for it). Declared unsupported; not emulated.

Input while paused (`input`, int-19..21, emulated): llama-index documents no way to add input to a waiting run
without answering it (the HumanResponseEvent the waiter asked for decides the call; `agent.run(user_msg=..., ctx=ctx)`
drops user_msg on a paused context, see `message`). `add_input` writes a new snapshot whose saved chat memory ends
with the text as a user `ChatMessage`; the resume puts that memory back (`ctx.store.set("memory", ...)`) and the
agent's next LLM call is `memory.aget()` + the scratchpad (FunctionAgent.take_step), so the model reads the note
after the request and before the whole turn in progress (its tool calls and results, held call included).

Streamed run (`stream`): every leg already drives `handler.stream_events()` to the stop or the idle, so a streamed
leg reads the same stream the same way and also hands over what it tells, as a UI reads the agent's events: each
`ToolCall` (written when the call's step starts: a replayed waiting step writes it again, at the restore and when
the decision arrives), each `ToolCallResult` (the tool's output: for a held call, whatever its body returned,
also a denial or an edit answered with its text) and each `InputRequiredEvent` (a body waits on its call, written
once per wait). The suspension and the answer are read as in a plain leg.

A new process: the saved context file is all a resume needs (durable_state); crash_recovery resumes the same saved
context again with the same decision: the replayed step makes its harness call again under the same call id (the
model's, which the harness's airline de-duplicates). Nothing in the snapshot records that it was resumed: the same
state resumed twice (resume_safety) books twice, and an older snapshot resumes after the run has moved on.

Delegation (`agents_of(ctx)`, the delegation arena): the run is an `AgentWorkflow` whose root agent (`arena`, the
desk's instructions and its own tools) is a FunctionAgent, following llama-index's multi-agent docs
(understanding/agent/multi_agent). `handoff` (native): each `via: handoff` delegate is another FunctionAgent of the
same workflow (its instructions, the tools it holds, `can_handoff_to=[]`), and the root has `can_handoff_to=[...]`:
AgentWorkflow offers the root its own handoff tool, named `handoff` with required string arguments `to_agent` and
`reason` (the name is fixed: AgentWorkflow.aggregate_tool_results and FunctionAgent.handle_tool_call_results test
`tool_name == "handoff"`, so it cannot be named `transfer_to_<agent>`). The tool sets `next_agent`; the workflow
makes it `current_agent_name` and the delegate goes on with the shared chat memory. Its gated call waits in the same
workflow, so the pause, the saved `Context.to_dict()` (with `current_agent_name` in its store) and the resume are
the tool_gate channel's, from any process; the pending call's `agent` is the store's `current_agent_name` when the
InputRequiredEvent arrives (llama-index's record of whose turn it is). `nested` (unsupported): llama-index's
agent-as-tool is its Orchestrator pattern, a FunctionTool whose body awaits `sub_agent.run(user_msg=...)`; the
adapter builds it that way (a tool named after the agent, one `input` argument) but the sub-agent is a separate
workflow run with its own Context: its gated tool's wait pauses only that inner run, its InputRequiredEvent never
reaches the outer stream, and the outer call_tool step keeps awaiting it, so the run never pauses (del-01 timed
out with book_flight held inside the booking agent). Nothing in llama-index forwards a nested wait or serialises
an inner run, so the channel is declared unsupported and its items are not measured.

Offline: `LITELLM_LOCAL_MODEL_COST_MAP`, `LITELLM_OFFLINE_MODE`, `LITELLM_MODE=PRODUCTION` and `OTEL_SDK_DISABLED`
are set (setdefault) before the first import, LiteLLM's callbacks are emptied; llama-index-core has no telemetry
of its own, and its tokenizer (the chat memory counts tokens) reads cl100k_base from a bundled cache
(`TIKTOKEN_CACHE_DIR`, set by LiteLLM to its own bundled tokenizers). No client retries: `LiteLLM(max_retries=1)`
(tenacity: one attempt) and `num_retries=0` (LiteLLM's openai client's max_retries).
"""

from __future__ import annotations

from .adapter import LlamaIndexAdapter

__all__ = ["LlamaIndexAdapter"]
