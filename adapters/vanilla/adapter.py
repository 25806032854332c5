"""VanillaAdapter: the reference adapter's class, its legs and hooks; the loop and each channel live in the
modules its parts come from (outcome, decision, delegation, input, tools)."""

from __future__ import annotations

import copy
from typing import Any

from arena.for_adapters import Adapter, Decision, DecisionSet, LegContext, LegResult, kit

from .decision import DecisionResume
from .delegation import Delegation
from .follow_up import FollowUp
from .info import INFO
from .input import Interruption
from .outcome import AgentLoop, Paused
from .tools import ToolCalls


class VanillaAdapter(FollowUp, AgentLoop, DecisionResume, Delegation, Interruption, ToolCalls, Adapter):
    order = 10  # where it stands in `arena list` and the reports (lower first)
    # what a fork server imports before it forks workers (arena/worker/forkserver.py)
    preload = ("openai",)

    info = INFO

    def __init__(self) -> None:
        self._client: Any = None
        self._always: dict[str, dict[str, Any]] = {}  # the run's standing "always" decisions, by tool (`_remember`)

    def _openai(self, ctx: LegContext) -> Any:
        if self._client is None:
            self._client = kit.openai_client(ctx)
        return self._client

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.close()

    async def start(self, ctx: LegContext) -> LegResult:
        messages = [{"role": "system", "content": ctx.instructions}, {"role": "user", "content": ctx.item.input}]
        return await self._loop(messages, ctx)

    async def add_input(self, state: Paused, text: str, ctx: LegContext) -> Paused:
        """New input while paused (the `input` channel): kept with the state, sent as the user's next turn on resume."""
        state.notes.append(text)
        return state

    async def live_twin(self, state: Paused, ctx: LegContext) -> Paused:
        """A second live state of the paused run (resume_safety's `live_twin` channel): a copy of the paused turn,
        the same pause, which resumes once whichever copy comes back."""
        return copy.deepcopy(state)

    async def resume(self, state: Paused, decision: Decision | DecisionSet, ctx: LegContext) -> LegResult:
        self._admit(state, decision, ctx)
        return await self._resume(state, decision, ctx)
