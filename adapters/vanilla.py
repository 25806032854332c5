"""The reference adapter: a plain tool-calling loop over the official `openai` client.

Its pause is emulated: the leg returns, carrying the transcript and the turn's held tool calls back
out as its state, and the next leg carries them back in. Nothing from the turn that asked for
approval executes before the decision; on deny, the held calls are never executed and the model is
told so; the decision reaches the model as the approval tool's result. A call to a gated tool
(approval_gate) pauses the same way: approved, it executes; denied, the decision is its result.
Several gated calls in one turn pause together, and each runs (as asked or as edited) or gets its
denial by its own decision, matched by call id.

It is the reference for resume_safety, so a resume is checked before anything runs: a decision set
that leaves a held call undecided, names a call that is not held, or holds a `null` decision is
refused whole (ValueError, the paused state stays resumable), and each pause is resumed at most once
(a process-wide record of resumed pauses, kept outside the state: a replayed copy of the state, a
concurrent second resume or an older pause's state is refused).
A new message instead of a decision (interruptions) cancels what the pause held: each held call is answered
`CANCELLED` without running, the message becomes the user's next turn, and the pause counts as resumed (a late
approval of it is refused).
Delegates (delegation, `ctx.agents`): the run's agent is offered one tool per delegate called as a tool (named
after it, its task as `input`) and a `transfer_to_<name>` per delegate it hands off to. A delegate called as a tool
runs its own loop, with its own tools, on its own transcript; a pause in it pauses the whole run, holding every
waiting delegate's calls (each named with its agent), and the decisions resume each delegate where it stopped; its
answer is then the tool's result. A handoff replaces the run's instructions with the delegate's and the rest of the
run is its loop, on the same transcript.
Nothing of this survives a process restart, which is what makes it `emulated`.
"""

from __future__ import annotations

import threading
import uuid
from dataclasses import asdict, dataclass, field
from functools import partial
from typing import Any

from arena.http import async_client
from arena.tools import body as bodypause
from arena.tools.box import parse_args
from arena.types import (
    AdapterInfo, AgentSpec, Capabilities, Channel, Decision, DecisionKind, DecisionSet, LegContext, LegResult,
    PendingRequest, ToolKind,
)

MAX_TURNS = 20
# what a held call's result says when the human sent a new message instead of deciding on it
CANCELLED = "CANCELLED: not run; the user sent a new message instead of a decision"


async def create(client: Any, model: str, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> dict[str, Any]:
    """A Chat Completions request through the SDK's own request path (`client.post`: its base URL, headers, auth
    and retries), answered as the JSON the server sent: the answer's message as a dict.

    The typed `chat.completions.create` walks every message and tool on every call to produce the bytes the dicts
    already are, and builds a model of every field of the answer that the loop then turns back into dicts; the
    bytes on the wire are the same (tests/adapters/test_vanilla.py compares them)."""
    body: dict[str, Any] = {"model": model, "messages": messages, "tools": tools}
    answer = await client.post("/chat/completions", body=body, cast_to=object)  # object: the JSON as it came
    message: dict[str, Any] = answer["choices"][0]["message"]
    return message


async def create_streamed(client: Any, model: str, messages: list[dict[str, Any]], tools: list[dict[str, Any]]
                          ) -> tuple[str | None, list[dict[str, Any]]]:
    """The same request streamed (`stream=True`), read to its end: the answer's text and its tool calls, each
    assembled from its deltas by index (the id and name in the first, the arguments split over the rest)."""
    stream = await client.chat.completions.create(model=model, messages=[], tools=[], stream=True,
                                                  stream_options={"include_usage": True},
                                                  extra_body={"messages": messages, "tools": tools})
    text: list[str] = []
    calls: dict[int, dict[str, Any]] = {}
    async for chunk in stream:
        for choice in chunk.choices:
            if choice.delta.content:
                text.append(choice.delta.content)
            for delta in choice.delta.tool_calls or []:
                call = calls.setdefault(delta.index, {"id": None, "type": "function",
                                                      "function": {"name": "", "arguments": ""}})
                call["id"] = delta.id or call["id"]
                if delta.function is not None:
                    call["function"]["name"] += delta.function.name or ""
                    call["function"]["arguments"] += delta.function.arguments or ""
    return ("".join(text) if text or not calls else None), [calls[i] for i in sorted(calls)]


# pauses already resumed in this process: the record that makes a resume happen once, whatever copy of
# the paused state comes back
_RESUMED: set[str] = set()
_RESUMED_LOCK = threading.Lock()


@dataclass
class _Paused:
    messages: list[dict[str, Any]]
    approval_call: dict[str, Any]
    held: list[dict[str, Any]] = field(default_factory=list)
    prepared: dict[str, Any] | None = None  # a body-pausing tool's prepared step, when it paused in its body
    turn: list[dict[str, Any]] = field(default_factory=list)  # every call of the turn, when several are gated
    pause_id: str = field(default_factory=lambda: uuid.uuid4().hex)
    # tool -> the "always" decision that stands for its later calls (JSON, so a journal can keep it)
    always: dict[str, dict[str, Any]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)  # input added while paused: the user's next turn after the results
    agent: str | None = None  # whose loop paused: a delegate's (its name), or the run's own agent's (None)
    nested: bool = False  # that delegate was called as a tool: `messages` is its own transcript, not the run's
    # a pause inside delegates called as tools: the run's turn that called them, one entry per call of it
    # ({"call", "agent", and "answer" once it answered, or "paused" (its _Paused as JSON) and "pending"})
    inner: list[dict[str, Any]] = field(default_factory=list)


class VanillaAdapter:
    order = 10  # where it stands in `arena list` and the reports (lower first)
    # what a fork server imports before it forks workers (arena/worker/forkserver.py)
    preload = ("openai",)

    info = AdapterInfo(
        name="vanilla",
        framework="openai",
        channels=(
            Channel(
                name="ask",
                kind="emulated",
                mechanism="transcript carried across legs (no framework)",
            ),
            Channel(
                name="tool_gate",
                kind="emulated",
                mechanism="calls to gated tools held by the loop; transcript carried across legs",
                carries=Capabilities(
                    deny_reason=True, approve_note=False, free_text=False, edit_args=True,
                    notes="a denial's text is the held call's result; an approved call's result is the tool's own; "
                          "an edited call runs with the human's arguments",
                ),
            ),
            Channel(
                name="body_pause",
                kind="emulated",
                mechanism="the loop runs a body-pausing tool's prepare step, returns suspended with it, and "
                          "on resume runs commit (approved) or abort (denied); nothing runs twice",
            ),
            Channel(
                name="multi_call",
                kind="emulated",
                mechanism="every gated call of the turn held by the loop; each decided by its call id",
            ),
            Channel(
                name="message",
                kind="emulated",
                mechanism="every held call answered 'CANCELLED' (it never runs), then the message appended as the "
                          "user's next turn; the pause counts as resumed, so a late decision on it is refused",
            ),
            Channel(
                name="always",
                kind="emulated",
                mechanism="an approve or deny marked always stands for every later call of that tool in the run; a "
                          "call's own decision at a pause holding several still decides that call",
            ),
            Channel(
                name="input",
                kind="emulated",
                mechanism="add_input keeps the text with the paused state; on resume it is the user's next turn, after "
                          "the held calls' results",
            ),
            Channel(
                name="nested",
                kind="emulated",
                mechanism="a delegate called as a tool runs its own loop on its task; its gated call pauses the whole "
                          "run, the decision resumes that loop, and its answer is the tool's result",
            ),
            Channel(
                name="handoff",
                kind="emulated",
                mechanism="transfer_to_<name>: the delegate's instructions replace the run's and its loop goes on with "
                          "the transcript",
            ),
            Channel(
                name="stream",
                kind="native",
                mechanism="chat.completions.create(stream=True) read to its end, tool calls assembled from their "
                          "deltas; the loop tells each call, each result and the pause",
            ),
            # the paused turn lives in the process's memory: no store holds it (vanilla_durable journals it to one)
            Channel(name="postgres", kind="unsupported",
                    mechanism="vanilla keeps the paused turn in memory; it is kept in no store (vanilla_durable is "
                              "the reference that keeps it in PostgreSQL)"),
            Channel(name="redis", kind="unsupported",
                    mechanism="vanilla keeps the paused turn in memory; it is kept in no store (vanilla_durable is "
                              "the reference that keeps it in Redis)"),
        ),
    )

    def __init__(self) -> None:
        self._client: Any = None
        self._always: dict[str, dict[str, Any]] = {}  # the run's standing "always" decisions, by tool (`_remember`)

    def _openai(self, ctx: LegContext) -> Any:
        if self._client is None:
            from openai import AsyncOpenAI

            self._client = AsyncOpenAI(base_url=ctx.model.base_url, api_key=ctx.model.api_key, max_retries=0,
                                       http_client=async_client())
        return self._client

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.close()

    async def start(self, ctx: LegContext) -> LegResult:
        messages = [{"role": "system", "content": ctx.instructions}, {"role": "user", "content": ctx.item.input}]
        return await self._loop(messages, ctx)

    async def add_input(self, state: _Paused, text: str, ctx: LegContext) -> _Paused:
        """New input while paused (the `input` channel): kept with the state, sent as the user's next turn on resume."""
        state.notes.append(text)
        return state

    async def resume(self, state: _Paused, decision: Decision | DecisionSet, ctx: LegContext) -> LegResult:
        self._admit(state, decision, ctx)
        return await self._resume(state, decision, ctx)

    async def _resume(self, state: _Paused, decision: Decision | DecisionSet, ctx: LegContext) -> LegResult:
        self._always = dict(state.always)
        if state.inner:
            return await self._resume_delegates(state, decision, ctx)
        if isinstance(decision, Decision) and decision.kind is DecisionKind.message:
            return await self._interrupted(state, decision, ctx)
        for d in decision.decisions if isinstance(decision, DecisionSet) else [decision]:
            self._remember(d, state)
        if isinstance(decision, DecisionSet):
            if state.turn:
                return await self._resume_calls(state, decision, ctx)
            decision = decision.for_call(state.approval_call["id"])  # one held call: its decision (checked above)
            assert decision is not None
        messages = state.messages
        paused = state.approval_call
        name = paused["function"]["name"]
        body = next((s for s in ctx.body_pause_tools if s.name == name), None)
        if body is not None and state.prepared is not None:  # paused inside the tool's body: finish it
            result = await bodypause.finish(self._tools(ctx, paused["id"]), body, state.prepared, decision)
            ctx.told("tool_result", name, paused["id"], result)
        elif name in ctx.gated_tools:  # a gated tool: approval lets it execute (as edited), a denial is its result
            if decision.approved:
                result = await self._run(ctx, paused, decision.args)
            else:
                result = self._answered(ctx, paused, decision.as_text())
        else:  # the approval tool: the decision is its result
            result = self._answered(ctx, paused, decision.as_text())
        messages.append({"role": "tool", "tool_call_id": paused["id"], "content": result})
        for call in state.held:
            if (standing := self._standing(call, ctx.gated_tools)) is not None:
                result = await self._decided(ctx, call, standing)
            elif decision.approved:
                result = await self._run(ctx, call)
            else:
                result = self._answered(ctx, call, "NOT EXECUTED: the approval was denied")
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": result})
        self._noted(state)
        return await self._loop(messages, ctx, state.agent, state.nested)

    def _remember(self, decision: Decision, state: _Paused) -> None:
        """An approve or deny marked `always` stands for the later calls of its tool in this run."""
        if not decision.always or decision.kind not in (DecisionKind.approve, DecisionKind.deny):
            return
        calls = state.turn or [state.approval_call]
        call = next((c for c in calls if decision.call_id is None or c["id"] == decision.call_id), calls[0])
        self._always[call["function"]["name"]] = decision.model_dump(mode="json", exclude_none=True)

    def _standing(self, call: dict[str, Any], gated: list[str]) -> Decision | None:
        """The "always" decision that decides this call of a gated tool without asking, if one stands."""
        name = call["function"]["name"]
        return Decision.model_validate(self._always[name]) if name in gated and name in self._always else None

    async def _decided(self, ctx: LegContext, call: dict[str, Any], decision: Decision | None) -> str:
        """Run a call, or answer it with the standing denial that decides it."""
        if decision is not None and not decision.approved:
            return self._answered(ctx, call, decision.as_text())
        return await self._run(ctx, call)

    @staticmethod
    def _noted(state: _Paused) -> None:
        """Input added while paused becomes the user's next turn, after the held calls' results."""
        state.messages.extend({"role": "user", "content": note} for note in state.notes)
        state.notes.clear()

    async def _interrupted(self, state: _Paused, message: Decision, ctx: LegContext) -> LegResult:
        """A new message instead of a decision: nothing the pause held runs (a body that paused is aborted), each
        held call gets a result saying so, and the message is the user's next turn."""
        body = next((s for s in ctx.body_pause_tools if s.name == state.approval_call["function"]["name"]), None)
        cancelled = Decision(kind=DecisionKind.deny, text="cancelled: the user sent a new message instead")
        for call in state.turn or [state.approval_call, *state.held]:
            if call is state.approval_call and body is not None and state.prepared is not None:
                result = await bodypause.finish(self._tools(ctx, call["id"]), body, state.prepared, cancelled)
                ctx.told("tool_result", body.name, call["id"], result)
            else:
                result = self._answered(ctx, call, CANCELLED)
            state.messages.append({"role": "tool", "tool_call_id": call["id"], "content": result})
        self._noted(state)
        state.messages.append({"role": "user", "content": message.text})
        return await self._loop(state.messages, ctx, state.agent, state.nested)

    def _persist(self, messages: list[dict[str, Any]]) -> None:
        """Called with the transcript after every step (a subclass may write it down)."""

    def _tools(self, ctx: LegContext, call_id: str) -> Any:
        """The tools one call of the model runs with (a subclass may hand them the call's id)."""
        return ctx.tools

    async def _run(self, ctx: LegContext, call: dict[str, Any], args: dict[str, Any] | None = None) -> str:
        """Run one call of the model (with `args` when the human edited them); a streamed leg tells its result."""
        name = call["function"]["name"]
        result = str(await self._tools(ctx, call["id"]).acall(
            name, parse_args(call["function"]["arguments"]) if args is None else args))
        ctx.told("tool_result", name, call["id"], result)
        return result

    @staticmethod
    def _answered(ctx: LegContext, call: dict[str, Any], result: str) -> str:
        """A call answered without running (a decision, a denial): a streamed leg tells it as the call's result."""
        ctx.told("tool_result", call["function"]["name"], call["id"], result)
        return result

    def _admit(self, state: _Paused, decision: Decision | DecisionSet, ctx: LegContext) -> None:
        """Refuse a malformed resume, and a second resume of the same pause, before anything runs."""
        _check(state, decision, set(ctx.gated_tools))
        with _RESUMED_LOCK:
            if state.pause_id in _RESUMED:
                raise RuntimeError("this pause was already resumed; a paused run resumes once")
            _RESUMED.add(state.pause_id)

    async def _resume_calls(self, state: _Paused, decisions: DecisionSet, ctx: LegContext) -> LegResult:
        """A pause that held several gated calls: each call by its own decision, in the turn's order."""
        gated = set(ctx.gated_tools)
        for call in state.turn:
            name, args = call["function"]["name"], parse_args(call["function"]["arguments"])
            if name not in gated:
                result = await self._run(ctx, call, args)
            else:
                decision = decisions.for_call(call["id"]) or self._standing(call, ctx.gated_tools)
                assert decision is not None  # `_check` refused a set that leaves a held call undecided
                if decision.approved:
                    result = await self._run(ctx, call, decision.args if decision.args is not None else args)
                else:
                    result = self._answered(ctx, call, decision.as_text())
            state.messages.append({"role": "tool", "tool_call_id": call["id"], "content": result})
        self._noted(state)
        return await self._loop(state.messages, ctx, state.agent, state.nested)

    async def _delegate(self, messages: list[dict[str, Any]], calls: list[dict[str, Any]], ctx: LegContext) -> LegResult:
        """A turn of the run's agent that delegates. A handoff passes the run to that agent: its instructions
        replace the run's, the transcript goes on, and the rest of the run is its loop. Each delegate called as a
        tool runs its own loop on the task it was given, to its answer or to a pause; a pause in any of them is the
        whole run's pause, holding every delegate's pending call."""
        entries: list[dict[str, Any]] = []
        for call in calls:
            target = _delegate(call, ctx)
            if target is not None and target.via == "handoff":
                messages.append({"role": "tool", "tool_call_id": call["id"],
                                 "content": self._answered(ctx, call, f"Transferred to {target.name}")})
                for rest in calls[calls.index(call) + 1:]:
                    messages.append({"role": "tool", "tool_call_id": rest["id"],
                                     "content": self._answered(ctx, rest, "NOT RUN: the run was handed over")})
                messages[0] = {"role": "system", "content": target.instructions}
                return await self._loop(messages, ctx, target.name)
            if target is None:
                entries.append({"call": call, "agent": None, "answer": await self._run(ctx, call)})
                continue
            task = str(parse_args(call["function"]["arguments"]).get("input", ""))
            inner = await self._loop([{"role": "system", "content": target.instructions},
                                      {"role": "user", "content": task}], ctx, target.name, nested=True)
            entries.append(self._entry(ctx, call, target.name, inner))
        return await self._delegated(messages, entries, ctx)

    def _entry(self, ctx: LegContext, call: dict[str, Any], agent: str, result: LegResult) -> dict[str, Any]:
        """How a delegate called as a tool stands: answered (its final text, or its error, is the tool's result), or
        paused (its paused loop, as JSON, and the calls it waits on)."""
        if result.status == "suspended":
            return {"call": call, "agent": agent, "paused": asdict(result.state),
                    "pending": [p.model_dump() for p in result.all_pending]}
        answer = result.final_text or "" if result.status == "finished" else f"ERROR: {result.error}"
        return {"call": call, "agent": agent, "answer": self._answered(ctx, call, answer)}

    async def _delegated(self, messages: list[dict[str, Any]], entries: list[dict[str, Any]],
                         ctx: LegContext) -> LegResult:
        """The run pauses while any delegate waits; once every one answered, their answers are the results of the
        run's turn and its loop goes on."""
        waiting = [e for e in entries if "paused" in e]
        if waiting:
            pending = [PendingRequest.model_validate({**p, "agent": e["agent"]}) for e in waiting for p in e["pending"]]
            return LegResult.suspended(pending, _Paused(messages, waiting[0]["call"], inner=entries,
                                                        always=dict(self._always)))
        messages.extend({"role": "tool", "tool_call_id": e["call"]["id"], "content": e["answer"]} for e in entries)
        return await self._loop(messages, ctx)

    async def _resume_delegates(self, state: _Paused, decision: Decision | DecisionSet, ctx: LegContext) -> LegResult:
        """Each waiting delegate resumes with the decisions for its own calls, where its loop paused."""
        entries = list(state.inner)
        waiting = [i for i, e in enumerate(entries) if "paused" in e]
        if isinstance(decision, Decision) and sum(len(entries[i]["pending"]) for i in waiting) > 1:
            raise ValueError("this pause holds several delegates' calls: resume with a decision for each")
        for i in waiting:
            entry = entries[i]
            inner = _Paused(**entry["paused"])
            if isinstance(decision, DecisionSet):
                ids = {p["call_id"] for p in entry["pending"]}
                own = [d for d in decision.decisions if d.call_id in ids]
                mine: Decision | DecisionSet = own[0] if len(own) == 1 and not inner.turn else DecisionSet(decisions=own)
            else:
                mine = decision
            entries[i] = self._entry(ctx, entry["call"], entry["agent"], await self._resume(inner, mine, ctx))
        return await self._delegated(state.messages, entries, ctx)

    @staticmethod
    def _pause_call(calls: list[dict[str, Any]], pause_names: set[str]) -> dict[str, Any] | None:
        """The call of a turn that must pause the run (whatever its position in the turn), if any."""
        return next((c for c in calls if c["function"]["name"] in pause_names), None)

    async def _loop(self, messages: list[dict[str, Any]], ctx: LegContext, agent: str | None = None,
                    nested: bool = False) -> LegResult:
        """One agent's loop: the run's own (`agent` None) or a delegate's, with the tools it holds; `nested`, a
        delegate called as a tool, on its own transcript (the run's is persisted, not this one)."""
        client = self._openai(ctx)
        specs = ctx.own_tools(agent) if ctx.agents else ctx.tools.specs
        pause_names = {s.name for s in specs if s.kind is ToolKind.approval or s.requires_approval or s.body_pause}
        tools = [
            {"type": "function", "function": {"name": s.name, "description": s.description, "parameters": s.parameters}}
            for s in specs
        ] + (delegate_tools(ctx) if agent is None else [])
        paused = partial(_Paused, agent=agent, nested=nested)

        def suspend(pending: PendingRequest | list[PendingRequest], state: _Paused) -> LegResult:
            """A pause of this agent's loop: a delegate's calls name it."""
            calls = pending if isinstance(pending, list) else [pending]
            return LegResult.suspended([p.model_copy(update={"agent": agent}) for p in calls], state)

        persist = self._persist if not nested else (lambda _: None)
        for _ in range(MAX_TURNS):
            persist(messages)
            if ctx.stream:
                content, calls = await create_streamed(client, ctx.model.name, messages, tools)
                for call in calls:
                    ctx.told("tool_call", call["function"]["name"], call["id"])
            else:
                message = await create(client, ctx.model.name, messages, tools)
                content = message.get("content")
                calls = [{"id": tc["id"],  # in the order the SDK's typed answer gave them: the same bytes sent back
                          "function": {"arguments": tc["function"]["arguments"], "name": tc["function"]["name"]},
                          "type": tc.get("type", "function")}
                         for tc in message.get("tool_calls") or []]
            messages.append({"role": "assistant", "content": content, **({"tool_calls": calls} if calls else {})})
            persist(messages)
            if not calls:
                return LegResult.finished(content or "")
            if agent is None and any(_delegate(c, ctx) is not None for c in calls):
                return await self._delegate(messages, calls, ctx)
            standing = {c["id"]: d for c in calls if (d := self._standing(c, ctx.gated_tools)) is not None}
            undecided = [c for c in calls if c["id"] not in standing]  # an "always" decides the others
            approval = self._pause_call(undecided, pause_names)
            gated = [c for c in undecided if c["function"]["name"] in ctx.gated_tools]
            always = dict(self._always)
            if len(gated) > 1 and approval is not None and approval in gated:  # several calls await the human
                pending = [PendingRequest(tool=c["function"]["name"], args=parse_args(c["function"]["arguments"]),
                                          call_id=c["id"]) for c in gated]
                for c in gated:
                    ctx.told("pause", c["function"]["name"], c["id"])
                return suspend(pending, paused(messages, approval, turn=calls, always=always))
            if approval is not None:
                held = [c for c in calls if c is not approval]
                args = parse_args(approval["function"]["arguments"])
                body = next((s for s in ctx.body_pause_tools if s.name == approval["function"]["name"]), None)
                if body is not None:  # the tool's body runs up to its pause
                    prepared = await bodypause.prepare(self._tools(ctx, approval["id"]), body, args)
                    if bodypause.ready(prepared):
                        pending = bodypause.pending(body, args, prepared, approval["id"])
                        ctx.told("pause", body.name, approval["id"])
                        return suspend(pending, paused(messages, approval, held, prepared, always=always))
                    messages.append({"role": "tool", "tool_call_id": approval["id"],
                                     "content": self._answered(ctx, approval, bodypause.refused(prepared))})
                    calls = held
                else:
                    pending = PendingRequest(tool=approval["function"]["name"], args=args, call_id=approval["id"])
                    ctx.told("pause", pending.tool, approval["id"])
                    return suspend(pending, paused(messages, approval, held, always=always))
            for call in calls:
                result = await self._decided(ctx, call, standing.get(call["id"]))
                messages.append({"role": "tool", "tool_call_id": call["id"], "content": result})
        return LegResult.errored(f"no final answer after {MAX_TURNS} model turns")




def delegate_tools(ctx: LegContext) -> list[dict[str, Any]]:
    """The run's agent's tools for its delegates: one per agent called as a tool (its task as `input`), one
    `transfer_to_<name>` per agent it hands off to."""
    tools = []
    for a in ctx.agents:
        if a.via == "tool":
            params = {"type": "object", "properties": {"input": {"type": "string", "description": "the task"}},
                      "required": ["input"]}
            tools.append({"type": "function", "function": {"name": a.name, "description": a.description,
                                                           "parameters": params}})
        else:
            tools.append({"type": "function", "function": {
                "name": f"transfer_to_{a.name}", "description": f"Hand the conversation to {a.name}: {a.description}",
                "parameters": {"type": "object", "properties": {}}}})
    return tools


def _delegate(call: dict[str, Any], ctx: LegContext) -> AgentSpec | None:
    """The delegate a call of the run's agent reaches (as a tool, or by a handoff), if it is one."""
    name = call["function"]["name"]
    return next((a for a in ctx.agents if name == (a.name if a.via == "tool" else f"transfer_to_{a.name}")), None)


def _check(state: _Paused, decision: Decision | DecisionSet, gated: set[str]) -> None:
    """Refuse a malformed resume before anything runs: one decision, of a known kind, for every held call."""
    if isinstance(decision, Decision):
        if decision.kind is DecisionKind.null:
            raise ValueError("a null decision approves nothing: resume with approve, edit, deny or answer")
        return
    gated = gated - set(state.always)  # a call an "always" decided is not held
    held = [c["id"] for c in state.turn if c["function"]["name"] in gated] if state.turn else [state.approval_call["id"]]
    if state.inner:  # delegates' calls
        held = [p["call_id"] for e in state.inner if "paused" in e for p in e["pending"]]
    unknown = [d.call_id for d in decision.decisions if d.call_id not in held]
    if unknown:
        raise ValueError(f"a decision names call {unknown[0]!r}, which this pause does not hold")
    missing = [c for c in held if decision.for_call(c) is None]
    if missing:
        raise ValueError(f"{len(missing)} of {len(held)} held call(s) got no decision (first: {missing[0]!r})")
    null = [d.call_id for d in decision.decisions if d.kind is DecisionKind.null]
    if null:
        raise ValueError(f"the decision for call {null[0]!r} is null: resume with approve, edit or deny")
