"""The strands adapter: each leg builds the Agent (or the handoff Swarm) on the item's FileSessionManager session
and invokes it, with the prompt, the interruptResponse's of a decision, or nothing (`continue`)."""

from __future__ import annotations

import os
import uuid
from typing import Any

from arena.for_adapters import Adapter, Decision, DecisionKind, DecisionSet, LegContext, LegResult, kit
from arena_builtins.arenas.delegation.channel import agents_of

from .client import import_strands, openai_model
from .decision import responses
from .delegation import swarm
from .info import INFO
from .input import add_note, new_message
from .outcome import outcome
from .store import AGENT_ID, SESSIONS, session_agent, session_manager
from .stream import invoke


class StrandsAdapter(Adapter):
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

    info = INFO

    def __init__(self) -> None:
        self._client: Any = None

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.close()
            self._client = None

    # -- construction ----------------------------------------------------------------------------

    def _model(self, ctx: LegContext) -> Any:
        """A strands OpenAIModel on the harness endpoint (one shared AsyncOpenAI client)."""
        import_strands()
        if self._client is None:
            self._client = kit.openai_client(ctx)
        return openai_model(self._client, ctx)

    def _agent(self, ctx: LegContext, session_id: str, storage_dir: str, manager: Any = None) -> Any:
        """A new strands Agent on the item's session (the desk, with delegates called as tools)."""
        return session_agent(ctx, session_id, storage_dir, self._model, manager)

    def _runner(self, ctx: LegContext, session_id: str, storage_dir: str) -> Any:
        """What a leg invokes: the Swarm when the desk hands off, else the (desk) agent."""
        if any(a.via == "handoff" for a in agents_of(ctx)):
            return swarm(ctx, session_id, storage_dir, self._model, AGENT_ID)
        return self._agent(ctx, session_id, storage_dir)

    # -- legs ------------------------------------------------------------------------------------

    async def start(self, ctx: LegContext) -> LegResult:
        session_id = f"arena-{uuid.uuid4().hex}"
        storage_dir = os.path.join(ctx.workdir, SESSIONS)
        runner = self._runner(ctx, session_id, storage_dir)
        result = await invoke(runner, ctx, ctx.item.input)
        return outcome(result, session_id, storage_dir)

    async def resume(self, state: dict[str, Any], decision: Decision | DecisionSet, ctx: LegContext) -> LegResult:
        session_id, storage_dir = state["session_id"], state["storage_dir"]
        if isinstance(decision, Decision) and decision.kind is DecisionKind.message:
            return await new_message(self._runner(ctx, session_id, storage_dir), state, decision, ctx)
        answers = responses(state, decision)
        runner = self._runner(ctx, session_id, storage_dir)
        result = await invoke(runner, ctx, answers)
        return outcome(result, session_id, storage_dir)

    async def add_input(self, state: dict[str, Any], text: str, ctx: LegContext) -> dict[str, Any]:
        """Input while paused (interruptions' `input` channel), by hand: strands has no way to give a paused agent
        input without answering its interrupts (in interrupt state it takes only interruptResponse blocks,
        `_InterruptState.resume`; the held toolUse ends the persisted conversation, so no message can go after it
        before its result). The note is added to the restored session's `agent.state` (NOTES), written to the
        session with `FileSessionManager.sync_agent`; nothing is invoked and the interrupts stay as they were. The
        agent's `ContextInjector` plugin folds the notes into each later model call's latest user message (after
        the resume, the one with the held call's result), ephemerally: it never enters the conversation history."""
        import_strands()  # the network switches first, then strands
        session_id, storage_dir = state["session_id"], state["storage_dir"]
        manager = session_manager(session_id, storage_dir)
        add_note(self._agent(ctx, session_id, storage_dir, manager), manager, text)
        return state

    async def continue_run(self, state: dict[str, Any], ctx: LegContext) -> LegResult:
        """crash_recovery's `continue` way: a new Agent on the same session (strands restores the latest messages
        and interrupt state it persisted) invoked with no prompt, `agent()`, the recovery strands' maintainers name
        for a session whose last message is a toolUse (strands-agents/sdk-python#1111); no decision is given."""
        session_id, storage_dir = state["session_id"], state["storage_dir"]
        runner = self._runner(ctx, session_id, storage_dir)
        result = await invoke(runner, ctx)
        return outcome(result, session_id, storage_dir)
