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
  `DeferredToolRequests` thus ends the run; the adapter keeps whose run it is (`_HandedOver`: pydantic-ai keeps no
  run), the state is that delegate's JSON history plus its name, and the resume is that delegate's own
  `agent.run(message_history=..., deferred_tool_results=...)`, the desk not run again (`kind="emulated"`: which agent
  to resume is the adapter's record). In a streamed leg the delegates' runs stream too (`run_stream_events`).

The paused state on a server (`--store postgres|redis`, the `postgres` / `redis` channels): Pydantic AI has no store
class; what it documents is persisting the run's message history yourself, serialised with `ModelMessagesTypeAdapter`
(docs "Messages and chat history", "Storing and loading messages (to JSON)": "you may want to store the messages
history of an agent run on disk or in a database ... The intended way to do this is using a TypeAdapter"), with the
pending `DeferredToolRequests` answered later by `DeferredToolResults` (docs/deferred-tools.md). So, on a server, that
same JSON (the history and the rest of the paused state: the held call ids, their kind, a delegate's metadata) goes
into a table of the item's database (`pydantic_ai_paused_runs`, created by the adapter, psycopg 3) or a Redis hash
under the item's key prefix (redis-py), and the leg's state is only the row's id / the key. Each leg opens its own
connection and closes it. With SQLite (the default) nothing changes: the JSON is the state itself.

Offline: no logfire; the agent's `instrument` is set to False explicitly (it is off by default and
`logfire_api` is the no-op shim); no price updates are started; the model client is pydantic-ai's
`OpenAIChatModel` (Chat Completions) pointed at the harness's loopback base URL.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

from arena.http import async_client
from arena.tools import body as bodypause
from arena.types import (
    AdapterInfo,
    Capabilities,
    Channel,
    Decision,
    DecisionKind,
    DecisionSet,
    LegContext,
    LegResult,
    PendingRequest,
    Store,
    ToolKind,
    ToolSpec,
)


class LegTools:
    """The tool box the agent's tools call, pointed at each leg's own by `use`."""

    def __init__(self) -> None:
        self._tools: Any = None

    def use(self, tools: Any) -> None:
        self._tools = tools

    @property
    def specs(self) -> Any:
        return self._tools.specs

    def call(self, name: str, args: dict[str, Any], call_id: str | None = None) -> str:
        return str(self._tools.call(name, args, call_id=call_id))

    async def acall(self, name: str, args: dict[str, Any], call_id: str | None = None) -> str:
        return str(await self._tools.acall(name, args, call_id=call_id))


class PydanticAIAdapter:
    order = 40  # where it stands in `arena list` and the reports (lower first)
    # what a fork server imports before it forks workers (arena/worker/forkserver.py)
    preload = (
        "pydantic_ai",
        "pydantic_ai.models.openai",
        "pydantic_ai.providers.openai",
        "pydantic_ai.messages",
        "openai",
        "genai_prices.data",
    )
    # the answer models a worker builds at its first answer (deferred by their libraries), recorded in forked workers:
    # built once in the fork server instead (arena/worker/forkserver.py, complete_models); each name is in some releases
    complete = (
        "openai.types.completion_usage.CompletionUsage",
        "pydantic_ai.models.openai._ChatCompletion",
        "pydantic_ai.models.openai._chat_completions.LenientChatCompletion",
    )

    @staticmethod
    def warm() -> None:
        """Build the message history's validator once in the fork server (pydantic defers it to first use)."""
        from pydantic_ai.messages import ModelMessagesTypeAdapter

        ModelMessagesTypeAdapter.validate_json(b"[]")

    info = AdapterInfo(
        name="pydantic_ai",
        framework="pydantic-ai-slim",
        channels=(
            Channel(
                name="ask",
                kind="native",
                mechanism=(
                    "deferred tool: request_approval raises CallDeferred(kind='question'), the run ends with "
                    "DeferredToolRequests (output_type=[str, DeferredToolRequests]); resume with "
                    "agent.run(message_history=..., "
                    "deferred_tool_results=DeferredToolResults(calls={tool_call_id: decision text}))"
                ),
                carries=Capabilities(
                    deny_reason=True,
                    approve_note=True,
                    free_text=True,
                    notes=(
                        "The decision is the deferred call's result (DeferredToolResults.calls), a free "
                        "string, so approve notes, deny reasons and free answers all reach the model as the "
                        "request_approval tool result. State = pydantic-ai's own JSON message history + call id. "
                        "Gated tools (requires_approval): a denial's text reaches the model as ToolDenied.message; "
                        "ToolApproved has no note field, so an approval note is not carried there."
                    ),
                ),
            ),
            Channel(
                name="tool_gate",
                kind="native",
                mechanism=(
                    "Tool(requires_approval=True) on each gated tool: the run ends with DeferredToolRequests.approvals; "
                    "resume with agent.run(message_history=..., deferred_tool_results=DeferredToolResults(approvals="
                    "{tool_call_id: True | ToolApproved(override_args=...) | ToolDenied(message=decision text)}))"
                ),
                carries=Capabilities(
                    deny_reason=True, approve_note=False, free_text=False, edit_args=True,
                    notes="ToolDenied.message is the held call's result; ToolApproved has no note field; "
                          "ToolApproved(override_args=...) runs the call with the human's arguments",
                ),
            ),
            Channel(
                name="body_pause",
                kind="native",
                mechanism=(
                    "the tool prepares, then raises ApprovalRequired(metadata=...) unless RunContext.tool_call_approved; "
                    "resumed with DeferredToolResults(approvals={id: True | ToolDenied}): pydantic-ai calls the function "
                    "again from the top once approved (a denial never calls it again)"
                ),
            ),
            Channel(
                name="multi_call",
                kind="native",
                mechanism=(
                    "every gated call of the turn in DeferredToolRequests.approvals; DeferredToolResults(approvals={"
                    "tool_call_id: True | ToolApproved(override_args=...) | ToolDenied(message=...)}), one per call"
                ),
            ),
            Channel(
                name="recover",
                kind="native",
                mechanism=(
                    "the message history stored at the pause (ModelMessagesTypeAdapter) is run again in a new process"
                    " with the same DeferredToolResults (pydantic-ai docs, deferred tools: resume from stored "
                    "history)"
                ),
            ),
            Channel(
                name="message",
                kind="native",
                mechanism=(
                    "agent.run(text, message_history=repair_messages(paused history)): a new user prompt on the "
                    "paused run's history, closed out first with pydantic_ai.messages.repair_messages (documented "
                    "for a new prompt on a history with unanswered tool calls, which Agent.run refuses); "
                    "pydantic-ai answers each pending call with its synthesized 'interrupted' ToolReturnPart"
                ),
            ),
            Channel(
                name="always",
                kind="unsupported",
                mechanism=(
                    "pydantic-ai has no decision that stands for later calls: DeferredToolResults.approvals answers "
                    "each held call by its tool_call_id (True | ToolApproved | ToolDenied, no scope field), "
                    "DeferredToolRequests.build_results(approve_all=True) approves only the calls pending at that "
                    "pause, and requires_approval / ApprovalRequiredToolset / HandleDeferredToolCalls are policies the "
                    "application writes itself (pydantic_ai/_deferred.py, toolsets/approval_required.py, "
                    "capabilities/deferred_tool_handler.py in 2.68; docs/deferred-tools.md). Pydantic AI Harness's "
                    "PermissionPolicy doc says rule persistence ('always allow') is out of scope"
                ),
            ),
            Channel(
                name="input",
                kind="native",
                mechanism=(
                    "add_input stages the text in the paused state (pydantic-ai keeps no paused run: the history is "
                    "the caller's); the resume is agent.run(text, message_history=..., deferred_tool_results=...), "
                    "the user_prompt pydantic-ai documents alongside deferred results (docs/deferred-tools.md: "
                    "'optionally a new user_prompt ... alongside the deferred results'): a UserPromptPart after the "
                    "held calls' results in the same request"
                ),
            ),
            Channel(
                name="nested",
                kind="emulated",
                mechanism=(
                    "pydantic-ai's 'agent delegation' (docs/multi-agent-applications.md): a Tool of the desk named after "
                    "the delegate whose body runs delegate.run(task, usage=ctx.usage). pydantic-ai does not carry a "
                    "delegate's DeferredToolRequests to the parent (issue #3527; #4302 open; not in the 2.68 docs), so "
                    "the adapter forwards it by hand, the pattern of #3274 / PR #7036: the body raises "
                    "ApprovalRequired(metadata={delegate's message history JSON, its held calls}), the desk's run ends "
                    "with that call in DeferredToolRequests.approvals; resume = the desk's agent.run(message_history=..., "
                    "deferred_tool_results=DeferredToolResults(approvals={desk call id: True}, metadata={desk call id: "
                    "{..., human's verdicts}})), pydantic-ai calls the body again (ctx.tool_call_approved, "
                    "ctx.tool_call_metadata), which runs the delegate on its history with DeferredToolResults(approvals="
                    "{call id: True | ToolApproved(override_args) | ToolDenied(message)})"
                ),
                carries=Capabilities(
                    deny_reason=True, approve_note=False, free_text=False, edit_args=True,
                    notes="the delegate's own gate: ToolDenied.message is the held call's result in the delegate's "
                          "run; ToolApproved(override_args=...) runs it as edited; ToolApproved has no note field",
                ),
            ),
            Channel(
                name="handoff",
                kind="emulated",
                mechanism=(
                    "the model-called handoff pydantic-ai documents, an output function (docs/output.md 'Output "
                    "functions', hand_off_to_sql_agent; multi-agent-applications.md: 'to hand off control to another "
                    "agent completely ... use an output function'): ToolOutput(fn, name='transfer_to_<name>'), fn runs "
                    "delegate.run(message_history=ctx.messages[:-1]) and its output is the run's output. A paused "
                    "delegate's DeferredToolRequests is that output; which agent's run paused is kept by the adapter "
                    "(not by pydantic-ai, which keeps no run), and the resume is that delegate's agent.run("
                    "message_history=its all_messages, deferred_tool_results=DeferredToolResults(approvals=...))"
                ),
                carries=Capabilities(
                    deny_reason=True, approve_note=False, free_text=False, edit_args=True,
                    notes="the delegate's own tool gate, as tool_gate",
                ),
            ),
            Channel(
                name="postgres",
                kind="native",
                mechanism=(
                    "the message history as ModelMessagesTypeAdapter JSON (result.all_messages_json()) in a table of "
                    "the item's database (pydantic_ai_paused_runs, created by the adapter with psycopg 3; one row per "
                    "pause: the history and the held calls' ids and kinds), the documented way (docs 'Messages and "
                    "chat history', storing messages to JSON: 'store the messages history of an agent run on disk or "
                    "in a database'); Pydantic AI has no store class. The leg's state is the row's id; the resume "
                    "reads the row and runs agent.run(message_history=ModelMessagesTypeAdapter.validate_json(...), "
                    "deferred_tool_results=...)"
                ),
            ),
            Channel(
                name="redis",
                kind="native",
                mechanism=(
                    "the message history as ModelMessagesTypeAdapter JSON (result.all_messages_json()) in a Redis hash "
                    "under the item's key prefix (<prefix>pydantic_ai:paused_run:<id>, redis-py; the history and the "
                    "held calls' ids and kinds), the documented way (docs 'Messages and chat history', storing "
                    "messages to JSON: 'store the messages history of an agent run on disk or in a database'); "
                    "Pydantic AI has no store class. The leg's state is the key's id; the resume reads the hash and "
                    "runs agent.run(message_history=ModelMessagesTypeAdapter.validate_json(...), "
                    "deferred_tool_results=...)"
                ),
            ),
            Channel(
                name="stream",
                kind="native",
                mechanism=(
                    "agent.run_stream_events(...) read to its end (FunctionToolCallEvent, FunctionToolResultEvent, "
                    "DeferredToolRequestsEvent for the paused calls); the run's result from its AgentRunResultEvent"
                ),
            ),
        ),
    )

    def __init__(self) -> None:
        self._agent: Any = None
        self._provider: Any = None
        # The agent is built once per instance; its tools call the tool box of the leg that runs (a resumed
        # leg's tool box is its own: the harness may hold or fault its calls), pointed at it by each leg.
        self._leg_tools = LegTools()
        # delegation: the leg's context the delegates' runs stream to, and the delegates' agents by name
        self._ctx: Any = None
        self._delegates: dict[str, Any] = {}

    async def aclose(self) -> None:
        if self._provider is not None:
            await self._provider.client.close()
            self._provider = None

    # -- construction ----------------------------------------------------------------------------

    # Hooks for a subclass (pydantic_ai_dbos): the same agent, its harness calls and construction wrapped.

    def _tools(self, ctx: LegContext) -> Any:
        """The tool box the tools' bodies call: this leg's, as the harness gives it."""
        self._leg_tools.use(ctx.tools)
        return self._leg_tools

    def _agent_options(self, ctx: LegContext) -> dict[str, Any]:
        """Extra keyword arguments for `Agent(...)` (none)."""
        return {}

    def _build(self, ctx: LegContext) -> Any:
        tools = self._tools(ctx)
        if self._agent is not None:
            return self._agent
        from pydantic_ai import Agent, ApprovalRequired, CallDeferred, DeferredToolRequests, RunContext, Tool
        from pydantic_ai.models.openai import OpenAIChatModel
        from pydantic_ai.providers.openai import OpenAIProvider

        def body_tool(spec: ToolSpec) -> Any:
            """A tool whose body pauses: prepare, then `ApprovalRequired` until the call is approved; pydantic-ai
            calls the function again (from the top) once a run is given the approval, which then commits."""

            async def body(run: RunContext, **kwargs: Any) -> str:
                call_id = run.tool_call_id  # pydantic-ai's id for this call (the model's)
                prepared = await bodypause.prepare(tools, spec, kwargs, call_id=call_id)
                if not bodypause.ready(prepared):
                    return bodypause.refused(prepared)
                if not run.tool_call_approved:
                    raise ApprovalRequired(metadata={"amount": prepared.get("amount")})
                return await bodypause.finish(tools, spec, prepared, Decision(kind="approve"), call_id=call_id)

            return Tool.from_schema(body, name=spec.name, description=spec.description, json_schema=spec.parameters,
                                    takes_ctx=True)

        def harness_tool(spec: ToolSpec) -> Any:
            if spec.kind is ToolKind.approval:

                def defer(**kwargs: Any) -> str:
                    # The human answers this call outside the run: pydantic-ai ends the run here.
                    # kind="question": the call asks the user for content (their decision).
                    try:
                        deferred = CallDeferred(kind="question")
                    except TypeError:  # pydantic-ai before 2.68 (`-a pydantic_ai@2.66.0`): no kinds yet
                        deferred = CallDeferred()
                    raise deferred

                function, takes_ctx = defer, False
            elif spec.body_pause:
                return body_tool(spec)
            else:

                async def execute(run: RunContext, **kwargs: Any) -> str:
                    return await tools.acall(spec.name, kwargs, call_id=run.tool_call_id)

                function, takes_ctx = execute, True  # RunContext.tool_call_id: pydantic-ai's id for the call
            tool = Tool.from_schema(function, name=spec.name, description=spec.description, json_schema=spec.parameters,
                                    takes_ctx=takes_ctx)
            # A gated tool: pydantic-ai's own tool-level approval (`Tool(requires_approval=True)`; `from_schema`
            # has no such parameter, the attribute is what `Tool.tool_def` reads to make the kind 'unapproved').
            # pydantic-ai then never calls the function until a run is given an approval for that call.
            tool.requires_approval = spec.requires_approval
            return tool

        from openai import AsyncOpenAI

        # No client retries (the openai client's default is 2): every adapter's model client makes the
        # same number of attempts, so an endpoint fault cannot change the framework comparison.
        client = AsyncOpenAI(base_url=ctx.model.base_url, api_key=ctx.model.api_key, max_retries=0,
                             http_client=async_client())
        self._provider = OpenAIProvider(openai_client=client)
        model = OpenAIChatModel(ctx.model.name, provider=self._provider)
        if ctx.agents:  # delegation: the desk and its delegates (only when the arena gives agents)
            agent = self._build_delegation(ctx, model, harness_tool)
        else:
            agent = Agent(
                model,
                instructions=ctx.instructions,
                output_type=[str, DeferredToolRequests],
                tools=[harness_tool(s) for s in ctx.tools.specs],
                **self._agent_options(ctx),
            )
        agent.instrument = False  # no OpenTelemetry / logfire spans, whatever the global default
        self._agent = agent
        return agent

    def _build_delegation(self, ctx: LegContext, model: Any, harness_tool: Any) -> Any:
        """The run's agent (the desk) and one pydantic-ai `Agent` per delegate, each with the harness tools it holds
        (its gated ones `requires_approval=True`, as in a single-agent run).

        A delegate called as a tool is pydantic-ai's "agent delegation" (docs/multi-agent-applications.md): a tool of
        the desk, named after the delegate, whose body runs `delegate.run(task, usage=ctx.usage)` and returns its
        output. pydantic-ai does not carry a delegate's `DeferredToolRequests` to the parent (issue #3527; #4302 open),
        so the body forwards it by hand, the pattern of #3274 / PR #7036: it raises `ApprovalRequired(metadata=...)`
        holding the delegate's message history (JSON) and its held calls, which ends the desk's run with that call in
        `DeferredToolRequests.approvals`. Resumed with the desk's call approved and the human's verdicts in
        `DeferredToolResults.metadata`, pydantic-ai calls the body again (`ctx.tool_call_approved`), which runs the
        delegate on its own history with its own `DeferredToolResults`.

        A handoff is an output function (docs/output.md, "Output functions"; multi-agent-applications.md: "to hand
        off control to another agent completely ... use an output function"): `ToolOutput(fn,
        name='transfer_to_<name>')`, which the model calls; `fn` runs the delegate on `ctx.messages[:-1]` (the docs'
        example) and its output is the run's. A paused delegate's `DeferredToolRequests` is that output; the adapter
        keeps which agent it was (`_HandedOver`), and the resume runs that delegate on its own history."""
        from pydantic_ai import Agent, ApprovalRequired, DeferredToolRequests, RunContext, Tool, ToolOutput
        from pydantic_ai.messages import ModelMessagesTypeAdapter

        delegates: dict[str, Any] = {}
        for spec in ctx.agents:
            inner = Agent(model, name=spec.name, instructions=spec.instructions,
                          output_type=[str, DeferredToolRequests],
                          tools=[harness_tool(s) for s in ctx.own_tools(spec.name)])
            inner.instrument = False
            delegates[spec.name] = inner
        self._delegates = delegates

        def as_tool(name: str, description: str) -> Any:
            inner = delegates[name]

            async def delegate(run: RunContext, input: str) -> str:  # noqa: A002 (the task, the tool's one argument)
                held = run.tool_call_metadata if run.tool_call_approved else None
                if isinstance(held, dict) and "messages" in held:  # resumed: the delegate goes on where it stopped
                    result = await self._run(inner, self._ctx, usage=run.usage,
                                             message_history=ModelMessagesTypeAdapter.validate_json(held["messages"]),
                                             deferred_tool_results=_verdicts(held))
                else:
                    result = await self._run(inner, self._ctx, user_prompt=input, usage=run.usage)
                output = result.output
                if isinstance(output, DeferredToolRequests):  # forwarded to the desk's run by hand (#3527)
                    raise ApprovalRequired(metadata={
                        "agent": name, "messages": result.all_messages_json().decode(),
                        "calls": [{"tool": c.tool_name, "args": c.args_as_dict(), "call_id": c.tool_call_id,
                                   "kind": _kind(output, c.tool_call_id)} for c in [*output.calls, *output.approvals]],
                    })
                return output if isinstance(output, str) else str(output)

            task = {"type": "object", "properties": {"input": {"type": "string", "description": "the task"}},
                    "required": ["input"]}
            return Tool.from_schema(delegate, name=name, description=description, json_schema=task, takes_ctx=True)

        def handoff(name: str, description: str) -> Any:
            inner = delegates[name]

            async def transfer(run: RunContext) -> Any:
                # the docs' example: drop the final message, the output tool call, and run the delegate on the rest
                result = await self._run(inner, self._ctx, message_history=run.messages[:-1], usage=run.usage)
                return _HandedOver(name, result)

            # this module's annotations are strings (`from __future__ import annotations`) and RunContext is imported
            # here, not at module level: pydantic-ai reads the signature to see that the function takes the context
            transfer.__annotations__ = {"run": RunContext, "return": Any}

            return ToolOutput(transfer, name=f"transfer_to_{name}",
                              description=f"Hand the conversation over to {name}: {description}")

        return Agent(
            model,
            instructions=ctx.instructions,
            output_type=[str, DeferredToolRequests,
                         *(handoff(a.name, a.description) for a in ctx.agents if a.via == "handoff")],
            tools=[*(harness_tool(s) for s in ctx.own_tools(None)),
                   *(as_tool(a.name, a.description) for a in ctx.agents if a.via == "tool")],
            **self._agent_options(ctx),
        )

    # -- legs ------------------------------------------------------------------------------------

    async def start(self, ctx: LegContext) -> LegResult:
        self._ctx = ctx
        agent = self._build(ctx)
        result = await self._run(agent, ctx, user_prompt=ctx.item.input)
        return await _kept(self._outcome(result, ctx), ctx.store)

    async def add_input(self, state: dict[str, Any], text: str, ctx: LegContext) -> dict[str, Any]:
        """Input while paused (the `input` channel), deciding nothing: pydantic-ai holds no paused run to add it to
        (the history is the caller's), so it is kept with the state, a copy (the state handed back at the pause stays
        as it was), and the resume sends it as the run's `user_prompt` alongside the deferred results."""
        return {**state, "inputs": [*state.get("inputs", []), text]}

    async def resume(self, state: dict[str, Any], decision: Decision | DecisionSet, ctx: LegContext) -> LegResult:
        from pydantic_ai.messages import ModelMessagesTypeAdapter

        self._ctx = ctx
        agent = self._build(ctx)
        if PAUSED_ID in state:  # the paused state is on the server (`--store postgres|redis`): read it back
            state = await _load_paused(ctx.store, state)
        # a delegate the run was handed over to paused: the run goes on as that delegate's, on its own history
        handed = state.get("agent") if state.get("kind") != "nested" else None
        if handed is not None:
            agent = self._delegates[handed]
        history = ModelMessagesTypeAdapter.validate_json(state["messages"])
        prompt = _prompt(state, decision)
        if _is_message(decision):  # a new user message instead of a decision (the `message` channel)
            result = await self._run(agent, ctx, user_prompt=prompt, message_history=_for_new_prompt(history))
            return await _kept(self._outcome(result, ctx, handed), ctx.store)
        if state.get("kind") == "nested":  # delegates called as tools wait: the desk's calls of them resume them
            results = _nested_results(state, decision)
        else:
            results = self._deferred_results(state, decision)
        # input added while paused: the new user prompt pydantic-ai takes alongside the deferred results
        extra = {} if prompt is None else {"user_prompt": prompt}
        result = await self._run(agent, ctx, message_history=history, deferred_tool_results=results, **extra)
        return await _kept(self._outcome(result, ctx, handed), ctx.store)

    @staticmethod
    async def _run(agent: Any, ctx: LegContext, **run: Any) -> Any:
        """`agent.run(...)`, or in a streamed leg `agent.run_stream_events(...)` read to its end, handing over each
        tool call, each tool's return and each deferred (paused) call its events tell; the run's result."""
        if not ctx.stream:
            return await agent.run(**run)
        from pydantic_ai import AgentRunResultEvent

        result = None
        async with agent.run_stream_events(**run) as events:
            async for event in events:
                if isinstance(event, AgentRunResultEvent):
                    result = event.result
                else:
                    PydanticAIAdapter._tell(ctx, event)
        if result is None:
            raise RuntimeError("the event stream ended without the run's result (AgentRunResultEvent)")
        return result

    @staticmethod
    def _tell(ctx: LegContext, event: Any) -> None:
        """Hand over what one of pydantic-ai's stream events tells: a tool call, a tool's return, the paused calls."""
        from pydantic_ai import DeferredToolRequestsEvent, FunctionToolCallEvent, FunctionToolResultEvent
        from pydantic_ai.messages import ToolReturnPart

        if isinstance(event, FunctionToolCallEvent):
            ctx.told("tool_call", event.part.tool_name, event.part.tool_call_id)
        elif isinstance(event, FunctionToolResultEvent) and isinstance(event.part, ToolReturnPart):
            ctx.told("tool_result", event.part.tool_name, event.part.tool_call_id, event.part.model_response_str())
        elif isinstance(event, DeferredToolRequestsEvent):
            for part in [*event.requests.calls, *event.requests.approvals]:
                ctx.told("pause", part.tool_name, part.tool_call_id)

    @staticmethod
    def _deferred_results(state: dict[str, Any], decision: Decision | DecisionSet) -> Any:
        """The `DeferredToolResults` that answer the paused run's deferred call(s) with the decision."""
        from pydantic_ai import DeferredToolResults, ToolApproved, ToolDenied

        call_id = state["call_id"]
        if isinstance(decision, DecisionSet):
            # One answer per decision, keyed by the call id it names, as given: a held call without one gets
            # none, a decision naming a call that is not held is passed on, and a null decision is None.
            # What pydantic-ai does with an incomplete or malformed set is what resume_safety measures.
            verdicts: dict[str, Any] = {}
            for d in decision.decisions:
                key = d.call_id if d.call_id is not None else call_id
                if d.kind is DecisionKind.edit and d.args is not None:
                    verdicts[key] = ToolApproved(override_args=d.args)
                elif d.kind is DecisionKind.null:
                    verdicts[key] = None
                else:
                    verdicts[key] = True if d.approved else ToolDenied(message=d.as_text())
            results = DeferredToolResults(approvals=verdicts)
        elif state.get("kind", "question") == "approval":
            # A gated tool call: approved, pydantic-ai itself executes the held call; otherwise it never
            # runs and ToolDenied's message becomes its tool result (what the model reads).
            verdict = True if decision.approved else ToolDenied(message=decision.as_text())
            results = DeferredToolResults(approvals={call_id: verdict})
        else:  # the approval tool: the decision is its result
            results = DeferredToolResults(calls={call_id: decision.as_text()})
        return results

    def _outcome(self, result: Any, ctx: LegContext, agent: str | None = None) -> LegResult:
        """How the run ended. `agent`: the delegate whose run it is (after a handoff), named in its pending calls."""
        from pydantic_ai import DeferredToolRequests

        output = result.output
        if isinstance(output, _HandedOver):  # the desk handed the run over: its outcome is the delegate's run's
            return self._outcome(output.result, ctx, output.agent)
        if not isinstance(output, DeferredToolRequests):
            return LegResult.finished(output if isinstance(output, str) else str(output))
        if ctx.agents and agent is None:
            nested = self._nested(result, output, ctx)
            if nested is not None:
                return nested
        if agent is not None:
            paused = self._paused(result, output, ctx)
            if paused.status == "suspended":  # the delegate's own pause: its calls name it, its history is the state
                paused.state["agent"] = agent
                calls = [p.model_copy(update={"agent": agent}) for p in paused.all_pending]
                return LegResult.suspended(calls, paused.state)
            return paused
        return self._paused(result, output, ctx)

    @staticmethod
    def _nested(result: Any, output: Any, ctx: LegContext) -> LegResult | None:
        """The desk's run ended on its calls of delegates (agents called as tools) that forwarded their held calls
        (`ApprovalRequired` metadata): one pause holding every delegate's held call. Each pending call's agent is the
        delegate whose tool call pydantic-ai holds (`DeferredToolRequests.approvals[i].tool_name`, the delegate's
        name). None when the desk's run ended on something else."""
        delegated = {a.name for a in ctx.agents if a.via == "tool"}
        calls = [c for c in output.approvals if c.tool_name in delegated]
        if not calls:
            return None
        others = [c.tool_name for c in [*output.calls, *output.approvals] if c not in calls]
        held = {c.tool_call_id: (output.metadata or {}).get(c.tool_call_id) for c in calls}
        if others or any(not isinstance(m, dict) or not m.get("calls") for m in held.values()):
            names = [c.tool_name for c in [*output.calls, *output.approvals]]
            return LegResult.errored(f"run ended with unexpected deferred tool requests: {names}")
        pending = [PendingRequest(tool=i["tool"], args=i["args"], call_id=i["call_id"], agent=c.tool_name)
                   for c in calls for i in held[c.tool_call_id]["calls"]]
        state = {"messages": result.all_messages_json().decode(), "kind": "nested", "call_id": pending[0].call_id,
                 "delegated": held}
        return LegResult.suspended(pending, state)

    def _paused(self, result: Any, output: Any, ctx: LegContext) -> LegResult:
        """A run that ended with its own deferred calls (a single agent's, or a delegate's after a handoff)."""
        approval_tools = {s.name for s in ctx.tools.specs if s.kind is ToolKind.approval}
        gated = set(ctx.gated_tools)
        questions = [c for c in output.calls if c.tool_name in approval_tools and _kind(output, c.tool_call_id) == "question"]
        bodies = {s.name for s in ctx.body_pause_tools}
        approvals = [c for c in output.approvals if c.tool_name in gated or c.tool_name in bodies]
        unexpected = [c.tool_name for c in [*output.calls, *output.approvals] if c not in questions and c not in approvals]
        if not unexpected and not questions and len(approvals) > 1 and all(c.tool_name in gated for c in approvals):
            # several gated calls of one turn, all held: one pause, one decision per call (by tool_call_id)
            state = {"messages": result.all_messages_json().decode(), "call_id": approvals[0].tool_call_id,
                     "kind": "approval", "call_ids": [c.tool_call_id for c in approvals]}
            return LegResult.suspended([PendingRequest(tool=c.tool_name, args=c.args_as_dict(), call_id=c.tool_call_id)
                                        for c in approvals], state)
        if unexpected or len(questions) + len(approvals) != 1:
            # Only request_approval (a question) or one gated call (an approval) defers per turn; anything
            # else is not a pause we can answer with one decision.
            names = [c.tool_name for c in [*output.calls, *output.approvals]]
            return LegResult.errored(f"run ended with unexpected deferred tool requests: {names}")
        call = (questions or approvals)[0]
        kind = _kind(output, call.tool_call_id)  # 'question' or 'approval'
        # Plain JSON text, so the state can cross a process boundary (durable_state).
        state = {"messages": result.all_messages_json().decode(), "call_id": call.tool_call_id, "kind": kind}
        args = call.args_as_dict()
        shown = (output.metadata or {}).get(call.tool_call_id) or {}
        if call.tool_name in bodies and "amount" in shown:  # what the paused body will charge
            args = {**args, "amount": shown["amount"]}
        pending = PendingRequest(tool=call.tool_name, args=args, call_id=call.tool_call_id)
        return LegResult.suspended(pending, state)


# -- the paused state on a server (`--store postgres|redis`) ---------------------------------------------------------

PAUSED_TABLE = "pydantic_ai_paused_runs"  # in the item's own PostgreSQL database
PAUSED_KEY = "pydantic_ai:paused_run:"  # after the item's Redis key prefix
PAUSED_ID = "paused_run"  # the state's key for the row id / key id (the state then holds nothing else of the pause)
_CREATE = (f"CREATE TABLE IF NOT EXISTS {PAUSED_TABLE} (id text PRIMARY KEY, messages json NOT NULL, "
           "state json NOT NULL, created_at timestamptz NOT NULL DEFAULT now())")


async def _kept(result: LegResult, store: Store) -> LegResult:
    """A paused leg's state on the item's server: the message history (pydantic-ai's own JSON, `all_messages_json()`)
    and the rest of the pause (held call ids, their kind, a delegate's metadata) written there; the state handed back
    is the id only. With SQLite (the default) the JSON is the state itself, as it always was."""
    if store.kind == "sqlite" or result.status != "suspended" or not result.state:
        return result
    state = dict(result.state)
    messages = state.pop("messages")
    paused_id = uuid.uuid4().hex
    rest = json.dumps(state)
    if store.kind == "postgres":
        import psycopg

        async with await psycopg.AsyncConnection.connect(store.url, autocommit=True) as conn:
            await conn.execute(_CREATE)
            await conn.execute(f"INSERT INTO {PAUSED_TABLE} (id, messages, state) VALUES (%s, %s, %s)",
                               (paused_id, messages, rest))
    elif store.kind == "redis":
        import redis.asyncio as aioredis

        client = aioredis.Redis.from_url(store.url)
        try:
            await client.hset(f"{store.prefix}{PAUSED_KEY}{paused_id}", mapping={"messages": messages, "state": rest})
        finally:
            await client.aclose()
    else:
        raise ValueError(f"no paused-state store for {store.kind!r}")
    result.state = {PAUSED_ID: paused_id, "store": store.kind}
    return result


async def _load_paused(store: Store, handle: dict[str, Any]) -> dict[str, Any]:
    """The paused state `_kept` wrote, read back from the item's server; what the handle gained since the pause (the
    input `add_input` staged) goes with it."""
    paused_id = handle[PAUSED_ID]
    if store.kind == "postgres":
        import psycopg

        async with await psycopg.AsyncConnection.connect(store.url, autocommit=True) as conn:
            cursor = await conn.execute(f"SELECT messages::text, state::text FROM {PAUSED_TABLE} WHERE id = %s",
                                        (paused_id,))
            row = await cursor.fetchone()
    elif store.kind == "redis":
        import redis.asyncio as aioredis

        client = aioredis.Redis.from_url(store.url)
        try:
            found = await client.hmget(f"{store.prefix}{PAUSED_KEY}{paused_id}", ["messages", "state"])
        finally:
            await client.aclose()
        row = tuple(v.decode() for v in found) if all(v is not None for v in found) else None
    else:
        raise ValueError(f"the paused run {paused_id} is kept in {handle.get('store')!r}, and this leg's store is "
                         f"{store.kind!r}")
    if row is None:
        raise LookupError(f"no paused run {paused_id} in the item's {store.kind} store")
    extra = {k: v for k, v in handle.items() if k not in (PAUSED_ID, "store")}
    return {**json.loads(row[1]), "messages": row[0], **extra}


class _HandedOver:
    """What a handoff's output function returns: the delegate the run was handed to and its run's result (its output
    is the run's output; the adapter keeps whose run it is, to resume that delegate on its own history)."""

    def __init__(self, agent: str, result: Any) -> None:
        self.agent = agent
        self.result = result

    def __str__(self) -> str:
        return str(self.result.output)


def _verdict(decision: Decision | None) -> dict[str, Any] | None:
    """A human's decision on one of a delegate's held calls, as JSON (it travels in `DeferredToolResults.metadata`)."""
    if decision is None:
        return None
    return {"kind": decision.kind.value, "approved": decision.approved, "text": decision.as_text(),
            "args": decision.args if decision.kind is DecisionKind.edit else None}


def _nested_results(state: dict[str, Any], decision: Decision | DecisionSet) -> Any:
    """The desk's `DeferredToolResults` at a pause inside delegates: each desk call of a delegate approved (the glue that
    makes pydantic-ai call the delegating tool again), with the human's verdicts on that delegate's own held calls in
    `metadata[desk call id]`, which the tool reads as `ctx.tool_call_metadata`. A held call the decisions leave out
    gets no verdict (what pydantic-ai then does with the delegate's run is what the arena records)."""
    from pydantic_ai import DeferredToolResults

    approvals: dict[str, Any] = {}
    metadata: dict[str, dict[str, Any]] = {}
    for outer, held in state["delegated"].items():
        verdicts = {}
        for call in held["calls"]:
            mine = decision.for_call(call["call_id"]) if isinstance(decision, DecisionSet) else decision
            if mine is not None:
                verdicts[call["call_id"]] = _verdict(mine)
        approvals[outer] = True
        metadata[outer] = {**held, "decisions": verdicts}
    return DeferredToolResults(approvals=approvals, metadata=metadata)


def _verdicts(held: dict[str, Any]) -> Any:
    """A delegate's own `DeferredToolResults` from the verdicts its delegating call carried: a gated call approved
    (`True`, or `ToolApproved(override_args=...)` for an edit) or `ToolDenied(message=decision text)`; an approval
    tool's question (a deferred call) answered with the decision text."""
    from pydantic_ai import DeferredToolResults, ToolApproved, ToolDenied

    approvals: dict[str, Any] = {}
    calls: dict[str, Any] = {}
    kinds = {c["call_id"]: c.get("kind", "approval") for c in held["calls"]}
    for call_id, v in (held.get("decisions") or {}).items():
        if kinds.get(call_id) == "question":
            calls[call_id] = v["text"] if v is not None else None
        elif v is None or v["kind"] == DecisionKind.null.value:
            approvals[call_id] = None
        elif v["args"] is not None:
            approvals[call_id] = ToolApproved(override_args=v["args"])
        else:
            approvals[call_id] = True if v["approved"] else ToolDenied(message=v["text"])
    return DeferredToolResults(approvals=approvals, calls=calls)


def _is_message(decision: Decision | DecisionSet) -> bool:
    """The human sent a new message instead of a decision (interruptions' `DecisionKind.message`)."""
    return isinstance(decision, Decision) and decision.kind is DecisionKind.message


def _prompt(state: dict[str, Any], decision: Decision | DecisionSet) -> str | None:
    """The new user prompt the resume sends, if any: the input added while paused (`add_input`), then a new
    message sent instead of a decision; None when there is neither."""
    message = decision.text if isinstance(decision, Decision) and _is_message(decision) else None
    texts = [*state.get("inputs", []), *([message] if message else [])]
    return "\n\n".join(texts) if texts else None


def _for_new_prompt(history: list[Any]) -> list[Any]:
    """The paused history as pydantic-ai documents it for a new user prompt: `repair_messages(history)`.

    `Agent.run(prompt, message_history=...)` refuses a history whose last response has unanswered tool calls
    (UserError "Cannot provide a new user prompt when the message history contains unprocessed tool calls. ...
    or call `pydantic_ai.messages.repair_messages()` on the history first to close them out."); repair_messages'
    docstring: "Use this before adding a new user prompt to history whose final response has unanswered tool
    calls, which `Agent.run` refuses". pydantic-ai itself then answers each open call with a synthesized
    ToolReturnPart (outcome='interrupted', "The tool call was interrupted before a result was produced.").
    Before repair_messages existed (`-a pydantic_ai@2.66.0`) the history goes as it is, and the run refuses it."""
    try:
        from pydantic_ai.messages import repair_messages
    except ImportError:
        return history
    return repair_messages(history)


def _kind(output: Any, call_id: str) -> str:
    """'question' or 'approval'. Before 2.68 (`-a pydantic_ai@2.66.0`) requests had no kinds: a held gated
    call was an approval, any other deferred call the external kind the approval tool's question is."""
    if hasattr(output, "kind"):
        return output.kind(call_id)
    return "approval" if any(c.tool_call_id == call_id for c in output.approvals) else "question"
