"""Input at a pause: text added while paused (the `input` channel, kept with the state), and a new message instead
of a decision (the `message` channel: it cancels what the pause held)."""

from __future__ import annotations

from arena.for_adapters import Decision, DecisionKind, LegContext, LegResult, bodypause, kit

from .outcome import Paused
from .parts import VanillaParts

# what a held call's result says when the human sent a new message instead of deciding on it
CANCELLED = "CANCELLED: not run; the user sent a new message instead of a decision"


class Interruption(VanillaParts):
    """VanillaAdapter's handling of what the human says at a pause besides a decision."""

    @staticmethod
    def _noted(state: Paused) -> None:
        """Input added while paused becomes the user's next turn, after the held calls' results."""
        state.messages.extend({"role": "user", "content": note} for note in state.notes)
        state.notes.clear()

    async def _interrupted(self, state: Paused, message: Decision, ctx: LegContext) -> LegResult:
        """A new message instead of a decision: nothing the pause held runs (a body that paused is aborted), each
        held call gets a result saying so, and the message is the user's next turn."""
        body = next((s for s in ctx.body_pause_tools if s.name == state.approval_call["function"]["name"]), None)
        cancelled = Decision(kind=DecisionKind.deny, text="cancelled: the user sent a new message instead")
        for call in state.turn or [state.approval_call, *state.held]:
            if call is state.approval_call and body is not None and state.prepared is not None:
                result = await bodypause.finish(self._tools(ctx, call["id"]), body, state.prepared, cancelled)
                kit.tell_result(ctx, body.name, result, call["id"])
            else:
                result = self._answered(ctx, call, CANCELLED)
            state.messages.append({"role": "tool", "tool_call_id": call["id"], "content": result})
        self._noted(state)
        state.messages.append({"role": "user", "content": message.text})
        return await self._loop(state.messages, ctx, state.agent, state.nested)
