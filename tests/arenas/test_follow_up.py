"""follow_up: the reference passes every item it declares, plain and streamed; an adapter that forgets the
conversation, or keeps a tool result without its call (openai-agents-python #4827), is caught for its own reason; an
adapter without a channel is not run (follow_up) or not measured (output_guard), with the reason."""

from __future__ import annotations

import pytest

from arena import catalog, evaluate
from arena_builtins.adapters.vanilla import VanillaAdapter
from arena_builtins.arenas.follow_up.channel import FOLLOW_UP, FOLLOW_UP_TEXT, OUTPUT_GUARD

ARENA = "follow_up"
SPEC = catalog.load_arena(ARENA)
PLAIN = [i.id for i in SPEC.items if not i.metadata["guarded"]]


def _run(adapter, items, tmp_path, stream=False):
    run = evaluate(ARENA, [adapter], items=items, out=tmp_path, timeout=60, stream=stream)[0]
    return {r.item_id: r for r in run.results}, run


def _failed(result):
    return {c.name: c.reason for c in result.checks if not c.passed}


class ForgetsTheConversation(VanillaAdapter):
    """Sends the follow-up as a new conversation: the question alone, none of the run's history."""

    async def follow_up(self, state, text, ctx):
        return await self._loop([{"role": "system", "content": ctx.instructions}, {"role": "user", "content": text}],
                                ctx)


class OrphansTheResult(VanillaAdapter):
    """Keeps the booking's result but not the model turn that called it (#4827's session): the follow-up's request
    holds a tool result without its call, which the API refuses."""

    async def follow_up(self, state, text, ctx):
        kept = [m for m in self._conversation if not (m.get("role") == "assistant" and any(
            c["function"]["name"] == "book_room" for c in m.get("tool_calls") or []))]
        return await self._loop([*kept, {"role": "user", "content": text}], ctx)


def test_twelve_items_half_under_the_output_guard_each_half_approved():
    assert [i.id for i in SPEC.items] == [f"fu-{n:02d}" for n in range(1, 13)]
    for guarded in (False, True):
        items = [i for i in SPEC.items if i.metadata["guarded"] is guarded]
        assert len(items) == 6 and sum(i.resume_with[0].approved for i in items) == 3
    assert all({"follow_up_answered", "history_kept"} <= set(i.checks) for i in SPEC.items)
    assert SPEC.needs == (FOLLOW_UP,)
    assert SPEC.leg_context is not None and SPEC.leg_context(SPEC.items[6]) == {FOLLOW_UP: True, OUTPUT_GUARD: True}


def test_the_reference_passes_plain_and_streamed_and_is_not_measured_under_the_output_guard(tmp_path):
    for stream in (False, True):
        results, run = _run("vanilla", None, tmp_path / str(stream), stream=stream)
        assert {k: r.status for k, r in results.items()} == {i: "passed" for i in PLAIN}, \
            {k: _failed(r) for k, r in results.items()}
        assert sorted(run.meta["not_measured"]) == [i.id for i in SPEC.items if i.metadata["guarded"]]
        assert all(OUTPUT_GUARD in why for why in run.meta["not_measured"].values())
        follow = [e for e in results["fu-01"].trace if e.leg == 2]
        assert follow[0].type == "resumed" and follow[0].text == f"{FOLLOW_UP}: {FOLLOW_UP_TEXT}"
        assert follow[-1].type == "replayed" and follow[-1].result == "finished" and "BOOKED R101" in follow[-1].text


def test_a_follow_up_without_the_conversation_is_caught(tmp_path):
    results, _ = _run(ForgetsTheConversation, ["fu-01", "fu-02"], tmp_path)
    for item, also in (("fu-01", set()), ("fu-02", {"acknowledged"})):  # the last answer no longer names the denial
        failed = _failed(results[item])
        assert set(failed) == {"history_kept", *also}, failed  # answered, well formed: it just forgot
        assert "carried no result of the run's book_room call" in failed["history_kept"]


def test_a_kept_result_without_its_call_is_refused_and_caught(tmp_path):
    results, _ = _run(OrphansTheResult, ["fu-01"], tmp_path)
    failed = _failed(results["fu-01"])
    assert set(failed) == {"follow_up_answered", "history_kept", "requests_well_formed"}, failed
    assert "ended raised" in failed["follow_up_answered"] and "400" in failed["follow_up_answered"]
    assert failed["history_kept"].startswith("the follow-up's first request was refused")
    assert "(leg 2) was refused as the API refuses it (HTTP 400" in failed["requests_well_formed"]


def test_a_run_that_never_paused_sends_no_follow_up_and_fails_for_it():
    from arena.checks import Scoring
    from arena.types import TraceEvent
    from arena_builtins.arenas.follow_up.checks import follow_up_answered, history_kept

    trace = [TraceEvent(seq=0, leg=0, type="final", text="Done")]
    for check in (follow_up_answered, history_kept):
        result = check(Scoring(item=SPEC.items[0], trace=trace, arena=SPEC))
        assert not result.passed and "never paused" in result.reason


def test_an_adapter_without_the_channel_is_not_run_with_the_reason():
    info = VanillaAdapter.info.model_copy(update={
        "name": "no_follow_up", "channels": tuple(c for c in VanillaAdapter.info.channels if c.name != FOLLOW_UP)})
    why = SPEC.declined(info)
    assert why is not None and FOLLOW_UP in why


@pytest.mark.parametrize("adapter", [n for n, e in catalog.adapters().items()
                                     if e.available and e.load().info.channel(FOLLOW_UP) is not None])
def test_every_adapter_that_declares_the_channel_follows_up_after_an_approval_and_a_denial(adapter, tmp_path):
    """A declared `follow_up` is implemented where the run ran: an adapter that inherits the declaration but keeps
    its conversation elsewhere (vanilla_durable, in its journal) is held to it too."""
    results, _ = _run(adapter, ["fu-01", "fu-02"], tmp_path)
    assert {k: r.status for k, r in results.items()} == {"fu-01": "passed", "fu-02": "passed"}, \
        {k: _failed(r) for k, r in results.items()}


@pytest.mark.framework("openai_agents")
def test_openai_agents_keeps_the_conversation_in_its_session_plain_and_under_the_output_guard(tmp_path):
    """The installed release (0.24.0 and later: #4827's held session write) passes; the history shows 0.22.3 and
    0.23.1 failing the output-guard items (docs/regressions.md)."""
    results, _ = _run("openai_agents", ["fu-01", "fu-07", "fu-08"], tmp_path)
    assert {k: r.status for k, r in results.items()} == {"fu-01": "passed", "fu-07": "passed", "fu-08": "passed"}, \
        {k: _failed(r) for k, r in results.items()}
