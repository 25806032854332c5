"""VanillaDurableAdapter: vanilla's loop with the run journaled (`store`), its tools run under the model's call ids
(`tools`), a resume admitted by the journal, recovery from it (`recover`), and the conversation after the run read
from it (`follow_up`)."""

from __future__ import annotations

import copy
import os
from dataclasses import asdict
from typing import Any

from arena.for_adapters import Decision, DecisionSet, LegContext, LegResult
from arena.for_adapters import process_alive as alive
from arena.for_adapters import process_start_time as start_time
from arena_builtins.adapters.vanilla import Paused, VanillaAdapter, check_decisions

from .follow_up import JournaledFollowUp
from .info import INFO
from .recover import Recovery, journaled_decision
from .store import Journal
from .tools import JournaledTools


def _decision_json(decision: Decision | DecisionSet) -> str:
    return decision.model_dump_json()


class VanillaDurableAdapter(JournaledFollowUp, Recovery, VanillaAdapter):
    order = 11

    info = INFO

    def __init__(self) -> None:
        super().__init__()
        self._journal: Journal | None = None

    def _tools(self, ctx: LegContext, call_id: str) -> Any:
        assert self._journal is not None
        return JournaledTools(ctx.tools, call_id, self._journal)

    async def start(self, ctx: LegContext) -> LegResult:
        self._journal = Journal.new(ctx)
        self._journal.save()
        return self._ended(await super().start(ctx))

    def _ended(self, result: LegResult) -> LegResult:
        """Journal how the leg ended; a pause's state is the journal's path and the pause's id (JSON)."""
        journal = self._journal
        assert journal is not None
        if journal.data.get("decided"):
            journal.data["decided"]["ended"] = True
        if result.status == "suspended" and isinstance(result.state, Paused):
            journal.data["pause"] = asdict(result.state)
            journal.data["decided"] = None
            result.state = {"journal": journal.where, "pause_id": result.state.pause_id}
        journal.save()
        return result

    def _admit(self, state: Paused, decision: Decision | DecisionSet, ctx: LegContext) -> None:
        check_decisions(state, decision, set(ctx.gated_tools))  # who may resume is the journal's (see `resume`)

    async def resume(self, state: dict[str, Any], decision: Decision | DecisionSet, ctx: LegContext) -> LegResult:
        path = state["journal"]
        with Journal.locked(path, ctx.store):
            journal = Journal(path, ctx.store)
            pause = journal.data.get("pause") or {}
            if pause.get("pause_id") != state["pause_id"]:
                raise RuntimeError("this is an older pause's state: the run has moved on since")
            decided = journal.data.get("decided")
            if decided:
                if decided["ended"]:
                    raise RuntimeError("this pause was already resumed; a paused run resumes once")
                pid, started = decided["owner"]
                if alive(pid) and start_time(pid) == started:  # this process too: a second resume during the first
                    raise RuntimeError(f"this pause is being resumed by process {pid}")
                if decided["decision"] != _decision_json(decision):
                    raise RuntimeError("this pause was resumed with another decision before its process died")
            paused = Paused(**copy.deepcopy(pause))  # the journal keeps the pause as it was
            check_decisions(paused, decision, set(ctx.gated_tools))
            journal.data["decided"] = {"decision": _decision_json(decision), "ended": False,
                                       "owner": [os.getpid(), start_time(os.getpid())]}
            journal.save()
        self._journal = journal
        messages = journal.data.get("messages") or []
        if not decided or len(messages) <= len(paused.messages):  # from the pause (a recovery of its own turn too)
            return self._ended(await super().resume(paused, decision, ctx))
        return self._ended(await self._recover(messages, ctx))

    async def add_input(self, state: dict[str, Any], text: str, ctx: LegContext) -> dict[str, Any]:
        """New input while paused: journaled with the paused turn, so a resume in any process sends it."""
        with Journal.locked(state["journal"], ctx.store):
            journal = Journal(state["journal"], ctx.store)
            pause = journal.data.get("pause") or {}
            if pause.get("pause_id") != state["pause_id"] or journal.data.get("decided"):
                raise RuntimeError("this pause is no longer waiting: input cannot be added to it")
            pause.setdefault("notes", []).append(text)
            journal.save()
        return state

    async def continue_run(self, state: dict[str, Any], ctx: LegContext) -> LegResult:
        """Recovery way `continue`: the decision is the one the journal holds, not given again."""
        return await self.resume(state, journaled_decision(state, ctx), ctx)

    def _persist(self, messages: list[dict[str, Any]]) -> None:
        if self._journal is not None:
            self._journal.data["messages"] = messages
            self._journal.save()
