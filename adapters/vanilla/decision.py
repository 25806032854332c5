"""A human's Decision / DecisionSet -> vanilla's resume: each held call run (as asked or as edited) or answered with
its denial, the approval tool's call answered with the decision; a malformed or second resume refused first."""

from __future__ import annotations

import threading
from typing import Any, cast

from arena.for_adapters import Decision, DecisionKind, DecisionSet, LegContext, LegResult, bodypause, kit, parse_args

from .outcome import Paused
from .parts import VanillaParts

# pauses already resumed in this process: the record that makes a resume happen once, whatever copy of
# the paused state comes back
_RESUMED: set[str] = set()
_RESUMED_LOCK = threading.Lock()


def check_decisions(state: Paused, decision: Decision | DecisionSet, gated: set[str]) -> None:
    """Refuse a malformed resume before anything runs: one decision, of a known kind, for every held call."""
    if isinstance(decision, Decision):
        if decision.kind is DecisionKind.null:
            raise ValueError("a null decision approves nothing: resume with approve, edit, deny or answer")
        return
    gated = gated - set(state.always)  # a call an "always" decided is not held
    held = [c["id"] for c in state.turn if c["function"]["name"] in gated] if state.turn else [state.approval_call["id"]]
    if state.inner:  # delegates' calls
        held = [p["call_id"] for e in state.inner if "paused" in e for p in e["pending"]]
    unknown = [d.call_id for d in decision.decisions if d.call_id not in held]
    if unknown:
        raise ValueError(f"a decision names call {unknown[0]!r}, which this pause does not hold")
    missing = [c for c in held if decision.for_call(c) is None]
    if missing:
        raise ValueError(f"{len(missing)} of {len(held)} held call(s) got no decision (first: {missing[0]!r})")
    null = [d.call_id for d in decision.decisions if d.kind is DecisionKind.null]
    if null:
        raise ValueError(f"the decision for call {null[0]!r} is null: resume with approve, edit or deny")


class DecisionResume(VanillaParts):
    """VanillaAdapter's resume of a pause by the decisions on its held calls, and the run's standing "always"."""

    def _admit(self, state: Paused, decision: Decision | DecisionSet, ctx: LegContext) -> None:
        """Refuse a malformed resume, and a second resume of the same pause, before anything runs."""
        check_decisions(state, decision, set(ctx.gated_tools))
        with _RESUMED_LOCK:
            if state.pause_id in _RESUMED:
                raise RuntimeError("this pause was already resumed; a paused run resumes once")
            _RESUMED.add(state.pause_id)

    async def _resume(self, state: Paused, decision: Decision | DecisionSet, ctx: LegContext) -> LegResult:
        self._always = dict(state.always)
        if state.inner:
            return await self._resume_delegates(state, decision, ctx)
        if isinstance(decision, Decision) and decision.kind is DecisionKind.message:
            return await self._interrupted(state, decision, ctx)
        for d in kit.decisions_of(decision):
            self._remember(d, state)
        if isinstance(decision, DecisionSet):
            if state.turn:
                return await self._resume_calls(state, decision, ctx)
            # one held call: its decision (checked above; the cast tells mypy the parameter now holds a Decision)
            decision = cast(Decision, decision.for_call(state.approval_call["id"]))
            assert decision is not None
        messages = state.messages
        paused = state.approval_call
        name = paused["function"]["name"]
        body = next((s for s in ctx.body_pause_tools if s.name == name), None)
        if body is not None and state.prepared is not None:  # paused inside the tool's body: finish it
            result = await bodypause.finish(self._tools(ctx, paused["id"]), body, state.prepared, decision)
            kit.tell_result(ctx, name, result, paused["id"])
        elif name in ctx.gated_tools:  # a gated tool: approval lets it execute (as edited), a denial is its result
            if decision.approved:
                result = await self._run(ctx, paused, decision.args)
            else:
                result = self._answered(ctx, paused, decision.as_text())
        else:  # the approval tool: the decision is its result
            result = self._answered(ctx, paused, decision.as_text())
        messages.append({"role": "tool", "tool_call_id": paused["id"], "content": result})
        for call in state.held:
            if (standing := self._standing(call, ctx.gated_tools)) is not None:
                result = await self._decided(ctx, call, standing)
            elif decision.approved:
                result = await self._run(ctx, call)
            else:
                result = self._answered(ctx, call, "NOT EXECUTED: the approval was denied")
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": result})
        self._noted(state)
        return await self._loop(messages, ctx, state.agent, state.nested)

    def _remember(self, decision: Decision, state: Paused) -> None:
        """An approve or deny marked `always` stands for the later calls of its tool in this run."""
        if not decision.always or decision.kind not in (DecisionKind.approve, DecisionKind.deny):
            return
        calls = state.turn or [state.approval_call]
        call = next((c for c in calls if decision.call_id is None or c["id"] == decision.call_id), calls[0])
        self._always[call["function"]["name"]] = decision.model_dump(mode="json", exclude_none=True)

    def _standing(self, call: dict[str, Any], gated: list[str]) -> Decision | None:
        """The "always" decision that decides this call of a gated tool without asking, if one stands."""
        name = call["function"]["name"]
        return Decision.model_validate(self._always[name]) if name in gated and name in self._always else None

    async def _resume_calls(self, state: Paused, decisions: DecisionSet, ctx: LegContext) -> LegResult:
        """A pause that held several gated calls: each call by its own decision, in the turn's order."""
        gated = set(ctx.gated_tools)
        for call in state.turn:
            name, args = call["function"]["name"], parse_args(call["function"]["arguments"])
            if name not in gated:
                result = await self._run(ctx, call, args)
            else:
                decision = decisions.for_call(call["id"]) or self._standing(call, ctx.gated_tools)
                assert decision is not None  # `check_decisions` refused a set that leaves a held call undecided
                if decision.approved:
                    result = await self._run(ctx, call, decision.args if decision.args is not None else args)
                else:
                    result = self._answered(ctx, call, decision.as_text())
            state.messages.append({"role": "tool", "tool_call_id": call["id"], "content": result})
        self._noted(state)
        return await self._loop(state.messages, ctx, state.agent, state.nested)
