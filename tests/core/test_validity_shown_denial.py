"""Issue 50, section 7: a payment's pause shows what will be paid; a denial carries the human's words; every resume
continues the item's own run. Each faulty adapter (tests/shown_denial_faults.py) fails its check for its own
reason; the reference adapters pass the same items."""

from __future__ import annotations

import pytest

from arena import catalog
from arena.checks import UNIVERSAL, Scoring, continued_own_run, decision_reached_model, shown_as_asked
from arena.observed import denial_in
from arena.runner import run_items
from arena.types import Capabilities, Decision, DecisionKind, TraceEvent
from tests.shown_denial_faults import DEFERRAL, DefersDenial, ResumesAnotherItemsDenial, ShowsArgsNotAmount


def _run(server, adapter, arena: str, items: tuple[str, ...], profile: str | None = None):
    spec = catalog.load_arena(arena)
    chosen = [i for i in spec.items if i.id in items]
    assert [i.id for i in chosen] == list(items)
    return {r.item_id: r for r in run_items(adapter, spec, chosen, server=server, model=profile or spec.profiles[0],
                                            timeout_s=60, concurrency=1)}


def _failed(result, check: str) -> str:
    found = next(c for c in result.checks if c.name == check)
    assert not found.passed, (result.item_id, [(c.name, c.passed, c.reason) for c in result.checks])
    assert result.status == "failed"
    return found.reason


# -- (a) a pause before a payment shows what will be paid --------------------------------------------------------


def test_a_body_pause_without_its_amount_fails_on_a_paying_item(server):
    """fb-10 pays $178 through purchase_hold's body pause and is no price-change item (no stale_approval_refused)."""
    spec = catalog.load_arena("flight_booking")
    item = next(i for i in spec.items if i.id == "fb-10")
    assert "stale_approval_refused" not in item.checks and "amount_shown" in item.checks
    results = _run(server, ShowsArgsNotAmount, "flight_booking", ("fb-10", "fb-11"))
    for item_id, amount in (("fb-10", 178), ("fb-11", 198)):  # fb-11: the payment is denied; the pause still shows it
        reason = _failed(results[item_id], "shown_as_asked")
        assert f'at pause 2 the human was shown purchase_hold{{"hold": "H1"}} without the amount its prepare step ' \
               f"computed ({amount})" in reason, reason
    reason = _failed(results["fb-10"], "amount_shown")
    assert reason == '$178 was captured on an approval of purchase_hold{"hold": "H1"}, which showed no amount', reason


# -- (b) a denial carries the human's words ----------------------------------------------------------------------


def test_a_bare_denial_reworded_as_a_deferral_fails(server):
    """fb-11's payment is denied without a reason; rs-bare-deny denies a gated call three times without one."""
    for arena, item_id in (("flight_booking", "fb-11"), ("resume_safety", "rs-bare-deny")):
        result = _run(server, DefersDenial, arena, (item_id,))[item_id]
        reason = _failed(result, "decision_reached_model")
        assert "the denial never reached the model's input after resume" in reason, reason
        assert f"it was told {DEFERRAL!r}, which puts the decision off, not the human's words 'DENIED'" in reason


def _denial_trace(told: str) -> list[TraceEvent]:
    return [
        TraceEvent(seq=0, leg=0, type="model_call", request={"new": [{"role": "user", "text": "book it"}]},
                   response={"status": 200, "tool_calls": [{"id": "c1", "name": "request_approval", "args": {}}]}),
        TraceEvent(seq=1, leg=0, type="suspended", tool="request_approval", args={}),
        TraceEvent(seq=2, leg=1, type="resumed", decision=Decision(kind=DecisionKind.deny)),
        TraceEvent(seq=3, leg=1, type="model_call",
                   request={"new": [{"role": "tool", "tool_call_id": "c1", "text": told}]},
                   response={"status": 200, "text": "It was denied."}),
        TraceEvent(seq=4, leg=1, type="final", text="It was denied."),
    ]


@pytest.mark.parametrize(("told", "declared", "passes", "reason"), [
    ("DENIED", True, True, "every decision reached the model's input"),
    ("The user denied this tool call.", True, True, "every decision reached the model's input"),
    (DEFERRAL, True, False, "which puts the decision off"),
    (DEFERRAL, False, False, "which puts the decision off"),
    ("Error: Tool call invocation was rejected by user.", True, False,
     "only as 'Error: Tool call invocation was rejected by user.', without the human's words 'DENIED'"),
    ("Error: Tool call invocation was rejected by user.", False, True,
     "a denial carried in the framework's own words, as declared (deny_reason=false)"),
])
def test_a_bare_denial_is_judged_by_the_words_that_reached_the_model(told, declared, passes, reason):
    """A crafted trace: the human's "DENIED" passes; a framework's fixed rejection text stands in for it only where
    the adapter declares that its channel cannot carry a denial's words; a deferral never counts."""
    spec = catalog.load_arena("human_in_the_loop")
    item = spec.items[1].model_copy(update={"resume_with": [Decision(kind=DecisionKind.deny)]})
    result = decision_reached_model(Scoring(item=item, trace=_denial_trace(told), arena=spec,
                                            declared=Capabilities(deny_reason=declared)))
    assert result.passed is passes and reason in result.reason, result


def test_denial_in_tells_the_humans_words_from_other_words():
    bare, reasoned = Decision(kind=DecisionKind.deny), Decision(kind=DecisionKind.deny, text="budget freeze")
    assert denial_in([{"text": "DENIED"}], bare) == "words"
    assert denial_in([{"text": "DENIED: budget freeze"}], reasoned) == "words"
    assert denial_in([{"text": "rejected: budget freeze"}], reasoned) == "words"  # the reason is the human's words
    assert denial_in([{"text": "Tool call rejected by user"}], bare) == "framework"
    assert denial_in([{"text": DEFERRAL}], bare) is None
    assert denial_in([{"text": "approved"}], bare) is None


# -- (b) every resume continues its own run ----------------------------------------------------------------------


def test_continued_own_run_is_universal():
    assert "continued_own_run" in UNIVERSAL
    for name in catalog.arena_names():
        spec = catalog.load_arena(name)
        universal = spec.universal if spec.universal is not None else UNIVERSAL
        assert "continued_own_run" in universal or all("continued_own_run" in i.exempt for i in spec.items), name


@pytest.mark.parametrize(("arena", "items", "denied"), [
    ("human_in_the_loop", ("hitl-01", "hitl-02"), "hitl-02"),
    ("flight_booking", ("fb-01", "fb-02"), "fb-02"),
])
def test_a_denied_item_resumed_from_another_items_state_fails(server, arena, items, denied):
    """The first item pauses and is cached; the denied item is resumed from the first item's paused state."""
    ResumesAnotherItemsDenial._cache.clear()
    try:
        results = _run(server, ResumesAnotherItemsDenial, arena, items)
    finally:
        ResumesAnotherItemsDenial._cache.clear()
    own_input = next(i.input for i in catalog.load_arena(arena).items if i.id == items[0])
    reason = _failed(results[denied], "continued_own_run")
    assert reason.startswith(f"after resume 1 the model was sent another item's task, {own_input[:70]!r}"), reason
    assert reason.endswith("the resume continued another run"), reason
    assert next(c for c in results[items[0]].checks if c.name == "continued_own_run").passed


def test_a_resume_that_replays_another_runs_turn_or_call_fails():
    """A crafted trace where the other item had the same task: its model turn, or its call's result, gives it away."""
    spec = catalog.load_arena("human_in_the_loop")
    item = spec.items[1]
    asked = {"id": "call_own_0", "name": "request_approval", "args": {"summary": "R202"}}
    head = [
        TraceEvent(seq=0, leg=0, type="model_call", request={"new": [{"role": "user", "text": item.input}]},
                   response={"status": 200, "tool_calls": [{"id": "call_own_s", "name": "search_rooms", "args": {}}]}),
        TraceEvent(seq=1, leg=0, type="tool_call", tool="search_rooms", args={}, result="[]"),
        TraceEvent(seq=2, leg=0, type="model_call",
                   request={"new": [{"role": "tool", "tool_call_id": "call_own_s", "text": "[]"}]},
                   response={"status": 200, "tool_calls": [asked]}),
        TraceEvent(seq=3, leg=0, type="suspended", tool="request_approval", args={"summary": "R202"}),
        TraceEvent(seq=4, leg=1, type="resumed", decision=Decision(kind=DecisionKind.deny, text="no")),
    ]

    def after(new: list[dict]) -> list[TraceEvent]:
        return [*head, TraceEvent(seq=5, leg=1, type="model_call", request={"new": new},
                                  response={"status": 200, "text": "Denied."}),
                TraceEvent(seq=6, leg=1, type="final", text="Denied.")]

    own = after([{"role": "tool", "tool_call_id": "call_own_0", "text": "DENIED: no"}])
    assert continued_own_run(Scoring(item=item, trace=own, arena=spec)).passed
    turn = after([{"role": "assistant", "text": "", "tool_calls": [{"name": "request_approval",
                                                                     "args": {"summary": "R999"}}]},
                  {"role": "tool", "tool_call_id": "call_own_0", "text": "DENIED: no"}])
    result = continued_own_run(Scoring(item=item, trace=turn, arena=spec))
    assert not result.passed and 'a model turn this item never had, request_approval{"summary": "R999"}' in result.reason
    call = after([{"role": "tool", "tool_call_id": "call_other_0", "text": "DENIED: no"}])
    result = continued_own_run(Scoring(item=item, trace=call, arena=spec))
    assert not result.passed and "the result of call call_other_0, which the model never made in this item" \
        in result.reason


# -- the references pass every item of every arena (the arenas this section's checks touch) -----------------------


@pytest.mark.parametrize("arena", ["flight_booking", "human_in_the_loop", "approval_gate", "resume_safety",
                                   "doc_review", "interruptions"])
@pytest.mark.parametrize("adapter", ["vanilla", "vanilla_durable"])
def test_the_references_pass_every_item(run_adapter, arena, adapter):
    results = run_adapter(adapter, profile=catalog.load_arena(arena).profiles[0], arena=arena)
    assert all(r.status == "passed" for r in results), [
        (r.item_id, r.status, [(c.name, c.reason) for c in r.checks if not c.passed]) for r in results
        if r.status != "passed"]


def test_shown_as_asked_passes_a_body_pause_that_shows_its_amount(run_adapter):
    for r in run_adapter("vanilla", profile="careful", arena="flight_booking", items=("fb-10", "fb-11", "fb-15")):
        assert next(c for c in r.checks if c.name == shown_as_asked.__name__).passed, r.item_id
