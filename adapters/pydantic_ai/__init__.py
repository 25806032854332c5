"""pydantic-ai adapter: the approval tool is a deferred tool (`CallDeferred`), the pause is the run's end.

Gated tools use `requires_approval=True` (see "Tool-level gate" below).

The harness tools become `pydantic_ai.Tool.from_schema(...)` tools built from their JSON schemas;
each wraps one harness call (`ctx.tools.acall`). The approval tool's function raises
`pydantic_ai.CallDeferred(kind="question")`: pydantic-ai then ends the run with a
`DeferredToolRequests` output (the agent's `output_type` is `[str, DeferredToolRequests]`), which
holds the pending call and its `tool_call_id`. That is the suspension. The leg's state is the run's
message history serialised by pydantic-ai itself (`result.all_messages_json()`) plus the pending
call id, all plain JSON, so a fresh process can rebuild it with
`ModelMessagesTypeAdapter.validate_json` and resume.

Resume is a new `agent.run(message_history=..., deferred_tool_results=DeferredToolResults(calls=
{tool_call_id: decision.as_text()}))`: the decision becomes the request_approval call's tool result,
which is what the model reads, exactly as in the vanilla adapter.

Why `CallDeferred` and not `requires_approval=True` / `ApprovalRequired`: those hold a call the
model made until a human approves *that call*, then pydantic-ai executes the tool itself, and a
denial carries only a `ToolDenied(message)`. Here request_approval is itself the human step (it has
no implementation to run after approval), so it is an externally answered call whose result is the
human's decision; that is `CallDeferred` answered through `DeferredToolResults.calls`. Its kind is
`'question'` (pydantic-ai's kind for a call that asks the user for content) rather than the default
`'external'`; both are answered the same way through `DeferredToolResults.calls`.

Tool-level gate (approval_gate): a tool marked `requires_approval` is the same harness call built
with pydantic-ai's own `requires_approval=True` (set on the `Tool` that `from_schema` built, since
`from_schema` has no parameter for it). pydantic-ai never calls it on the model's call; the run ends
with that call in `DeferredToolRequests.approvals`, which is the suspension (pending = the call's
tool name, args and id). Resume passes `DeferredToolResults(approvals={tool_call_id: True})`, and
pydantic-ai then executes the held call itself (the harness logs it in the resumed leg), or
`{tool_call_id: ToolDenied(message=decision.as_text())}`, and the call never runs: the message
("DENIED: reason") is the call's tool result, what the model reads. `ToolApproved` has no field for
a note, so an approval note is not carried on this path (vanilla's gate drops it too: an approved
call's result is the tool's own). The state records which kind of deferral it answers.
A sibling ordinary call in the gated turn (reckless-parallel's second `search_rooms`) is executed in
that turn, before the run ends; only the gated call is held.

A new message instead of a decision (interruptions, the `message` channel): a new run with the message as its
`user_prompt` on the paused history, the way pydantic-ai continues a conversation (`agent.run(prompt,
message_history=...)`). On a history that ends with the pending (deferred) call, `Agent.run` refuses a new prompt
(UserError "Cannot provide a new user prompt when the message history contains unprocessed tool calls"); the error
and `pydantic_ai.messages.repair_messages`' docstring name the way: repair the history first ("Use this before
adding a new user prompt to history whose final response has unanswered tool calls, which `Agent.run` refuses").
So the history goes through `repair_messages` and pydantic-ai itself closes the pending call with a synthesized
`ToolReturnPart` (outcome 'interrupted', "The tool call was interrupted before a result was produced."); the
adapter answers nothing itself. The other documented path, a `user_prompt` *alongside* `deferred_tool_results`
(docs/deferred-tools.md), needs a decision for the call, which the human did not give. A late approval (the first
pause's state resumed with approve) is an ordinary resume: pydantic-ai keeps no run of its own between legs (the
history is the caller's), so whatever it does with it is what the arena records.

Input while paused (interruptions, the `input` channel: a note from someone else, deciding nothing): pydantic-ai keeps
no paused run to add it to (the paused run is the message history, which is the caller's), so `add_input` keeps the
text with the state and the resume hands it to the run as `user_prompt` together with `deferred_tool_results`, which
docs/deferred-tools.md documents ("optionally a new `user_prompt` to give the model additional instructions alongside
the deferred results"): pydantic-ai puts a UserPromptPart after the held calls' results in the request it sends next.
"Approve always" (the `always` channel) is declared unsupported: an approval in `DeferredToolResults` is for its
tool_call_id alone and pydantic-ai has no decision that stands for later calls (see the channel's mechanism).

Nothing here special-cases sibling tool calls: whatever pydantic-ai does with a `book_room` emitted
in the same turn as request_approval shows up in the harness's tool log. Observed (2.68): pydantic-ai
runs every ordinary tool call of the turn and only collects the deferred one, so a sibling
`book_room` executes before the run ends; its return stays in the message history and is sent to
the model again on resume, never re-executed.

Delegation (the `nested` and `handoff` channels, only when the arena gives `LegContext.agents`): the desk (the run's
agent) and one `Agent` per delegate, each with the harness tools it holds (gated ones `requires_approval=True`).
- An agent called as a tool is pydantic-ai's "agent delegation" (docs/multi-agent-applications.md): a desk tool named
  after the delegate (one `input` argument) whose body runs `delegate.run(input, usage=ctx.usage)` and returns its
  output. pydantic-ai does not carry a delegate's `DeferredToolRequests` to the parent (issue #3527, answered as a
  question; #4302 "Support nested deferred tool calls" still open; nothing in the 2.68 docs), so the body forwards it
  by hand, the pattern described in #3274 and PR #7036 (not merged): it raises `ApprovalRequired(metadata=...)` with
  the delegate's message history (`all_messages_json()`) and its held calls; the desk's run then ends with that desk
  call in `DeferredToolRequests.approvals` (several delegates of one turn: several such calls, one pause). The pause's
  pending calls are the delegate's held calls, each named (`PendingRequest.agent`) by the desk call pydantic-ai holds
  (its tool name is the delegate's). The state is the desk's JSON history plus each desk call's metadata. Resume: the
  desk's `agent.run(message_history=..., deferred_tool_results=DeferredToolResults(approvals={desk call: True},
  metadata={desk call: {..., the human's verdicts}}))`; pydantic-ai calls the delegating tool again with
  `ctx.tool_call_approved` and `ctx.tool_call_metadata`, and it runs the delegate on its stored history with its own
  `DeferredToolResults(approvals={call: True | ToolApproved(override_args) | ToolDenied(message)})`. The desk call's
  approval is glue (it only lets the delegate resume, a denial included), hence `kind="emulated"`.
- A handoff is the model-called one pydantic-ai documents, an output function (docs/output.md "Output functions",
  `hand_off_to_sql_agent`; multi-agent-applications.md: "to hand off control to another agent completely ... use an
  output function"): `ToolOutput(fn, name="transfer_to_<name>")` in the desk's `output_type`; `fn` runs the delegate on
  `ctx.messages[:-1]` (the docs' example) and its result is the run's output. A paused delegate's
  `DeferredToolRequests` thus ends the run; the adapter keeps whose run it is (`HandedOver`: pydantic-ai keeps no
  run), the state is that delegate's JSON history plus its name, and the resume is that delegate's own
  `agent.run(message_history=..., deferred_tool_results=...)`, the desk not run again (`kind="emulated"`: which agent
  to resume is the adapter's record). In a streamed leg the delegates' runs stream too (`run_stream_events`).

The paused state on a server (`--store postgres|redis`, the `postgres` / `redis` channels): Pydantic AI has no store
class; what it documents is persisting the run's message history yourself, serialised with `ModelMessagesTypeAdapter`
(docs "Messages and chat history", "Storing and loading messages (to JSON)": "you may want to store the messages
history of an agent run on disk or in a database ... The intended way to do this is using a TypeAdapter"), with the
pending `DeferredToolRequests` answered later by `DeferredToolResults` (docs/deferred-tools.md). So, on a server, that
same JSON (the history and the rest of the paused state: the held call ids, their kind, a delegate's metadata) goes
into a record of arena's `KeptRecords` (the shared helper of the adapters that keep a paused state behind an id): a row
of a table of the item's database (`pydantic_ai_paused_runs`) or a Redis hash under the item's key prefix, and the
leg's state is only the record's id. Each record's write and read opens its own connection and closes it. With
SQLite (the default) nothing changes: the JSON is the state itself.

Offline: no logfire; the agent's `instrument` is set to False explicitly (it is off by default and
`logfire_api` is the no-op shim); no price updates are started; the model client is pydantic-ai's
`OpenAIChatModel` (Chat Completions) pointed at the harness's loopback base URL.
"""

from __future__ import annotations

from .adapter import PydanticAIAdapter
from .decision import deferred_results
from .input import for_new_prompt, is_message, user_prompt
from .outcome import outcome
from .stream import tell
from .tools import LegTools

# the adapter, and what a family adapter built on it (pydantic_ai_dbos) uses: the tool box its tools call, the run's
# outcome, the decision as DeferredToolResults, a new prompt on the paused history, the stream's events told
__all__ = [
    "PydanticAIAdapter",
    "LegTools", "deferred_results", "for_new_prompt", "is_message", "outcome", "tell", "user_prompt",
]
