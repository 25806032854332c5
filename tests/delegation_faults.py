"""Faulty adapters for delegation's `delegate_reported_outcome`, and a reference adapter given as `module:Class`.

Each fault gets the pause and the decision right (the other checks pass) and loses the delegate's part after the
decision in one way:
- `DelegateNeverAnswers`: after an approval the delegate's model never runs again; the desk is handed the raw
  tool output as the delegate's answer.
- `EmptyDelegateAnswer`: the delegate answers, but what reaches the desk (and so the user) is empty.
- `DeskWritesAfterHandoff`: after an approved handoff the delegate answers, then the desk takes the conversation
  back and writes the final answer itself.

`DurableAsPlugin` is the durable reference under another name, for `-a tests.delegation_faults:DurableAsPlugin`:
importable by a worker process, so the items that need a second process get one.
"""

from __future__ import annotations

from typing import Any

from arena.types import AdapterInfo, Decision, DecisionSet, LegContext, LegResult
from arena_builtins.adapters.vanilla import Paused as _Paused, VanillaAdapter
from arena_builtins.adapters.vanilla_durable import VanillaDurableAdapter


def _named(base: AdapterInfo, name: str) -> AdapterInfo:
    return base.model_copy(update={"name": name})


class DelegateNeverAnswers(VanillaAdapter):
    """An approved delegate's call runs, and its raw result is the delegate's answer: its model is never asked."""

    info = _named(VanillaAdapter.info, "delegate_never_answers")

    async def _resume_delegates(self, state: _Paused, decision: Decision | DecisionSet, ctx: LegContext) -> LegResult:
        if not isinstance(decision, Decision) or not decision.approved:
            return await super()._resume_delegates(state, decision, ctx)
        entries = list(state.inner)
        for i, entry in enumerate(entries):
            if "paused" in entry:
                inner = _Paused(**entry["paused"])
                raw = await self._run(ctx, inner.approval_call, decision.args)
                entries[i] = {"call": entry["call"], "agent": entry["agent"],
                              "answer": self._answered(ctx, entry["call"], raw)}
        return await self._delegated(state.messages, entries, ctx)


class EmptyDelegateAnswer(VanillaAdapter):
    """A delegate that answered is handed to the desk as an empty tool result."""

    info = _named(VanillaAdapter.info, "empty_delegate_answer")

    def _entry(self, ctx: LegContext, call: dict[str, Any], agent: str, result: LegResult) -> dict[str, Any]:
        entry = super()._entry(ctx, call, agent, result)
        if "answer" in entry:
            entry["answer"] = ""
        return entry


class DeskWritesAfterHandoff(VanillaAdapter):
    """After an approved handoff the delegate finishes, then the desk is asked again and its answer ends the run."""

    info = _named(VanillaAdapter.info, "desk_writes_after_handoff")

    async def resume(self, state: _Paused, decision: Decision | DecisionSet, ctx: LegContext) -> LegResult:
        handed = state.agent is not None and not state.nested and not state.inner
        messages = state.messages
        result = await super().resume(state, decision, ctx)
        if handed and result.status == "finished" and isinstance(decision, Decision) and decision.approved:
            messages[0] = {"role": "system", "content": ctx.instructions}  # the desk takes the run back
            return await self._loop(messages, ctx)
        return result


class DurableAsPlugin(VanillaDurableAdapter):
    """The durable reference, given as module:Class (not registered)."""

    info = _named(VanillaDurableAdapter.info, "durable_as_plugin")
