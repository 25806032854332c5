"""Recovery of a resume whose process died (the `recover` channel): resumed again with the same decision, or
continued with the decision the journal holds (`continue_run`), from the latest journaled transcript."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from arena.for_adapters import Decision, DecisionSet, LegContext, LegResult
from arena_builtins.adapters.vanilla import pause_names

from .store import Journal


def journaled_decision(state: dict[str, Any], ctx: LegContext) -> Decision | DecisionSet:
    """Recovery way `continue`: the decision is the one the journal holds, not given again."""
    decided = (Journal(state["journal"], ctx.store).data.get("decided") or {}).get("decision")
    if decided is None:
        raise RuntimeError("no decision was journaled before the process died: there is nothing to continue")
    data = json.loads(decided)
    return DecisionSet.model_validate(data) if "decisions" in data else Decision.model_validate(data)


class Recovery:
    """VanillaDurableAdapter's recovery from the journal."""

    if TYPE_CHECKING:  # VanillaAdapter's, for mypy only (nothing is defined at runtime)
        async def _loop(self, messages: list[dict[str, Any]], ctx: LegContext, agent: str | None = None,
                        nested: bool = False) -> LegResult: ...

        async def _run(self, ctx: LegContext, call: dict[str, Any], args: dict[str, Any] | None = None) -> str: ...

    async def _recover(self, messages: list[dict[str, Any]], ctx: LegContext) -> LegResult:
        """Go on from the latest journaled transcript: the calls of its last turn that have no result yet are
        answered from the journal, or run again under their ids; then the model is asked as before."""
        last = messages[-1]
        calls = last.get("tool_calls") or [] if last.get("role") == "assistant" else []
        pausing = pause_names(ctx.tools.specs)
        if any(c["function"]["name"] in pausing for c in calls):
            raise RuntimeError("the process died in a turn that was pausing; it cannot be recovered from the journal")
        answered = {m.get("tool_call_id") for m in messages if m.get("role") == "tool"}
        for call in calls:
            if call["id"] not in answered:
                messages.append({"role": "tool", "tool_call_id": call["id"], "content": await self._run(ctx, call)})
        return await self._loop(messages, ctx)
