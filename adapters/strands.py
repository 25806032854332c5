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

Delegation (`ctx.agents`, the delegation arena; nothing of it runs elsewhere). Each delegate is a strands Agent of
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

import os
import uuid
from typing import Any

from arena.for_adapters import (
    AdapterInfo,
    AgentSpec,
    Capabilities,
    Channel,
    Decision,
    DecisionKind,
    DecisionSet,
    LegContext,
    LegResult,
    PendingRequest,
    ToolKind,
    ToolSpec,
    async_client,
    bodypause,
)

AGENT_ID = "arena"
SESSIONS = "strands"  # the session store's directory, under the item's work directory
ASK, GATE, BODY = "arena:request_approval", "arena:approve_tool", "arena:body_pause"
TRUSTED = "arena:trusted_tools"  # agent.state key: the gated tools an "always" approval trusts for the session
DESK = "travel_desk"  # the desk's node name in a handoff Swarm
NOTES = "arena:notes"  # agent.state key: input added while the run was paused (add_input), folded into model calls


def _import() -> Any:
    """Import strands with its network switches off (set before the first import)."""
    os.environ.setdefault("AWS_EC2_METADATA_DISABLED", "true")  # never reach the EC2 metadata service
    os.environ.setdefault("OTEL_SDK_DISABLED", "true")  # no OpenTelemetry SDK, whatever else sets it up
    import strands
    import strands.models.openai
    import strands.session.file_session_manager

    return strands


class StrandsAdapter:
    order = 45  # where it stands in `arena list` and the reports (lower first)
    preload = (
        "strands",
        "strands.models.openai",
        "strands.session.file_session_manager",
        "strands.hooks",
        "strands.vended_plugins.context_injector",
        "strands.agent._agent_delegation",  # imported at an agent's first run
        "openai",
    )

    info = AdapterInfo(
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
                name="nested",
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
                name="handoff",
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

    def __init__(self) -> None:
        self._client: Any = None

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.close()
            self._client = None

    # -- construction ----------------------------------------------------------------------------

    def _model(self, ctx: LegContext) -> Any:
        """A strands OpenAIModel on the harness endpoint (one shared AsyncOpenAI client)."""
        _import()
        from openai import AsyncOpenAI
        from strands.models.openai import OpenAIModel

        if self._client is None:
            # No client retries (the openai client's default is 2), as for every adapter.
            self._client = AsyncOpenAI(base_url=ctx.model.base_url, api_key=ctx.model.api_key, max_retries=0,
                                       http_client=async_client())
        return OpenAIModel(client=self._client, model_id=ctx.model.name)

    def _agent(self, ctx: LegContext, session_id: str, storage_dir: str, manager: Any = None) -> Any:
        """A new strands Agent on the item's session: a resume restores messages, agent state and interrupt state
        from it (`manager`: the session manager to use, a new FileSessionManager on the session if None). With
        delegates called as tools (`ctx.agents`, via tool), the agent is the desk, holding each delegate as
        `Agent.as_tool(...)`."""
        strands = _import()
        from strands.session.file_session_manager import FileSessionManager
        from strands.vended_plugins.context_injector import ContextInjector

        if ctx.agents:
            tools = [self._tool(strands, spec, ctx) for spec in ctx.own_tools(None)]
            tools += [self._delegate(ctx, a).as_tool(name=a.name, description=a.description)
                      for a in ctx.agents if a.via == "tool"]
        else:
            tools = [self._tool(strands, spec, ctx) for spec in ctx.tools.specs]
        os.makedirs(storage_dir, exist_ok=True)
        return strands.Agent(
            model=self._model(ctx),  # always: without it strands builds a BedrockModel (boto3, EC2 metadata)
            tools=tools,
            system_prompt=ctx.instructions,
            hooks=[_gate(ctx)],
            # input added while paused (add_input, agent.state[NOTES]) folded into every model call's latest user
            # message; "everyTurn": after a resume that latest message holds the held call's toolResult
            plugins=[ContextInjector(_notes, name="arena:notes", trigger="everyTurn")],
            session_manager=manager or FileSessionManager(session_id=session_id, storage_dir=storage_dir),
            agent_id=AGENT_ID,
            callback_handler=None,  # no printing of the streamed text
        )

    def _delegate(self, ctx: LegContext, spec: AgentSpec, name: str | None = None) -> Any:
        """A delegate (`AgentSpec`) as a strands Agent: its instructions, the tools it holds, the same gate hook
        (its gated calls interrupt in its own BeforeToolCallEvent). No session manager: strands refuses one on an
        `as_tool()` agent that does not preserve its context, and on a Swarm node; the caller (the desk's session,
        the Swarm's) keeps its interrupted turn."""
        strands = _import()
        return strands.Agent(
            model=self._model(ctx),
            tools=[self._tool(strands, s, ctx) for s in ctx.own_tools(spec.name)],
            system_prompt=spec.instructions,
            hooks=[_gate(ctx)],
            name=name or spec.name,
            description=spec.description,
            callback_handler=None,
        )

    def _swarm(self, ctx: LegContext, session_id: str, storage_dir: str) -> Any:
        """The handoff run: a `strands.multiagent.Swarm` of the desk (its entry point) and the delegates it hands
        off to, persisted by a FileSessionManager on the Swarm (strands' multi-agent session: `multi_agent.json`
        holds the Swarm's state and its interrupt state, with the interrupted node's messages and interrupt
        state)."""
        strands = _import()
        from strands.multiagent.swarm import Swarm
        from strands.session.file_session_manager import FileSessionManager

        desk = strands.Agent(model=self._model(ctx), tools=[self._tool(strands, s, ctx) for s in ctx.own_tools(None)],
                             system_prompt=ctx.instructions, hooks=[_gate(ctx)], name=DESK,
                             description="The travel desk", callback_handler=None)
        nodes = [desk, *(self._delegate(ctx, a) for a in ctx.agents if a.via == "handoff")]
        os.makedirs(storage_dir, exist_ok=True)
        return Swarm(nodes, entry_point=desk, id=AGENT_ID,
                            session_manager=FileSessionManager(session_id=session_id, storage_dir=storage_dir))

    def _runner(self, ctx: LegContext, session_id: str, storage_dir: str) -> Any:
        """What a leg invokes: the Swarm when the desk hands off, else the (desk) agent."""
        if any(a.via == "handoff" for a in ctx.agents):
            return self._swarm(ctx, session_id, storage_dir)
        return self._agent(ctx, session_id, storage_dir)

    @staticmethod
    def _tool(strands: Any, spec: ToolSpec, ctx: LegContext) -> Any:
        """A strands tool from the harness's spec: the schema is the spec's, the arguments the model's."""

        def call(tool_context: Any) -> tuple[dict[str, Any], str]:
            use = tool_context.tool_use
            return dict(use.get("input") or {}), use["toolUseId"]

        if spec.kind is ToolKind.approval:

            async def body(tool_context: Any) -> str:
                args, call_id = call(tool_context)
                # stops the run; on resume strands runs this body again and interrupt() returns the response
                response = tool_context.interrupt(ASK, reason={"kind": "ask", "tool": spec.name, "args": args,
                                                               "call_id": call_id})
                return str(response)

        elif spec.body_pause:

            async def body(tool_context: Any) -> str:
                args, call_id = call(tool_context)
                prepared = await bodypause.prepare(ctx.tools, spec, args, call_id=call_id)  # runs on every pass
                if not bodypause.ready(prepared):
                    return bodypause.refused(prepared)
                response = tool_context.interrupt(BODY, reason={"kind": "body", "tool": spec.name, "args": args,
                                                                "call_id": call_id,
                                                                "amount": prepared.get("amount")})
                return await bodypause.finish(ctx.tools, spec, prepared, _decision(response), call_id=call_id)

        else:

            async def body(tool_context: Any) -> str:
                args, call_id = call(tool_context)
                return str(await ctx.tools.acall(spec.name, args, call_id=call_id))

        # The function takes only the context: the arguments are the model's call as strands received it
        # (tool_context.tool_use["input"]), the schema the model sees is the spec's own.
        return strands.tool(name=spec.name, description=spec.description, inputSchema={"json": dict(spec.parameters)},
                            context=True)(body)

    # -- legs ------------------------------------------------------------------------------------

    async def start(self, ctx: LegContext) -> LegResult:
        session_id = f"arena-{uuid.uuid4().hex}"
        storage_dir = os.path.join(ctx.workdir, SESSIONS)
        runner = self._runner(ctx, session_id, storage_dir)
        result = await _invoke(runner, ctx, ctx.item.input)
        return self._outcome(result, session_id, storage_dir)

    async def resume(self, state: dict[str, Any], decision: Decision | DecisionSet, ctx: LegContext) -> LegResult:
        session_id, storage_dir = state["session_id"], state["storage_dir"]
        if isinstance(decision, Decision) and decision.kind is DecisionKind.message:
            return await self._message(state, decision, ctx)
        held: dict[str, dict[str, Any]] = state["interrupts"]  # interrupt id -> {"kind", "call_id"}
        by_call = {v["call_id"]: k for k, v in held.items()}
        first = next(iter(held))
        if isinstance(decision, DecisionSet):
            pairs = [(by_call.get(d.call_id, d.call_id) if d.call_id is not None else first, d)
                     for d in decision.decisions]
        else:
            pairs = [(first, decision)]
        responses = [{"interruptResponse": {"interruptId": iid,
                                            "response": _response(held.get(iid, {}).get("kind"), d)}}
                     for iid, d in pairs]
        runner = self._runner(ctx, session_id, storage_dir)
        result = await _invoke(runner, ctx, responses)
        return self._outcome(result, session_id, storage_dir)

    async def _message(self, state: dict[str, Any], message: Decision, ctx: LegContext) -> LegResult:
        """A new message instead of a decision (interruptions): strands' one way to give an agent new user input,
        the restored session's agent invoked with it as the prompt (`agent.invoke_async(text)`, `stream_async` in a
        streamed leg). Nothing answers the held interrupt first: at a pause strands takes only a list of
        interruptResponse's and raises on anything else (`_InterruptState.resume`, "must resume from interrupt
        with list of interruptResponse's"); that refusal is the leg's error, the session left as it was."""
        session_id, storage_dir = state["session_id"], state["storage_dir"]
        runner = self._runner(ctx, session_id, storage_dir)
        try:
            result = await _invoke(runner, ctx, message.text)
        except Exception as exc:  # strands refused the message: a measured outcome, not the adapter's fault
            return LegResult.errored(f"{type(exc).__name__}: {exc}")
        return self._outcome(result, session_id, storage_dir)

    async def add_input(self, state: dict[str, Any], text: str, ctx: LegContext) -> dict[str, Any]:
        """Input while paused (interruptions' `input` channel), by hand: strands has no way to give a paused agent
        input without answering its interrupts (in interrupt state it takes only interruptResponse blocks,
        `_InterruptState.resume`; the held toolUse ends the persisted conversation, so no message can go after it
        before its result). The note is added to the restored session's `agent.state` (NOTES), written to the
        session with `FileSessionManager.sync_agent`; nothing is invoked and the interrupts stay as they were. The
        agent's `ContextInjector` plugin folds the notes into each later model call's latest user message (after
        the resume, the one with the held call's result), ephemerally: it never enters the conversation history."""
        strands = _import()  # the network switches first, then strands
        FileSessionManager = strands.session.file_session_manager.FileSessionManager
        session_id, storage_dir = state["session_id"], state["storage_dir"]
        manager = FileSessionManager(session_id=session_id, storage_dir=storage_dir)
        agent = self._agent(ctx, session_id, storage_dir, manager)
        agent.state.set(NOTES, [*(agent.state.get(NOTES) or []), text])
        manager.sync_agent(agent)
        return state

    async def continue_run(self, state: dict[str, Any], ctx: LegContext) -> LegResult:
        """crash_recovery's `continue` way: a new Agent on the same session (strands restores the latest messages
        and interrupt state it persisted) invoked with no prompt, `agent()`, the recovery strands' maintainers name
        for a session whose last message is a toolUse (strands-agents/sdk-python#1111); no decision is given."""
        session_id, storage_dir = state["session_id"], state["storage_dir"]
        runner = self._runner(ctx, session_id, storage_dir)
        result = await _invoke(runner, ctx)
        return self._outcome(result, session_id, storage_dir)

    @staticmethod
    def _outcome(result: Any, session_id: str, storage_dir: str) -> LegResult:
        """How the leg ended, from the AgentResult (or, a handoff run, the SwarmResult: status INTERRUPTED with
        its interrupts, or its last node's AgentResult)."""
        swarm = hasattr(result, "node_history")  # a SwarmResult
        if swarm and result.status.value != "interrupted":
            last = result.node_history[-1].node_id if result.node_history else None
            node = result.results.get(last) if last is not None else None
            if result.status.value != "completed" or node is None:
                ended = f"the swarm ended {result.status.value}: {getattr(node, 'result', None)!r}"
                return LegResult.errored(ended[:500])
            result, swarm = node.result, False  # the last node's AgentResult
        if not swarm and result.stop_reason != "interrupt":
            content = (result.message or {}).get("content") or []
            return LegResult.finished("".join(b["text"] for b in content if isinstance(b, dict) and "text" in b))
        interrupts = list(result.interrupts or [])
        mine = [i for i in interrupts if isinstance(i.reason, dict) and i.reason.get("kind") in ("ask", "gate", "body")]
        if not mine or len(mine) != len(interrupts):
            return LegResult.errored(f"the run stopped on interrupts the adapter did not raise: "
                                     f"{[i.name for i in interrupts]}")
        pending = []
        for i in mine:
            args = dict(i.reason["args"])
            if i.reason["kind"] == "body" and i.reason.get("amount") is not None:  # what the paused body will charge
                args["amount"] = i.reason["amount"]
            pending.append(PendingRequest(tool=i.reason["tool"], args=args, call_id=i.reason["call_id"],
                                          agent=i.reason.get("agent")))
        state = {"session_id": session_id, "storage_dir": storage_dir,
                 "interrupts": {i.id: {"kind": i.reason["kind"], "call_id": i.reason["call_id"]} for i in mine}}
        return LegResult.suspended(pending if len(pending) > 1 else pending[0], state)


async def _invoke(agent: Any, ctx: LegContext, *prompt: Any) -> Any:
    """`agent.invoke_async(...)`, or in a streamed leg `agent.stream_async(...)` read to its end, handing over what
    its events tell; the run's AgentResult (the stream's last event, as invoke_async reads it)."""
    if not ctx.stream:
        return await agent.invoke_async(*prompt)
    # a call made in an earlier leg: a resumed stream replays its toolUse without a 'message' event
    names = _tool_names(agent.messages) if hasattr(agent, "messages") else {}
    if ctx.agents:  # a delegate's held call: in the interrupted turn its caller keeps (the desk's, the Swarm's)
        names.update(_held_names(agent._interrupt_state.to_dict()))
    event: dict[str, Any] = {}
    async for event in agent.stream_async(*prompt):
        _tell(event, names, ctx)
    return event["result"]


def _tell(event: dict[str, Any], names: dict[str, str], ctx: LegContext) -> None:
    """Hand over what one event of `stream_async` tells: the model's message (its toolUse blocks), the tools'
    results message (each toolResult, named by its toolUse), an interrupted tool (the pause). A delegate's own
    events come wrapped: an `as_tool()` agent's in its caller's `tool_stream_event` (AgentAsToolStreamEvent), a
    Swarm node's in `multiagent_node_stream`; what they tell is told the same way."""
    inner = event.get("tool_stream_event")
    if isinstance(inner, dict) and isinstance(inner.get("data"), dict):
        _tell(inner["data"], names, ctx)
        return
    if event.get("type") == "multiagent_node_stream" and isinstance(event.get("event"), dict):
        _tell(event["event"], names, ctx)
        return
    interrupted = event.get("tool_interrupt_event")
    if interrupted is not None:
        use = interrupted["tool_use"]
        ctx.told("pause", use["name"], use["toolUseId"])
        return
    message = event.get("message")
    if not isinstance(message, dict):
        return
    names.update(_tool_names([message]))
    for block in message.get("content") or ():
        if "toolUse" in block:
            ctx.told("tool_call", block["toolUse"]["name"], block["toolUse"]["toolUseId"])
        elif "toolResult" in block:
            result = block["toolResult"]
            text = "".join(str(c["text"]) for c in result.get("content") or () if "text" in c)
            ctx.told("tool_result", names.get(result["toolUseId"], "?"), result["toolUseId"], text)


def _tool_names(messages: list[Any]) -> dict[str, str]:
    """toolUseId -> tool name, from the toolUse blocks of `messages`."""
    return {b["toolUse"]["toolUseId"]: b["toolUse"]["name"]
            for m in messages for b in m.get("content") or () if isinstance(b, dict) and "toolUse" in b}


def _held_names(data: Any) -> dict[str, str]:
    """toolUseId -> tool name, from every toolUse block anywhere in `data` (an interrupt state as JSON)."""
    found: dict[str, str] = {}
    if isinstance(data, dict):
        use = data.get("toolUse")
        if isinstance(use, dict) and "toolUseId" in use and "name" in use:
            found[str(use["toolUseId"])] = str(use["name"])
        for value in data.values():
            found.update(_held_names(value))
    elif isinstance(data, list):
        for value in data:
            found.update(_held_names(value))
    return found


def _gate(ctx: LegContext) -> Any:
    """strands' documented approval hook (a HookProvider on BeforeToolCallEvent): interrupt before a gated tool
    runs. With delegates (`ctx.agents`), the interrupt's reason also names the agent whose call it holds,
    `event.agent.name` (the strands Agent the hook event belongs to)."""
    from strands.hooks import BeforeToolCallEvent, HookProvider, HookRegistry

    gated = set(ctx.gated_tools) - {s.name for s in ctx.body_pause_tools}
    named = bool(ctx.agents)

    class Gate(HookProvider):
        """strands' documented approval hook: interrupt before a gated tool runs."""

        def register_hooks(self, registry: HookRegistry, **kwargs: Any) -> None:
            registry.add_callback(BeforeToolCallEvent, self.approve)

        def approve(self, event: Any) -> None:
            use = event.tool_use
            if use["name"] not in gated:
                return
            # (t)rust, strands docs "Interrupts", Session Management: a tool trusted in the session's agent.state
            # runs without an interrupt; checked before interrupting, as there (and in the vended
            # HumanInTheLoop(enable_trust=True), `_requires_approval`)
            trusted = list(event.agent.state.get(TRUSTED) or [])
            if use["name"] in trusted:
                return
            reason = {"kind": "gate", "tool": use["name"], "args": dict(use.get("input") or {}),
                      "call_id": use["toolUseId"]}
            if named:
                reason["agent"] = event.agent.name
            response = event.interrupt(GATE, reason=reason)
            decision = _decision(response)
            if decision.always and decision.kind is DecisionKind.approve:
                # trust: approves this call and records the tool in agent.state (session-persisted); strands
                # has no "reject always", so a deny marked always is this call's denial alone
                event.agent.state.set(TRUSTED, [*trusted, use["name"]])
            if decision.kind is DecisionKind.edit and decision.args is not None:
                event.tool_use = {**use, "input": dict(decision.args)}
            elif not decision.approved:
                event.cancel_tool = decision.as_text()

    return Gate()


def _notes(context: Any) -> str | None:
    """ContextInjector's text: the input added while the run was paused (agent.state), or None (nothing folded)."""
    notes = context.state.get(NOTES) or []
    return "\n".join(str(n) for n in notes) or None


def _response(kind: str | None, decision: Decision) -> Any:
    """The interrupt's response: the decision's text for the approval tool, the decision as JSON for a held
    call; a null decision is None (strands reads None as no response)."""
    if decision.kind is DecisionKind.null:
        return None
    if kind == "ask":
        return decision.as_text()
    return decision.model_dump(mode="json")


def _decision(response: Any) -> Decision:
    """A held call's decision from its interrupt response (the JSON `_response` sent)."""
    if isinstance(response, dict):
        return Decision.model_validate(response)
    return Decision(kind=DecisionKind.deny, text=str(response))
