"""vanilla's loop and what a leg of it ends as: a final answer, an error, or a pause (`LegResult.suspended`, its
`PendingRequest`s, and the `Paused` turn it carries out as its state)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from arena.for_adapters import LegContext, LegResult, PendingRequest, bodypause, kit, parse_args
from arena_builtins.arenas.delegation.channel import agents_of, own_tools

from .client import model_turn
from .context import written
from .parts import VanillaParts
from .stream import streamed_turn
from .tools import delegate_of, delegate_tools, function_tools, pause_names

MAX_TURNS = 20


@dataclass
class Paused:
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
    # ({"call", "agent", and "answer" once it answered, or "paused" (its Paused as JSON) and "pending"})
    inner: list[dict[str, Any]] = field(default_factory=list)


class AgentLoop(VanillaParts):
    """VanillaAdapter's loop: the model asked turn after turn, each turn's calls run, until an answer or a pause."""

    def _persist(self, messages: list[dict[str, Any]]) -> None:
        """Called with the transcript after every step (a subclass may write it down)."""

    @staticmethod
    def _pause_call(calls: list[dict[str, Any]], pause_names: set[str]) -> dict[str, Any] | None:
        """The call of a turn that must pause the run (whatever its position in the turn), if any."""
        return next((c for c in calls if c["function"]["name"] in pause_names), None)

    async def _loop(self, messages: list[dict[str, Any]], ctx: LegContext, agent: str | None = None,
                    nested: bool = False) -> LegResult:
        """One agent's loop: the run's own (`agent` None) or a delegate's, with the tools it holds; `nested`, a
        delegate called as a tool, on its own transcript (the run's is persisted, not this one)."""
        client = self._openai(ctx)
        specs = own_tools(ctx, agent) if agents_of(ctx) else ctx.tools.specs
        pausing = pause_names(specs)
        tools = function_tools(specs) + delegate_tools(ctx, agent)  # a delegate's own delegates too (deep_nested)
        paused = partial(Paused, agent=agent, nested=nested)

        def suspend(pending: PendingRequest | list[PendingRequest], state: Paused) -> LegResult:
            """A pause of this agent's loop: a delegate's calls name it."""
            calls = pending if isinstance(pending, list) else [pending]
            return LegResult.suspended([p.model_copy(update={"agent": agent}) for p in calls], state)

        persist = self._persist if not nested else (lambda _: None)
        for _ in range(MAX_TURNS):
            persist(messages)
            turn = streamed_turn if ctx.stream else model_turn
            content, calls = await turn(client, ctx, written(messages, ctx), tools)
            messages.append({"role": "assistant", "content": content, **({"tool_calls": calls} if calls else {})})
            persist(messages)
            if not calls:
                return LegResult.finished(content or "")
            if any(delegate_of(c, ctx, agent) is not None for c in calls):
                return await self._delegate(messages, calls, ctx, agent, nested)
            standing = {c["id"]: d for c in calls if (d := self._standing(c, ctx.gated_tools)) is not None}
            undecided = [c for c in calls if c["id"] not in standing]  # an "always" decides the others
            approval = self._pause_call(undecided, pausing)
            gated = [c for c in undecided if c["function"]["name"] in ctx.gated_tools]
            always = dict(self._always)
            if len(gated) > 1 and approval is not None and approval in gated:  # several calls await the human
                pending: PendingRequest | list[PendingRequest] = [
                    PendingRequest(tool=c["function"]["name"], args=parse_args(c["function"]["arguments"]),
                                   call_id=c["id"]) for c in gated]
                for c in gated:
                    kit.tell_pause(ctx, c["function"]["name"], c["id"])
                return suspend(pending, paused(messages, approval, turn=calls, always=always))
            if approval is not None:
                held = [c for c in calls if c is not approval]
                args = parse_args(approval["function"]["arguments"])
                body = next((s for s in ctx.body_pause_tools if s.name == approval["function"]["name"]), None)
                if body is not None:  # the tool's body runs up to its pause
                    prepared = await bodypause.prepare(self._tools(ctx, approval["id"]), body, args)
                    if bodypause.ready(prepared):
                        pending = bodypause.pending(body, args, prepared, approval["id"])
                        kit.tell_pause(ctx, body.name, approval["id"])
                        return suspend(pending, paused(messages, approval, held, prepared, always=always))
                    messages.append({"role": "tool", "tool_call_id": approval["id"],
                                     "content": self._answered(ctx, approval, bodypause.refused(prepared))})
                    calls = held
                else:
                    pending = PendingRequest(tool=approval["function"]["name"], args=args, call_id=approval["id"])
                    kit.tell_pause(ctx, pending.tool, approval["id"])
                    return suspend(pending, paused(messages, approval, held, always=always))
            for call in calls:
                result = await self._decided(ctx, call, standing.get(call["id"]))
                messages.append({"role": "tool", "tool_call_id": call["id"], "content": result})
        return LegResult.errored(f"no final answer after {MAX_TURNS} model turns")
