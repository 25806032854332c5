"""Faulty adapters for issue 53 (the regressions users reported): each is the reference adapter with one fault a
framework shipped, written against the public adapter face. tests/core/test_validity_history.py runs each and asserts
the check that must catch it fails for its own reason."""

from __future__ import annotations

from arena_builtins.adapters.vanilla import Paused, VanillaAdapter
from arena.types import Decision, DecisionSet, LegContext, LegResult


class CutsTheCall(VanillaAdapter):
    """Resumes from a history that lost the model's call: a session limit that keeps the newest messages cuts the
    paused call's assistant message, so its result reaches the model without its call (openai-agents-python #4322).
    The real API refuses that request; so does the gateway."""

    async def resume(self, state: Paused, decision: Decision | DecisionSet, ctx: LegContext) -> LegResult:
        asked = max(i for i, m in enumerate(state.messages) if m.get("role") == "assistant" and m.get("tool_calls"))
        del state.messages[asked]
        return await super().resume(state, decision, ctx)
