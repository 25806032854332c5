"""delegation: the references pass (vanilla every item that stays in one process, vanilla_durable every item), and
each faulty way of handling a delegate's pause is caught for its own reason: a desk that runs on while the delegate
waits, decisions routed to the wrong delegate's call, a delegate re-run from the start on resume, a pause that does
not say whose call it holds, and a state that cannot leave its process."""

from __future__ import annotations

from arena import catalog, evaluate
from arena.types import AdapterInfo, DecisionSet, LegContext, LegResult
from arena_builtins.adapters.vanilla import Paused as _Paused, VanillaAdapter
from arena_builtins.arenas.delegation.channel import AGENTS, DEEP_NESTED, DESK, SHARED_NAME, AgentSpec
from arena_builtins.arenas.delegation.policy import careful

ARENA = "delegation"


def _run(adapter, items, tmp_path):
    run = evaluate(ARENA, [adapter], items=items, out=tmp_path, timeout=60)[0]
    return {r.item_id: r for r in run.results}


def _check_of(result, name):
    return next(c for c in result.checks if c.name == name)


def _named(name: str) -> AdapterInfo:
    return VanillaAdapter.info.model_copy(update={"name": name})


class DeskRunsOn(VanillaAdapter):
    """While a delegate waits, the desk is told the call is pending and asked once more before the run pauses."""

    info = _named("desk_runs_on")

    async def _delegated(self, messages, entries, ctx: LegContext, agent=None, nested=False) -> LegResult:
        if any("paused" in e for e in entries):
            told = [*messages, *({"role": "tool", "tool_call_id": e["call"]["id"],
                                  "content": e.get("answer") or "PENDING: waiting for the human"} for e in entries)]
            await self._loop(told, ctx, agent, nested)
        return await super()._delegated(messages, entries, ctx, agent, nested)


class RoutesByPosition(VanillaAdapter):
    """Gives the delegates the decisions in the reverse of the order they paused in: each gets the other's."""

    info = _named("routes_by_position")

    async def _resume_delegates(self, state: _Paused, decision, ctx: LegContext) -> LegResult:
        if isinstance(decision, DecisionSet) and len(decision.decisions) == 2:
            first, second = decision.decisions
            decision = DecisionSet(decisions=[first.model_copy(update={"call_id": second.call_id}),
                                              second.model_copy(update={"call_id": first.call_id})])
        return await super()._resume_delegates(state, decision, ctx)


class RerunsDelegate(VanillaAdapter):
    """Resumes a delegate by running it again from its task, then applying the decision at the pause it reaches."""

    info = _named("reruns_delegate")

    async def _resume_delegates(self, state: _Paused, decision, ctx: LegContext) -> LegResult:
        entries = list(state.inner)
        for i, entry in enumerate(entries):
            if "paused" in entry:
                inner = _Paused(**entry["paused"])
                again = await self._loop(inner.messages[:2], ctx, inner.agent, nested=True)
                entries[i] = self._entry(ctx, entry["call"], entry["agent"], again)
        return await super()._resume_delegates(state.__class__(**{**state.__dict__, "inner": entries}), decision, ctx)


class RoutesToTheCoordinator(VanillaAdapter):
    """Two levels deep, gives the decision to the agent the desk called (the coordinator), as that call's answer: the
    booking agent that holds the call is never resumed (openai-agents-python #4414's kind of routing)."""

    info = _named("routes_to_the_coordinator")

    async def _resume_delegates(self, state: _Paused, decision, ctx: LegContext) -> LegResult:
        if state.agent is not None:  # below the desk: as the reference does
            return await super()._resume_delegates(state, decision, ctx)
        entries = [{"call": e["call"], "agent": e["agent"], "answer": decision.as_text()} if "paused" in e else e
                   for e in state.inner]
        return await self._delegated(state.messages, entries, ctx)


class NamesNoAgent(VanillaAdapter):
    """Pauses correctly but reports the pending call without the agent that asked for it."""

    info = _named("names_no_agent")

    async def start(self, ctx: LegContext) -> LegResult:
        result = await super().start(ctx)
        if result.status == "suspended":
            calls = [p.model_copy(update={"agent": None}) for p in result.all_pending]
            return LegResult.suspended(calls, result.state)
        return result


def test_twenty_items_over_tool_handoff_two_delegates_two_levels_durable_and_a_shared_name():
    spec = catalog.load_arena(ARENA)
    assert len(spec.items) >= 12
    assert {i.metadata["via"] for i in spec.items} == {"tool", "handoff"}
    two = [i for i in spec.items if isinstance(i.resume_with[0], list)]
    assert len(two) >= 3 and all({d.match["tool"] for d in i.resume_with[0]} == {"book_flight", "cancel_flight"}
                                 for i in two)
    kinds = {d.kind_name for i in spec.items for e in i.resume_with for d in (e if isinstance(e, list) else [e])}
    assert kinds == {"approve", "deny", "edit"}
    assert {i.metadata["via"] for i in spec.items if i.metadata.get("durable")} == {"tool", "handoff"}
    for item in spec.items:  # the gated tools belong to the delegates, none to the desk
        agents = [AgentSpec.model_validate(a) for a in spec.leg_context(item)[AGENTS]]  # what a leg carries
        assert {a.via for a in agents} == {item.metadata["via"]}
        held = {t for a in agents for t in a.tools}
        assert {"book_flight", "cancel_flight"} <= held and not {t.name for t in spec.tools} - held
    deep = [i for i in spec.items if i.metadata.get("levels") == 2]  # desk -> coordinator -> delegates (#4414)
    assert [i.id for i in deep] == ["del-18", "del-19", "del-20"] and any(i.metadata.get("durable") for i in deep)
    for item in deep:
        agents = {a.name: a for a in (AgentSpec.model_validate(a) for a in spec.leg_context(item)[AGENTS])}
        assert agents["travel_coordinator"].parent is None and not agents["travel_coordinator"].tools
        assert agents["booking_agent"].parent == agents["changes_agent"].parent == "travel_coordinator"
    (shared,) = [i for i in spec.items if i.metadata.get("desk")]  # the desk named after a delegate (#5141)
    assert shared.id == "del-17" and shared.metadata["durable"]
    context = spec.leg_context(shared)
    assert context[DESK] == "booking_agent" in {a["name"] for a in context[AGENTS]}
    assert all(DESK not in spec.leg_context(i) for i in spec.items if i is not shared)


def test_the_desk_reaches_a_delegate_by_whatever_the_framework_offers():
    request = [{"role": "system", "content": "desk"}, {"role": "user", "content": "On booking M7TQ2Z cancel only the "
                                                                                  "return flight ORD-SFO on 2026-11-30."}]
    as_tool = [{"type": "function", "function": {"name": "changes_agent", "parameters": {
        "type": "object", "properties": {"request": {"type": "string"}}, "required": ["request"]}}}]
    (call,) = careful(request, as_tool).tool_calls
    assert (call.name, list(call.args)) == ("changes_agent", ["request"]) and "M7TQ2Z" in call.args["request"]
    adk = [{"type": "function", "function": {"name": "transfer_to_agent", "parameters": {
        "type": "object", "properties": {"agent_name": {"type": "string"}}}}}]
    assert careful(request, adk).tool_calls[0].args == {"agent_name": "changes_agent"}
    named = [{"type": "function", "function": {"name": "transfer_to_changes_agent", "parameters": {}}}]
    assert careful(request, named).tool_calls[0].name == "transfer_to_changes_agent"
    inner = [{"type": "function", "function": {"name": n, "parameters": {}}} for n in ("get_booking", "cancel_flight")]
    assert careful(request, inner).tool_calls[0].name == "get_booking"  # offered cancel_flight: the changes agent


def test_the_references_pass_and_only_the_durable_one_survives_a_new_process(tmp_path):
    spec = catalog.load_arena(ARENA)
    plain = _run("vanilla", None, tmp_path / "plain")
    durable = _run("vanilla_durable", None, tmp_path / "durable")
    assert len(plain) == len(durable) == len(spec.items)
    for item in spec.items:
        assert durable[item.id].status == "passed", (item.id, [c for c in durable[item.id].checks if not c.passed])
        if item.metadata.get("durable"):
            assert "resumed in a new process" in _check_of(durable[item.id], "nested_durable").reason
            failed = [c.name for c in plain[item.id].checks if not c.passed]
            assert failed == ["nested_durable"] and "process that paused" in \
                _check_of(plain[item.id], "nested_durable").reason
        else:
            assert plain[item.id].status == "passed", (item.id, plain[item.id].checks)
    pause = next(e for e in durable["del-10"].trace if e.type == "suspended")
    assert {(p["tool"], p["agent"]) for p in pause.pending} == {("book_flight", "booking_agent"),
                                                                ("cancel_flight", "changes_agent")}


def test_a_desk_that_runs_on_during_the_delegates_pause_is_caught(tmp_path):
    r = _run(DeskRunsOn, ["del-01"], tmp_path)["del-01"]
    check = _check_of(r, "nested_pause_enforced")
    assert not check.passed and check.reason.startswith("the desk ran on after the booking_agent asked")


def test_decisions_routed_to_the_other_delegates_call_are_caught(tmp_path):
    r = _run(RoutesByPosition, ["del-11"], tmp_path)["del-11"]
    check = _check_of(r, "nested_decision_routed")
    # the booking's approval went to the cancellation: the approved booking never ran (and the denied call did)
    assert not check.passed and check.reason.startswith("the booking_agent's book_flight") and \
        check.reason.endswith("was approved but ran 0 time(s)")
    ran = [e.args for e in r.trace if e.type == "tool_call" and e.tool == "cancel_flight"]
    assert ran == [{"pnr": "M7TQ2Z", "flight": "FU101"}]


def test_a_delegate_re_run_from_its_task_on_resume_is_caught(tmp_path):
    r = _run(RerunsDelegate, ["del-03"], tmp_path)["del-03"]
    check = _check_of(r, "inner_rerun_on_resume")
    assert not check.passed and "get_booking" in check.reason
    assert _check_of(r, "nested_decision_routed").passed  # the decision itself still reached its call


def test_a_pause_that_does_not_say_whose_call_it_holds_is_caught(tmp_path):
    r = _run(NamesNoAgent, ["del-06"], tmp_path)["del-06"]
    check = _check_of(r, "nested_decision_routed")
    assert not check.passed and check.reason == "the pause does not say whose call book_flight is (the booking_agent " \
                                                "asked for it)"


def test_an_adapter_without_the_channel_is_not_measured_with_the_reason():
    spec = catalog.load_arena(ARENA)
    info = VanillaAdapter.info.model_copy(update={
        "name": "no_nested", "channels": tuple(c for c in VanillaAdapter.info.channels if c.name != "nested")})
    items, why = spec.items_for(info, spec.items)
    assert {i.metadata["via"] for i in items} == {"handoff"}
    assert why and all("no nested channel" in w for w in why.values())
    declared = info.model_copy(update={"channels": (*info.channels, VanillaAdapter.info.channel("nested").model_copy(
        update={"kind": "unsupported", "mechanism": "no agent can be called as a tool"}))})
    assert all("no agent can be called as a tool" in w for w in spec.items_for(declared, spec.items)[1].values())


def test_an_approval_two_levels_deep_given_to_the_coordinator_is_caught(tmp_path):
    r = _run(RoutesToTheCoordinator, ["del-18"], tmp_path)["del-18"]
    check = _check_of(r, "nested_decision_routed")
    assert not check.passed and check.reason.startswith("the booking_agent's book_flight") and \
        check.reason.endswith("was approved but ran 0 time(s)")
    pause = next(e for e in r.trace if e.type == "suspended")  # the pause itself named the innermost agent
    assert [p["agent"] for p in pause.pending] == ["booking_agent"]


def test_the_reference_two_levels_deep_names_the_innermost_agent_and_resumes_it(tmp_path):
    results = _run("vanilla", ["del-18", "del-19"], tmp_path)
    assert {k: r.status for k, r in results.items()} == {"del-18": "passed", "del-19": "passed"}
    pause = next(e for e in results["del-18"].trace if e.type == "suspended")
    assert [p["agent"] for p in pause.pending] == ["booking_agent"]
    asked = [e.request["tools"] for e in results["del-18"].trace if e.type == "model_call"]
    assert ["travel_coordinator"] in asked and any("booking_agent" in t and "book_flight" not in t for t in asked)


def test_the_two_level_items_need_their_channel():
    spec = catalog.load_arena(ARENA)
    info = VanillaAdapter.info.model_copy(update={
        "name": "one_level", "channels": tuple(c for c in VanillaAdapter.info.channels if c.name != DEEP_NESTED)})
    why = spec.items_for(info, spec.items)[1]
    assert sorted(why) == ["del-18", "del-19", "del-20"] and all("has no deep_nested channel" in w for w in why.values())
    declared = info.model_copy(update={"channels": (*info.channels, VanillaAdapter.info.channel(DEEP_NESTED).model_copy(
        update={"kind": "unsupported", "mechanism": "a tool cannot run an agent"}))})
    assert all("a tool cannot run an agent" in w for w in spec.items_for(declared, spec.items)[1].values())


def test_the_shared_name_item_needs_its_channel():
    """del-17 is measured only where the adapter declares how its framework names the run's agent after a delegate."""
    spec = catalog.load_arena(ARENA)
    info = VanillaAdapter.info.model_copy(update={
        "name": "unnamed", "channels": tuple(c for c in VanillaAdapter.info.channels if c.name != SHARED_NAME)})
    items, why = spec.items_for(info, spec.items)
    assert list(why) == ["del-17"] and "has no shared_name channel" in why["del-17"]
    assert "del-17" in {i.id for i in spec.items_for(VanillaAdapter.info, spec.items)[0]}


def test_a_denial_reaches_the_delegate_and_the_desk_learns_it(tmp_path):
    r = _run("vanilla", ["del-02"], tmp_path)["del-02"]
    assert r.status == "passed"
    finals = [e for e in r.trace if e.type == "final"]
    assert "denied (over the travel budget)" in finals[-1].text
    desk = [e for e in r.trace if e.type == "model_call" and "book_flight" not in (e.request or {}).get("tools", [])]
    assert any("denied" in m.get("text", "") for m in (desk[-1].request or {}).get("new") or [])
