"""run_context: the reference passes every item, plain and streamed; an adapter that loses the application's context
on resume, or whose framework forgets the approval when a context comes with the resume (openai-agents-python
#4244), is caught for its own reason; an adapter without the channel is not run, with the reason."""

from __future__ import annotations

import pytest

from arena import catalog, evaluate
from arena.checks import Scoring
from arena.types import LegContext, TraceEvent
from arena_builtins.adapters.vanilla import VanillaAdapter
from arena_builtins.arenas.run_context.channel import RUN_CONTEXT
from arena_builtins.arenas.run_context.checks import context_reached_model

ARENA = "run_context"
SPEC = catalog.load_arena(ARENA)


def _run(adapter, items, tmp_path, stream=False):
    run = evaluate(ARENA, [adapter], items=items, out=tmp_path, timeout=60, stream=stream)[0]
    return {r.item_id: r for r in run.results}


def _failed(result):
    return {c.name: c.reason for c in result.checks if not c.passed}


class LosesTheContext(VanillaAdapter):
    """Declares the channel, hands the context at the start, and resumes without it (as an application that
    restores the paused state and forgets to pass `context=` again would)."""

    async def resume(self, state, decision, ctx):
        return await super().resume(state, decision, ctx.model_copy(
            update={"extra": {k: v for k, v in ctx.extra.items() if k != RUN_CONTEXT}}))


class ForgetsTheApproval(VanillaAdapter):
    """A framework that drops the decision when a context comes with the resume (#4244): the held call is asked
    again, so the run pauses a second time and the approved booking never runs."""

    async def resume(self, state, decision, ctx):
        from arena.types import LegResult, PendingRequest
        from arena.for_adapters import kit, parse_args

        call = state.approval_call
        kit.tell_pause(ctx, call["function"]["name"], call["id"])
        return LegResult.suspended(PendingRequest(tool=call["function"]["name"],
                                                  args=parse_args(call["function"]["arguments"]),
                                                  call_id=call["id"]), state)


def test_twelve_items_each_for_a_user_the_context_names():
    assert [i.id for i in SPEC.items] == [f"ctx-{n:02d}" for n in range(1, 13)]
    assert len({i.metadata["user"] for i in SPEC.items}) == 12
    assert sum(i.resume_with[0].approved for i in SPEC.items) == 6  # half approved, half denied with a reason
    assert all("context_reached_model" in i.checks for i in SPEC.items)
    assert SPEC.needs == (RUN_CONTEXT,)
    assert SPEC.leg_context is not None and SPEC.leg_context(SPEC.items[0]) == {
        RUN_CONTEXT: {"user": "Alice Martin", "team": "facilities"}}


def test_the_reference_passes_plain_and_streamed(tmp_path):
    for stream in (False, True):
        results = _run("vanilla", None, tmp_path / str(stream), stream=stream)
        assert {k: r.status for k, r in results.items()} == {i.id: "passed" for i in SPEC.items}, \
            {k: _failed(r) for k, r in results.items()}
        reason = next(c.reason for c in results["ctx-01"].checks if c.name == "context_reached_model")
        assert reason.startswith("all 3 model requests carried instructions naming 'Alice Martin', 1 of them after")


def test_a_context_lost_on_resume_is_caught(tmp_path):
    r = _run(LosesTheContext, ["ctx-01"], tmp_path)["ctx-01"]
    failed = _failed(r)
    assert list(failed) == ["context_reached_model"]  # the booking itself ran as approved
    assert failed["context_reached_model"].startswith(
        "1 of 3 model requests carried no instructions naming 'Alice Martin', first the one at step") and \
        failed["context_reached_model"].endswith("(leg 1)")


def test_an_approval_forgotten_when_the_context_comes_with_the_resume_is_caught(tmp_path):
    r = _run(ForgetsTheApproval, ["ctx-01"], tmp_path)["ctx-01"]
    failed = _failed(r)
    assert {"completed", "tool_called_once_after_resume", "context_reached_model"} <= set(failed)
    assert "suspended a 2. time" in failed["completed"]
    assert failed["context_reached_model"].startswith("no model request after the resume (leg 1)")


def test_the_check_reads_repeated_instructions_by_their_digest():
    """The gateway records a system message's text once, then only its digest: a request that repeats it carries
    it; one whose system message was never recorded with the user does not."""
    item = SPEC.items[0]
    named = {"role": "system", "text": "You act for Alice Martin of the facilities team. Book.", "digest": "d1"}
    plain = {"role": "system", "text": "Book.", "digest": "d2"}

    def call(seq, leg, new, system):
        return TraceEvent(seq=seq, leg=leg, type="model_call", request={"new": new, "system": system},
                          response={"status": 200, "text": "ok"})

    resumed = TraceEvent(seq=2, leg=1, type="resumed")
    good = [call(0, 0, [named], ["d1"]), call(1, 0, [], ["d1"]), resumed, call(3, 1, [], ["d1"])]
    assert context_reached_model(Scoring(item=item, trace=good, arena=SPEC)).passed
    bad = [*good[:3], call(3, 1, [plain], ["d2"])]
    result = context_reached_model(Scoring(item=item, trace=bad, arena=SPEC))
    assert not result.passed and "first the one at step 3 (leg 1)" in result.reason
    unrecorded = [*good[:3], call(3, 1, [], [])]  # no instructions at all
    assert not context_reached_model(Scoring(item=item, trace=unrecorded, arena=SPEC)).passed


def test_an_adapter_without_the_channel_is_not_run_with_the_reason():
    info = VanillaAdapter.info.model_copy(update={
        "name": "no_context", "channels": tuple(c for c in VanillaAdapter.info.channels if c.name != RUN_CONTEXT)})
    why = SPEC.declined(info)
    assert why is not None and RUN_CONTEXT in why


def test_every_leg_is_handed_the_context():
    """The leg context is the item's, on every leg (the channel's `run_context_of` reads it)."""
    from arena_builtins.arenas.run_context.channel import run_context_of

    ctx = LegContext.model_construct(extra=SPEC.leg_context(SPEC.items[1]))
    assert run_context_of(ctx) == {"user": "Bruno Diaz", "team": "finance"}
    assert run_context_of(LegContext.model_construct(extra={})) is None


@pytest.mark.parametrize("adapter", [
    pytest.param("openai_agents", marks=pytest.mark.framework("openai_agents")),
    pytest.param("pydantic_ai", marks=pytest.mark.framework("pydantic_ai")),
    pytest.param("langgraph", marks=pytest.mark.framework("langgraph")),
])
def test_each_framework_that_declares_the_channel_carries_the_context_to_every_call(adapter, tmp_path):
    """Each declared mechanism (`context=` and instructions written from it, `deps`, LangGraph's runtime context)
    puts the user in every model request, the resumed ones too, and the decision is honoured with it."""
    results = _run(adapter, ["ctx-01", "ctx-02"], tmp_path)
    assert {k: r.status for k, r in results.items()} == {"ctx-01": "passed", "ctx-02": "passed"}, \
        {k: _failed(r) for k, r in results.items()}
    reason = next(c.reason for c in results["ctx-02"].checks if c.name == "context_reached_model")
    assert "carried instructions naming 'Bruno Diaz'" in reason and not reason.endswith(" 0 of them after the resume")
