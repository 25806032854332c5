"""Delegates (`agents_of(ctx)`): a delegate called as a tool runs its own loop on its task, and a pause in it pauses the
whole run; a handoff (`transfer_to_<name>`) passes the rest of the run to the delegate's loop."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from arena.for_adapters import Decision, DecisionSet, LegContext, LegResult, PendingRequest, parse_args

from .outcome import Paused
from .parts import VanillaParts
from .tools import delegate_of


class Delegation(VanillaParts):
    """VanillaAdapter's turns that delegate, and the resume of delegates that paused."""

    async def _delegate(self, messages: list[dict[str, Any]], calls: list[dict[str, Any]], ctx: LegContext,
                        agent: str | None = None, nested: bool = False) -> LegResult:
        """A turn that delegates, of the run's agent (`agent` None) or of a delegate called as a tool (its own
        delegates: `deep_nested`). A handoff passes the run to that agent: its instructions replace the run's, the
        transcript goes on, and the rest of the run is its loop. Each delegate called as a tool runs its own loop on
        the task it was given, to its answer or to a pause; a pause in any of them, however deep, is the whole run's
        pause, holding every delegate's pending call."""
        entries: list[dict[str, Any]] = []
        for call in calls:
            target = delegate_of(call, ctx, agent)
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
        return await self._delegated(messages, entries, ctx, agent, nested)

    def _entry(self, ctx: LegContext, call: dict[str, Any], agent: str, result: LegResult) -> dict[str, Any]:
        """How a delegate called as a tool stands: answered (its final text, or its error, is the tool's result), or
        paused (its paused loop, as JSON, and the calls it waits on)."""
        if result.status == "suspended":
            return {"call": call, "agent": agent, "paused": asdict(result.state),
                    "pending": [p.model_dump() for p in result.all_pending]}
        answer = result.final_text or "" if result.status == "finished" else f"ERROR: {result.error}"
        return {"call": call, "agent": agent, "answer": self._answered(ctx, call, answer)}

    async def _delegated(self, messages: list[dict[str, Any]], entries: list[dict[str, Any]], ctx: LegContext,
                         agent: str | None = None, nested: bool = False) -> LegResult:
        """The run pauses while any delegate waits; once every one answered, their answers are the results of the
        delegating agent's turn and its loop goes on. A pending call names the agent that asked for it: the
        innermost one, when a delegate's own delegate waits."""
        waiting = [e for e in entries if "paused" in e]
        if waiting:
            pending = [PendingRequest.model_validate({**p, "agent": p.get("agent") or e["agent"]})
                       for e in waiting for p in e["pending"]]
            return LegResult.suspended(pending, Paused(messages, waiting[0]["call"], inner=entries,
                                                       always=dict(self._always), agent=agent, nested=nested))
        messages.extend({"role": "tool", "tool_call_id": e["call"]["id"], "content": e["answer"]} for e in entries)
        return await self._loop(messages, ctx, agent, nested)

    async def _resume_delegates(self, state: Paused, decision: Decision | DecisionSet, ctx: LegContext) -> LegResult:
        """Each waiting delegate resumes with the decisions for its own calls, where its loop paused."""
        entries = list(state.inner)
        waiting = [i for i, e in enumerate(entries) if "paused" in e]
        if isinstance(decision, Decision) and sum(len(entries[i]["pending"]) for i in waiting) > 1:
            raise ValueError("this pause holds several delegates' calls: resume with a decision for each")
        for i in waiting:
            entry = entries[i]
            inner = Paused(**entry["paused"])
            if isinstance(decision, DecisionSet):
                ids = {p["call_id"] for p in entry["pending"]}
                own = [d for d in decision.decisions if d.call_id in ids]
                mine: Decision | DecisionSet = own[0] if len(own) == 1 and not inner.turn else DecisionSet(decisions=own)
            else:
                mine = decision
            entries[i] = self._entry(ctx, entry["call"], entry["agent"], await self._resume(inner, mine, ctx))
        return await self._delegated(state.messages, entries, ctx, state.agent, state.nested)
