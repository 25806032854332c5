"""Faulty recoveries for crash_recovery's validity tests (issue 50, section 2): each a vanilla_durable whose
recovery goes wrong in one way a framework's can, written against the public adapter face."""

from __future__ import annotations

import json
from typing import Any

from arena.types import Decision, DecisionSet, LegContext, LegResult
from arena_builtins.adapters.vanilla import Paused as _Paused, VanillaAdapter, create
from arena_builtins.adapters.vanilla_durable import VanillaDurableAdapter


class ReasksOnRecovery(VanillaDurableAdapter):
    """Recovers from its journal, but forgets the model's last answer whose calls had not returned: the model is
    asked again from the same transcript (as a framework that re-runs its model step after a crash does), and
    the call it answers again runs under the new id it is given."""

    info = VanillaDurableAdapter.info.model_copy(update={"name": "reasks_on_recovery"})

    async def _recover(self, messages: list[dict[str, Any]], ctx: LegContext) -> LegResult:
        last = messages[-1]
        if last.get("role") == "assistant" and last.get("tool_calls"):
            messages = messages[:-1]
        return await self._loop(messages, ctx)


class ReplaysFromStart(VanillaDurableAdapter):
    """Recovers by running the whole task again from its input: the model is asked for everything again (the
    approval too, which the harness gives again), and the payment it proposes again has a new id."""

    info = VanillaDurableAdapter.info.model_copy(update={"name": "replays_from_start"})

    async def _recover(self, messages: list[dict[str, Any]], ctx: LegContext) -> LegResult:
        return await VanillaAdapter.start(self, ctx)


class ReusesKeyWithOtherArgs(VanillaDurableAdapter):
    """Recovers under the crashed call's own id (its idempotency key), but with other arguments than the ones
    approved (another flight): a payment API refuses the key."""

    info = VanillaDurableAdapter.info.model_copy(update={"name": "reuses_key_with_other_args"})

    async def _recover(self, messages: list[dict[str, Any]], ctx: LegContext) -> LegResult:
        for call in messages[-1].get("tool_calls") or []:
            if call["function"]["name"] == "book_flight":
                args = json.loads(call["function"]["arguments"])
                args["segments"] = [{**s, "flight": "FU501"} for s in args["segments"]]
                call["function"]["arguments"] = json.dumps(args)
        return await super()._recover(messages, ctx)


class ReasksOnResume(VanillaDurableAdapter):
    """durable_state's fault: a resume that regenerates the paused turn by asking the model again from the
    transcript before its answer (as a framework that re-runs its model step on resume), and applies the human's
    decision to the call the model answers again, under its new id."""

    info = VanillaDurableAdapter.info.model_copy(update={"name": "reasks_on_resume"})

    async def _resume(self, state: _Paused, decision: Decision | DecisionSet, ctx: LegContext) -> LegResult:
        if isinstance(decision, Decision) and not state.turn and not state.inner and state.prepared is None \
                and state.messages[-1].get("tool_calls"):
            tools = [{"type": "function", "function": {"name": t.name, "description": t.description,
                                                       "parameters": t.parameters}} for t in ctx.tools.specs]
            message = await create(self._openai(ctx), ctx.model.name, state.messages[:-1], tools)
            calls = [{"id": tc["id"], "type": "function", "function": {"name": tc["function"]["name"],
                                                                       "arguments": tc["function"]["arguments"]}}
                     for tc in message.get("tool_calls") or []]
            again = next((c for c in calls if c["function"]["name"] == state.approval_call["function"]["name"]), None)
            if again is not None:
                state.messages[-1] = {"role": "assistant", "content": message.get("content"), "tool_calls": calls}
                state.approval_call = again
                state.held = [c for c in calls if c is not again]
        return await super()._resume(state, decision, ctx)
