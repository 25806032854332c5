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
  "Long-running approvals"). The adapter keeps `to_string()` in a table `arena_run_states` (id, session_id, state) of
  the item's database through the session's own SQLAlchemy engine, or under the key `<prefix>agents:run_state:<id>`
  through the session's Redis client; each pause is a new row / key (the pause-time state a crash recovery resumes
  again is never overwritten). Connections are opened per leg and closed at its end.
"""

from __future__ import annotations

import uuid
from typing import Any

from arena.http import async_client
from arena.tools.box import parse_args
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

MAX_TURNS = 20
AGENT_NAME = "arena"


class OpenAIAgentsAdapter:
    order = 30  # where it stands in `arena list` and the reports (lower first)
    # what a fork server imports before it forks workers (arena/worker/forkserver.py)
    preload = ("agents", "openai")
    # the openai SDK's models the SDK's chat converter and usage build at a worker's first answer (the SDK defers them),
    # recorded in forked workers: built once in the fork server instead (arena/worker/forkserver.py, complete_models)
    complete = (
        "openai.types.responses.response_function_tool_call.ResponseFunctionToolCall",
        "openai.types.responses.response_output_message.ResponseOutputMessage",
        "openai.types.responses.response_output_text.ResponseOutputText",
        "openai.types.responses.response_usage.InputTokensDetails",
        "openai.types.responses.response_usage.OutputTokensDetails",
    )

    info = AdapterInfo(
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
                name="nested",
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
                name="handoff",
                kind="native",
                mechanism=(
                    "Agent(handoffs=[handoff(delegate)]) (tool transfer_to_<agent>); the delegate's "
                    "FunctionTool(needs_approval=True) call -> RunResult.interruptions (ToolApprovalItem.agent = the "
                    "delegate); RunState.from_string(starting agent, s), approve / reject, Runner.run resumes with "
                    "the delegate as the current agent"
                ),
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
                    "arena_run_states of the same database through that engine, one row per pause; the leg state is "
                    "{session_id, state_id}; resume: RunState.from_string(agent, row), approve / reject, "
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
                    "kept, as the SDK docs say to (human in the loop: long-running approvals), under the key "
                    "<prefix>agents:run_state:<id> through the same client, one key per pause; the leg state is "
                    "{session_id, state_id}; resume: RunState.from_string(agent, value), approve / reject, "
                    "Runner.run(agent, state, session=...)"
                ),
            ),
        ),
    )

    def __init__(self) -> None:
        self._client: Any = None
        self._agent: Any = None
        self._decision: Decision | None = None
        self._pause_names: set[str] = set()
        self._gated: set[str] = set()
        self._ctx: LegContext | None = None  # the current leg's (a delegate's stream is told through it)
        self._nested_names: dict[str, str] = {}  # call id -> tool, for the delegates' streamed tool outputs

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.close()
            self._client = None

    # -- building the agent -------------------------------------------------------------------

    def _build(self, ctx: LegContext) -> Any:
        if self._agent is not None:
            return self._agent
        import agents
        from agents import Agent, FunctionTool, OpenAIChatCompletionsModel, handoff
        from openai import AsyncOpenAI

        agents.set_tracing_disabled(True)
        # The approval tool (human_in_the_loop) or the gated tools (approval_gate): the SDK pauses on these.
        self._pause_names = {s.name for s in ctx.tools.specs if s.kind is ToolKind.approval or s.requires_approval}
        self._gated = set(ctx.gated_tools)
        self._client = AsyncOpenAI(base_url=ctx.model.base_url, api_key=ctx.model.api_key, max_retries=0,
                                   http_client=async_client())
        model = OpenAIChatCompletionsModel(model=ctx.model.name, openai_client=self._client)

        def function_tools(specs: list[ToolSpec]) -> list[Any]:
            return [
                FunctionTool(
                    name=spec.name,
                    description=spec.description,
                    params_json_schema=dict(spec.parameters),
                    on_invoke_tool=self._invoker(spec, ctx),
                    # The spec's schema is passed unchanged, as vanilla sends it.
                    strict_json_schema=False,
                    needs_approval=spec.name in self._pause_names,
                )
                for spec in specs
            ]

        if not ctx.agents:
            self._agent = Agent(name=AGENT_NAME, instructions=ctx.instructions, model=model,
                                tools=function_tools(ctx.tools.specs))
            return self._agent
        # Delegation: each delegate is an Agent of its own holding its tools (its gated ones needs_approval=True).
        # The run's agent reaches a `via: tool` delegate through Agent.as_tool (named after it: its one argument is
        # the SDK's `input`), a `via: handoff` one through handoff() (the SDK's default tool name,
        # `transfer_to_<name>`). In a streamed leg, as_tool(on_stream=...) streams the delegate's own run.
        tools = function_tools(ctx.own_tools(None))
        handoffs = []
        for spec in ctx.agents:
            delegate = Agent(name=spec.name, instructions=spec.instructions, model=model,
                             tools=function_tools(ctx.own_tools(spec.name)))
            if spec.via == "tool":
                tools.append(delegate.as_tool(tool_name=spec.name, tool_description=spec.description,
                                              on_stream=self._nested_stream if ctx.stream else None))
            else:
                handoffs.append(handoff(delegate, tool_description_override=spec.description))
        self._agent = Agent(name=AGENT_NAME, instructions=ctx.instructions, model=model, tools=tools,
                            handoffs=handoffs)
        return self._agent

    async def _nested_stream(self, event: Any) -> None:
        """as_tool(on_stream=...): a delegate's streamed run, told like the run's own stream (`_run`)."""
        if self._ctx is not None:
            self._told(event["event"], self._ctx, self._nested_names)

    def _invoker(self, spec: ToolSpec, ctx: LegContext) -> Any:
        if spec.kind is ToolKind.approval:

            async def approval_body(tool_context: Any, raw_args: str) -> str:
                # Runs only once the SDK has an approval for this call. The decision is the result.
                if self._decision is None or self._decision.kind is DecisionKind.deny:
                    raise RuntimeError(f"{spec.name} was executed by the SDK without an approval")
                return self._decision.as_text()

            return approval_body

        async def harness_tool(tool_context: Any, raw_args: str) -> str:
            # The SDK passes its ToolContext (the first parameter is not annotated RunContextWrapper), whose
            # tool_call_id is the call's id as the model gave it.
            call_id = getattr(tool_context, "tool_call_id", None)
            return await ctx.tools.acall(spec.name, parse_args(raw_args), call_id=call_id)

        return harness_tool

    @staticmethod
    def _run_config() -> Any:
        from agents import RunConfig

        return RunConfig(tracing_disabled=True, trace_include_sensitive_data=False)

    # -- legs ------------------------------------------------------------------------------------

    async def _run(self, agent: Any, run_input: Any, ctx: LegContext, names: dict[str, str] | None = None,
                   session: Any = None) -> Any:
        """`Runner.run`, or in a streamed leg `Runner.run_streamed` with its events read to the end, handing over
        each tool call and tool output they tell (`names`: the held calls' tools, whose outputs a resumed
        stream gives by call id only). `session`: the run's Session on a PostgreSQL / Redis store (`_Kept`), None
        on the default store (no session, as before)."""
        from agents import Runner

        if not ctx.stream:
            return await Runner.run(agent, run_input, run_config=self._run_config(), max_turns=MAX_TURNS,
                                    session=session)
        result = Runner.run_streamed(agent, run_input, run_config=self._run_config(), max_turns=MAX_TURNS,
                                     session=session)
        names = dict(names or {})
        self._nested_names.update(names)
        async for event in result.stream_events():
            self._told(event, ctx, names)
        # the SDK streams no event for an approval ("approvals represent interruptions, not streamed items"): a
        # streamed run tells it on its result once the stream ends, `interruptions`, as its docs' streaming loop reads
        for item in getattr(result, "interruptions", None) or []:
            raw = item.raw_item
            ctx.told("pause", str(getattr(item, "tool_name", None) or _field(raw, "name")),
                     _field(raw, "call_id") or _field(raw, "id"))
        return result

    @staticmethod
    def _told(event: Any, ctx: LegContext, names: dict[str, str]) -> None:
        """Hand over a stream event that tells a tool call or a tool output."""
        if event.type != "run_item_stream_event":
            return
        raw = event.item.raw_item
        call_id = _field(raw, "call_id") or _field(raw, "id")
        if event.name == "tool_called":
            names[str(call_id)] = str(_field(raw, "name"))
            ctx.told("tool_call", names[str(call_id)], call_id)
        elif event.name == "tool_output":
            ctx.told("tool_result", names.get(str(call_id), "?"), call_id, str(getattr(event.item, "output", "")))

    async def start(self, ctx: LegContext) -> LegResult:
        agent = self._build(ctx)
        self._ctx = ctx
        if ctx.store.kind == "sqlite":
            return self._outcome(await self._run(agent, ctx.item.input, ctx), ctx)
        kept = _Kept(ctx.store, uuid.uuid4().hex)  # a new run: a new session
        try:
            return await kept.keep(self._outcome(await self._run(agent, ctx.item.input, ctx, session=kept.session),
                                                 ctx))
        finally:
            await kept.aclose()

    async def add_input(self, state: Any, text: str, ctx: LegContext) -> Any:
        """Input while paused, no decision: staged with RunState.add_input, kept in the serialised state the decision
        then resumes. A refusal (UserError: a state the SDK takes no input on) propagates."""
        from agents import RunState

        if ctx.store.kind == "sqlite":
            run_state = await RunState.from_string(self._build(ctx), state)
            run_state.add_input(text)
            return run_state.to_string()
        kept = _Kept(ctx.store, state["session_id"])
        try:
            run_state = await RunState.from_string(self._build(ctx), await kept.load(state))
            run_state.add_input(text)
            return await kept.save(run_state.to_string())
        finally:
            await kept.aclose()

    async def resume(self, state: Any, decision: Decision | DecisionSet, ctx: LegContext) -> LegResult:
        if ctx.store.kind == "sqlite":
            return await self._resume(state, decision, ctx)
        kept = _Kept(ctx.store, state["session_id"])  # the same session id, a new session object (a new process)
        try:
            return await kept.keep(await self._resume(await kept.load(state), decision, ctx, kept.session))
        finally:
            await kept.aclose()

    async def _resume(self, state: str, decision: Decision | DecisionSet, ctx: LegContext,
                      session: Any = None) -> LegResult:
        from agents import RunState

        agent = self._build(ctx)
        self._ctx = ctx
        run_state = await RunState.from_string(agent, state)
        interruptions = run_state.get_interruptions()
        if not interruptions:
            return LegResult.errored("the restored run state holds no pending approval")
        names = {str(i.call_id): str(i.name) for i in interruptions}
        if isinstance(decision, Decision) and decision.kind is DecisionKind.message:
            # A new message instead of a decision: the SDK's documented way to give a paused run new user input
            # is RunState.add_input (admitted before the next model call). The held calls get no decision here,
            # and an approval tool body that ran anyway would raise (no approval in this leg). A refusal of
            # add_input (UserError) propagates: that is the measured outcome.
            self._decision = None
            run_state.add_input(decision.text)
            return self._outcome(await self._run(agent, run_state, ctx, names, session), ctx)
        if isinstance(decision, DecisionSet):
            # One decision per held call, by call id. The SDK has no way to run a call with other arguments
            # (approve() takes none, and a call's arguments are fingerprinted in the state), so an edit is
            # carried as a rejection whose message is the human's edit: the call does not run as asked.
            # A held call without a decision gets neither approve() nor reject(), and so does a null decision
            # (the SDK's approval calls carry no value to make null); a decision naming a call that is not
            # held has no item to act on. What the SDK then does is what resume_safety measures.
            for item in interruptions:
                d = decision.for_call(item.call_id)
                if d is None or d.kind is DecisionKind.null:
                    continue
                # in get_interruptions() order; `always` is the SDK's sticky decision (see the module docstring)
                if d.kind is DecisionKind.approve:
                    run_state.approve(item, always_approve=bool(d.always))
                else:
                    run_state.reject(item, always_reject=bool(d.always), rejection_message=d.as_text())
            return self._outcome(await self._run(agent, run_state, ctx, names, session), ctx)
        item = self._approval_item(interruptions)
        self._decision = decision
        gated = item.name in self._gated
        # An answer lets the approval tool return it; a gated tool executes only on an approval.
        # `always`: the SDK's sticky decision, which the runner applies to the tool's later calls in this run
        if decision.kind is DecisionKind.deny or (gated and not decision.approved):
            run_state.reject(item, always_reject=bool(decision.always), rejection_message=decision.as_text())
        else:
            run_state.approve(item, always_approve=bool(decision.always))
        return self._outcome(await self._run(agent, run_state, ctx, names, session), ctx)

    def _approval_item(self, interruptions: list[Any]) -> Any:
        """The pending call on a tool declared with needs_approval (the approval tool or a gated tool)."""
        return next((i for i in interruptions if i.name in self._pause_names), interruptions[0])

    def _outcome(self, result: Any, ctx: LegContext) -> LegResult:
        interruptions = list(result.interruptions or [])
        gated = [i for i in interruptions if i.name in self._gated]
        if len(gated) > 1 and len(gated) == len(interruptions):  # several gated calls of one turn, held together
            return LegResult.suspended([_pending(i, ctx) for i in gated], result.to_state().to_string())
        if interruptions:
            # The SDK stopped and holds the pending call; its serialised RunState is the leg state.
            return LegResult.suspended(_pending(self._approval_item(interruptions), ctx), result.to_state().to_string())
        output = result.final_output
        return LegResult.finished(output if isinstance(output, str) else str(output or ""))


STATES_TABLE = "arena_run_states"


class _Kept:
    """One leg's hold on the item's own place on a PostgreSQL / Redis server (`ctx.store`): the run's Session of the
    SDK's own class for that server, and the paused RunState strings the adapter keeps beside it (the SDK documents
    storing `RunState.to_string()` in a database; it has no class for it). Opened per leg, closed at its end: nothing
    of it outlives the leg's process, and the next leg, in a new process, gets only the ids."""

    def __init__(self, store: Store, session_id: str) -> None:
        self.session_id = session_id
        self.kind = store.kind
        self._prefix = store.prefix
        if store.kind == "postgres":
            from sqlalchemy.ext.asyncio import create_async_engine

            from agents.extensions.memory import SQLAlchemySession

            self._engine = create_async_engine(store.sqlalchemy_url("asyncpg"))
            self.session: Any = SQLAlchemySession(session_id, engine=self._engine, create_tables=True)
        elif store.kind == "redis":
            import redis.asyncio as redis

            from agents.extensions.memory import RedisSession

            self._redis = redis.from_url(store.url)
            self.session = RedisSession(session_id, redis_client=self._redis,
                                        key_prefix=f"{store.prefix}agents:session")
        else:
            raise ValueError(f"a {store.kind} store keeps the RunState in the leg state itself")

    @staticmethod
    def _table() -> Any:
        from sqlalchemy import TIMESTAMP, Column, MetaData, String, Table, Text, text

        return Table(STATES_TABLE, MetaData(), Column("id", String, primary_key=True),
                     Column("session_id", String, nullable=False), Column("state", Text, nullable=False),
                     Column("created_at", TIMESTAMP(timezone=False), server_default=text("CURRENT_TIMESTAMP"),
                            nullable=False))

    def _key(self, state_id: str) -> str:
        return f"{self._prefix}agents:run_state:{state_id}"

    async def save(self, state: str) -> dict[str, str]:
        """Keep a paused RunState (a new row / key) and return the leg state: the ids only."""
        state_id = uuid.uuid4().hex
        if self.kind == "postgres":
            table = self._table()
            async with self._engine.begin() as conn:
                await conn.run_sync(table.metadata.create_all)
                await conn.execute(table.insert().values(id=state_id, session_id=self.session_id, state=state))
        else:
            await self._redis.set(self._key(state_id), state)
        return {"session_id": self.session_id, "state_id": state_id}

    async def load(self, handle: dict[str, str]) -> str:
        """The RunState string a leg state names; a missing one raises (nothing to resume)."""
        state_id = handle["state_id"]
        if self.kind == "postgres":
            from sqlalchemy import select

            table = self._table()
            async with self._engine.connect() as conn:
                found = (await conn.execute(select(table.c.state).where(table.c.id == state_id))).scalar_one_or_none()
        else:
            raw = await self._redis.get(self._key(state_id))
            found = raw.decode() if isinstance(raw, bytes) else raw
        if found is None:
            raise LookupError(f"no paused RunState {state_id} in the {self.kind} store")
        return str(found)

    async def keep(self, result: LegResult) -> LegResult:
        """A suspended leg's RunState string moved to the server; the leg state becomes its ids."""
        if result.status == "suspended":
            result.state = await self.save(result.state)
        return result

    async def aclose(self) -> None:
        if self.kind == "postgres":
            await self._engine.dispose()
        else:
            await self.session.close()  # a no-op for an injected client
            await self._redis.aclose()


def _pending(item: Any, ctx: LegContext) -> PendingRequest:
    """A ToolApprovalItem as the pause's request; where the run has delegates, the agent is the SDK's own
    `ToolApprovalItem.agent` (the agent whose tool call it holds, a delegate's in a nested run or after a handoff)."""
    agent = getattr(getattr(item, "agent", None), "name", None) if ctx.agents else None
    return PendingRequest(tool=item.name or "", args=parse_args(item.arguments), call_id=item.call_id, agent=agent)


def _field(raw: Any, key: str) -> Any:
    """A field of a run item's raw item, a model object or a dict."""
    return raw.get(key) if isinstance(raw, dict) else getattr(raw, key, None)
