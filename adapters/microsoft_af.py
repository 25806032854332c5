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

Delegation (`ctx.agents`, the delegation arena; other arenas never take this path). Each delegate is its own
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
ever pauses with a delegate's request, `PendingRequest.agent` is derived from which delegate holds the pending
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

import os
from typing import Any

from arena.http import async_client
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
    ToolKind,
)

REJECTED_RESULT = "Error: Tool call invocation was rejected by user."  # agent_framework/_tools.py, fixed text

_TELEMETRY_ENV = {
    "OTEL_SDK_DISABLED": "true",
    "ENABLE_INSTRUMENTATION": "false",  # ObservabilitySettings, read when agent_framework is imported
    "ENABLE_SENSITIVE_DATA": "false",
    "AGENT_FRAMEWORK_USER_AGENT_DISABLED": "true",  # no agent-framework User-Agent / feature token
    "AGENT_FRAMEWORK_FEATURE_MASK_DISABLED": "true",
}


def _framework() -> Any:
    """Import agent_framework lazily, with its telemetry off before the first import."""
    for key, value in _TELEMETRY_ENV.items():
        os.environ.setdefault(key, value)
    import agent_framework
    from agent_framework.observability import disable_instrumentation

    disable_instrumentation()  # sticky: no spans/metrics/logs from agent_framework in this process
    return agent_framework


# The tool functions' parameter that receives the framework's FunctionInvocationContext (FunctionTool injects it by
# its annotation; it is no tool argument: the model-visible schema is the spec's `input_model`).
INVOCATION_PARAM = "arena_invocation"


async def _call_id_middleware(context: Any, call_next: Any) -> None:
    """A pass-through function middleware. With a function middleware the framework's invocation loop
    (`_tools._auto_invoke_function`) puts the model's `call_id` in the `FunctionInvocationContext.metadata` it hands
    the tool; without one the tool's context carries no id."""
    await call_next()


def _call_id(invocation: Any) -> str | None:
    """The framework's id for the call being executed (the provider's call_id), from the tool's context."""
    metadata = getattr(invocation, "metadata", None) or {}
    value = metadata.get("call_id")
    return value if isinstance(value, str) else None


def _injected(af: Any, func: Any) -> Any:
    """`func` with its INVOCATION_PARAM annotated as the FunctionInvocationContext the framework injects."""
    func.__annotations__[INVOCATION_PARAM] = af.FunctionInvocationContext
    return func


class MicrosoftAFAdapter:
    order = 50  # where it stands in `arena list` and the reports (lower first)
    requires = ("agent-framework-openai",)  # installed besides the framework
    # what a fork server imports before it forks workers (arena/worker/forkserver.py)
    preload = (
        "agent_framework", "agent_framework.observability", "agent_framework.openai", "openai",
        # imported lazily on first use
        "agent_framework._agents", "agent_framework._clients", "agent_framework._sessions", "agent_framework._tools",
        "agent_framework._compaction", "agent_framework._mcp",
        "agent_framework_openai", "agent_framework_openai._chat_completion_client",
        "msgspec", "opentelemetry.propagate", "openai.types.audio", "agent_framework._harness._tool_approval",
    )

    info = AdapterInfo(
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
                name="nested",
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

    def __init__(self) -> None:
        self._client: Any = None
        self._grants: list[str] = []  # decision texts the approval body may return, one per approved request

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.client.close()

    def _agent(self, ctx: LegContext, standing: bool = False) -> Any:
        """The leg's Agent. `standing`: the run has an "always approve" (given now, or a rule in the session's
        `tool_approval` state), so the framework's ToolApprovalMiddleware is on for this leg (see `always`)."""
        af = _framework()
        from agent_framework.openai import OpenAIChatCompletionClient

        if self._client is None:
            from openai import AsyncOpenAI

            # no client retries (the openai client's default is 2), as in every adapter
            client = AsyncOpenAI(base_url=ctx.model.base_url, api_key=ctx.model.api_key, max_retries=0,
                                 http_client=async_client())
            self._client = OpenAIChatCompletionClient(model=ctx.model.name, async_client=client)
        if ctx.agents:  # delegation: the desk, with each delegate as a tool
            return self._desk(af, ctx)
        tools = [self._tool(af, spec, ctx) for spec in ctx.tools.specs]
        # MessageInjectionMiddleware drains what `add_input` queued on the session (a no-op while nothing is);
        # ToolApprovalMiddleware records an "always approve" and answers later matching requests with it. It is
        # outermost, as create_harness_agent places it.
        middleware: list[Any] = [af.ToolApprovalMiddleware()] if standing else []
        middleware += [af.MessageInjectionMiddleware(), af.function_middleware(_call_id_middleware)]
        return af.Agent(client=self._client, instructions=ctx.instructions, name="room_booker", tools=tools,
                        middleware=middleware)

    def _desk(self, af: Any, ctx: LegContext) -> Any:
        """The run's agent of a delegation run: its own tools (none in the delegation arena) and, for each delegate
        called as a tool, the framework's `Agent.as_tool()` of that delegate's own Agent (its instructions and the
        tools it holds). A delegate reached by a handoff gets nothing: the `handoff` channel is unsupported."""
        middleware = [af.function_middleware(_call_id_middleware)]
        tools = [self._tool(af, spec, ctx) for spec in ctx.own_tools(None)]
        for spec in ctx.agents:
            if spec.via != "tool":
                continue
            delegate = af.Agent(client=self._client, instructions=spec.instructions, name=spec.name,
                                description=spec.description,
                                tools=[self._tool(af, t, ctx) for t in ctx.own_tools(spec.name)],
                                middleware=[af.function_middleware(_call_id_middleware)])
            tools.append(delegate.as_tool(name=spec.name, description=spec.description,
                                          stream_callback=_teller(ctx) if ctx.stream else None))
        return af.Agent(client=self._client, instructions=ctx.instructions, name="travel_desk", tools=tools,
                        middleware=middleware)

    def _tool(self, af: Any, spec: Any, ctx: LegContext) -> Any:
        name = spec.name
        if spec.kind is ToolKind.approval:

            async def approval_body(arena_invocation: Any = None, **kwargs: Any) -> str:
                if self._grants:
                    return self._grants.pop(0)
                # Ran without a decision from the harness: let the harness see the execution.
                return await ctx.tools.acall(name, kwargs, call_id=_call_id(arena_invocation))

            return af.FunctionTool(
                name=name,
                description=spec.description,
                func=_injected(af, approval_body),
                input_model=dict(spec.parameters),
                approval_mode="always_require",
            )

        async def call(arena_invocation: Any = None, **kwargs: Any) -> str:
            return await ctx.tools.acall(name, kwargs, call_id=_call_id(arena_invocation))

        # A gated tool (approval_gate's book_room) uses the same tool-level approval: the framework runs
        # its body (one harness call) only after an approval response for that call.
        return af.FunctionTool(
            name=name,
            description=spec.description,
            func=_injected(af, call),
            input_model=dict(spec.parameters),
            approval_mode="always_require" if spec.requires_approval else "never_require",
        )

    async def start(self, ctx: LegContext) -> LegResult:
        agent = self._agent(ctx)
        session = agent.create_session()
        response = await _run(agent, ctx.item.input, session, ctx)
        return self._leg_result(response, session, ctx)

    async def resume(self, state: dict[str, Any], decision: Decision | DecisionSet, ctx: LegContext) -> LegResult:
        af = _framework()
        session = af.AgentSession.from_dict(state["session"])
        agent = self._agent(ctx, standing=_standing(session) or any(
            d.always and d.kind is DecisionKind.approve
            for d in (decision.decisions if isinstance(decision, DecisionSet) else [decision])))
        requests = [af.Content.from_dict(r) for r in state["requests"]]
        if isinstance(decision, Decision) and decision.kind is DecisionKind.message:
            # A new message instead of a decision: a new run on the same session with the user's text, as the
            # framework documents new input on a paused run. No approval response: the held calls are left to it.
            self._grants = []
            response = await _run(agent, decision.text or "", session, ctx)
            return self._leg_result(response, session, ctx)
        if isinstance(decision, DecisionSet):
            # One response per held call, by the model's call id. The response is a bool: an edit (the framework
            # re-binds the approved call to the stored one) and a denial are both a rejection with its fixed text.
            self._grants = []
            answers = []
            # A held call without a decision gets no response; a null decision is a response whose `approved`
            # is None; a decision naming a call that is not held has no request to answer. What the framework
            # does with that is what resume_safety measures.
            for r in requests:
                d = decision.for_call(r.function_call.call_id)
                if d is None:
                    continue
                answers.append(_answer(af, r, d) if d.kind is not DecisionKind.null
                               else r.to_function_approval_response(None))
            response = await _run(agent, af.Message(role="user", contents=answers), session, ctx)
            return self._leg_result(response, session, ctx)
        if state.get("pending") in ctx.gated_tools:
            # A gated tool: only an approval lets the framework run it (a free answer is not one, as in
            # vanilla). The response is a bool: a denial becomes the framework's fixed rejection text.
            approved = decision.approved
            self._grants = []
        else:  # the approval tool: approve and answer both run the adapter-owned body with the text
            approved = decision.kind is not DecisionKind.deny
            self._grants = [decision.as_text() for _ in requests] if approved else []
        if state.get("pending") in ctx.gated_tools and decision.always and approved:
            # "approve always": the framework's standing rule for the tool, recorded by ToolApprovalMiddleware
            answers = [_answer(af, r, decision) if r.function_call.name == state["pending"]
                       else r.to_function_approval_response(approved) for r in requests]
        else:
            answers = [r.to_function_approval_response(approved) for r in requests]
        response = await _run(agent, af.Message(role="user", contents=answers), session, ctx)
        return self._leg_result(response, session, ctx)

    async def add_input(self, state: dict[str, Any], text: str, ctx: LegContext) -> dict[str, Any]:
        """Input while paused, no decision (the `input` channel): queued on the restored session with the
        framework's `enqueue_messages(session, ...)` (agent_framework._sessions: "Enqueue messages for the next model
        call in the given session"), kept in its state by `to_dict()`; the resumed run's MessageInjectionMiddleware
        drains it into its next model call, after the held calls' results."""
        af = _framework()
        session = af.AgentSession.from_dict(state["session"])
        af.enqueue_messages(session, af.Message(role="user", contents=[af.Content.from_text(text)]))
        return {**state, "session": session.to_dict()}

    def _leg_result(self, response: Any, session: Any, ctx: LegContext) -> LegResult:
        self._grants = []
        requests = [c for c in response.user_input_requests if c.type == "function_approval_request"]
        others = [c for c in response.user_input_requests if c.type != "function_approval_request"]
        if others:
            return LegResult.errored(f"the run stopped on user-input requests of type {others[0].type!r}")
        if not requests:
            return LegResult.finished(response.text or "")
        gated = [r for r in requests if r.function_call.name in ctx.gated_tools]
        if len(gated) > 1 and len(gated) == len(requests):  # several gated calls of one turn, held together
            state = {"session": session.to_dict(), "requests": [r.to_dict() for r in requests],
                     "pending": gated[0].function_call.name}
            return LegResult.suspended([PendingRequest(tool=r.function_call.name, call_id=r.function_call.call_id,
                                                       args=r.function_call.parse_arguments() or {},
                                                       agent=_holder(ctx, r.function_call.name)) for r in gated],
                                       state)
        pause_tools = [s.name for s in ctx.tools.specs if s.kind is ToolKind.approval or s.requires_approval]
        first = next((r for r in requests if r.function_call.name in pause_tools), requests[0])
        call = first.function_call
        pending = PendingRequest(tool=call.name, args=call.parse_arguments() or {}, call_id=call.call_id,
                                 agent=_holder(ctx, call.name))
        state = {"session": session.to_dict(), "requests": [r.to_dict() for r in requests], "pending": call.name}
        return LegResult.suspended(pending, state)


def _holder(ctx: LegContext, tool: str) -> str | None:
    """The delegate whose tool a pending call is (a delegation run), derived from the tools each agent holds: the
    framework's approval request names no agent. None: the run's own agent, or no delegation."""
    return next((a.name for a in ctx.agents if tool in a.tools), None)


def _teller(ctx: LegContext) -> Any:
    """`as_tool(stream_callback=)` for a streamed leg: the delegate's own updates, told as they stream."""
    names: dict[str, str] = {}
    told_calls: set[str] = set()

    def tell(update: Any) -> None:
        for content in update.contents:
            _tell(ctx, content, names, told_calls)

    return tell


def _standing(session: Any) -> bool:
    """Whether the session holds an "always approve" rule of ToolApprovalMiddleware (its `tool_approval` state)."""
    state = session.state.get("tool_approval")
    return bool(isinstance(state, dict) and state.get("rules"))


def _answer(af: Any, request: Any, decision: Decision) -> Any:
    """The framework's response to one approval request: an approve marked `always` is
    `create_always_approve_tool_response` (a standing rule for the whole tool, any arguments); anything else the
    plain bool response. The framework has no standing rejection: a deny marked `always` is a plain denial."""
    if decision.always and decision.kind is DecisionKind.approve:
        return af.create_always_approve_tool_response(request, reason=decision.text or None)
    return request.to_function_approval_response(decision.kind is DecisionKind.approve)


async def _run(agent: Any, message: Any, session: Any, ctx: LegContext) -> Any:
    """`agent.run`, or in a streamed leg `agent.run(..., stream=True)` read to its end, handing over what its
    updates tell, then the stream's own final response (`get_final_response()`: the updates assembled by
    `AgentResponse.from_updates`, and the session's history stored, as `agent.run` does)."""
    if not ctx.stream:
        return await agent.run(message, session=session)
    names = await _call_names(session)
    told_calls: set[str] = set()
    stream = agent.run(message, stream=True, session=session)
    async for update in stream:
        for content in update.contents:
            _tell(ctx, content, names, told_calls)
    return await stream.get_final_response()


async def _call_names(session: Any) -> dict[str, str]:
    """call id -> tool of the calls already in the session's history. A function result names its call by id
    only, and a resume's results answer calls of an earlier leg (the held ones, and the siblings the framework
    held with them), as a UI reopening the conversation reads them from its history."""
    af = _framework()
    history = af.InMemoryHistoryProvider()
    messages = await history.get_messages(session.session_id,
                                          state=session.state.get(history.source_id))
    return {c.call_id: c.name for m in messages for c in m.contents if c.type == "function_call" and c.name}


def _tell(ctx: LegContext, content: Any, names: dict[str, str], told_calls: set[str]) -> None:
    """Hand over what one content of a streamed update tells. A function call streams as chunks (the first with
    its call id and name, then argument deltas under the same id), so it is told once per call id; a function
    result names its call by id only."""
    if content.type == "function_call":
        if content.call_id and content.name and content.call_id not in told_calls:
            told_calls.add(content.call_id)
            names[content.call_id] = content.name
            ctx.told("tool_call", content.name, content.call_id)
    elif content.type == "function_result":
        result = content.result if isinstance(content.result, str) else str(content.result)
        ctx.told("tool_result", names.get(content.call_id, ""), content.call_id, result)
    elif content.type == "function_approval_request":
        ctx.told("pause", content.function_call.name, content.function_call.call_id)
