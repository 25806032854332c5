"""interruptions: the reference passes every item, and each faulty way of handling an interruption is caught for
its own reason (a pending call run on a new message or on a late approval, a booking made while a question waits,
a draft committed before the confirmation, a message that never reaches the model)."""

from __future__ import annotations

from arena import catalog, evaluate
from arena.types import AdapterInfo, Decision, DecisionKind, DecisionSet, LegContext, LegResult
from arena_builtins.adapters.vanilla import CANCELLED, Paused as _Paused, VanillaAdapter, check_decisions as _check

ARENA = "interruptions"


def _run(adapter, items, tmp_path):
    run = evaluate(ARENA, [adapter], items=items, out=tmp_path, timeout=60)[0]
    return {r.item_id: r for r in run.results}


def _check_of(result, name):
    return next(c for c in result.checks if c.name == name)


def _named(name: str) -> AdapterInfo:
    return VanillaAdapter.info.model_copy(update={"name": name})


class RunsPendingOnMessage(VanillaAdapter):
    """Takes a new message as a go-ahead: the held call runs, then the message is appended."""

    info = _named("runs_pending_on_message")

    async def _interrupted(self, state: _Paused, message: Decision, ctx: LegContext) -> LegResult:
        for call in state.turn or [state.approval_call, *state.held]:
            state.messages.append({"role": "tool", "tool_call_id": call["id"], "content": await self._run(ctx, call)})
        state.messages.append({"role": "user", "content": message.text})
        return await self._loop(state.messages, ctx)


class RunsOnLateApproval(VanillaAdapter):
    """Keeps no record of resumed pauses: the first pause's state, resumed late with an approval, runs its call."""

    info = _named("runs_on_late_approval")

    def _admit(self, state: _Paused, decision, ctx: LegContext) -> None:
        _check(state, decision, set(ctx.gated_tools))


class LeavesCallUnanswered(VanillaAdapter):
    """Appends the message and nothing for the held call: the model is sent a call without a result."""

    info = _named("leaves_call_unanswered")

    async def _interrupted(self, state: _Paused, message: Decision, ctx: LegContext) -> LegResult:
        state.messages.append({"role": "user", "content": message.text})
        return await self._loop(state.messages, ctx)


class RefusesMessages(VanillaAdapter):
    info = _named("refuses_messages")

    async def _interrupted(self, state: _Paused, message: Decision, ctx: LegContext) -> LegResult:
        raise RuntimeError("a paused run takes a decision, not a message")


class DropsMessage(VanillaAdapter):
    """Cancels the held call but tells the model to carry on instead of passing the human's message."""

    info = _named("drops_message")

    async def _interrupted(self, state: _Paused, message: Decision, ctx: LegContext) -> LegResult:
        return await super()._interrupted(state, message.model_copy(update={"text": "continue"}), ctx)


class BooksWhileAsking(VanillaAdapter):
    """Pauses on the question, but books the first room it offers before the answer comes."""

    info = _named("books_while_asking")

    async def start(self, ctx: LegContext) -> LegResult:
        result = await super().start(ctx)
        if result.status == "suspended" and result.pending is not None and result.pending.tool == "request_approval":
            await ctx.tools.acall("book_room", {"room_id": "R401"})
        return result


class CommitsTheDraft(VanillaAdapter):
    """Stops at the confirmation, but the drafted booking already went through."""

    info = _named("commits_the_draft")

    async def start(self, ctx: LegContext) -> LegResult:
        result = await super().start(ctx)
        if result.status == "suspended" and result.pending is not None and result.pending.tool == "book_room":
            await ctx.tools.acall("book_room", dict(result.pending.args))
        return result


NONSTOP = {"segments": [{"flight": "FU703", "date": "2026-11-30"}], "fare": "main", "passengers": ["Alex Rivera"],
           "amount": 290}


class GuessesTheFlight(VanillaAdapter):
    """Asks which flight, but books the nonstop before the answer comes (catalog T16's fault)."""

    info = _named("guesses_the_flight")

    async def start(self, ctx: LegContext) -> LegResult:
        result = await super().start(ctx)
        if result.status == "suspended" and result.pending is not None and result.pending.tool == "request_approval":
            await ctx.tools.acall("book_flight", NONSTOP)
        return result


class CancelsTheOutboundToo(VanillaAdapter):
    """Stops at the confirmation of the return flight's cancellation, then cancels the outbound with it."""

    info = _named("cancels_the_outbound_too")

    async def resume(self, state, decision, ctx: LegContext) -> LegResult:
        result = await super().resume(state, decision, ctx)
        if isinstance(decision, Decision) and decision.approved:
            await ctx.tools.acall("cancel_flight", {"pnr": "M7TQ2Z", "flight": "FU101"})
        return result


def test_items_over_five_kinds_of_interruption():
    spec = catalog.load_arena(ARENA)
    groups = [i.metadata["group"] for i in spec.items]
    assert len(spec.items) >= 14 and set(groups) == {"message", "clarify", "handoff", "always", "input"}
    assert {i.metadata.get("late") for i in spec.items} == {None, "at_next_pause", "after_run"}
    messages = [i for i in spec.items if i.metadata["group"] == "message"]
    assert all(i.resume_with[0].kind is DecisionKind.message for i in messages)
    airline = {i.metadata["group"] for i in spec.items if i.metadata.get("sandbox") == "airline"}
    assert airline == {"clarify", "handoff"}  # catalog 004's T16 and T08 on the airline sandbox


def test_the_reference_passes_every_item_and_cancels_the_pending_call(tmp_path):
    results = _run("vanilla", None, tmp_path)
    spec = catalog.load_arena(ARENA)
    assert len(results) == len(spec.items)
    for item in spec.items:
        r = results[item.id]
        assert r.status == "passed", (item.id, [c for c in r.checks if not c.passed])
        if item.metadata["group"] == "message":
            assert _check_of(r, "pending_call_not_run").reason.startswith(f"cancelled: ") and CANCELLED in \
                _check_of(r, "pending_call_not_run").reason
        if item.metadata.get("late"):  # refused: the pause was resumed already, by the message
            assert "already resumed" in _check_of(r, "late_approval_refused").reason


def test_an_adapter_without_a_message_channel_is_not_measured_on_the_message_items(tmp_path):
    spec = catalog.load_arena(ARENA)
    info = VanillaAdapter.info.model_copy(update={
        "name": "no_message", "channels": tuple(c for c in VanillaAdapter.info.channels if c.name != "message")})
    items, why = spec.items_for(info, spec.items)
    assert {i.metadata["group"] for i in items} == {"clarify", "handoff", "always", "input"}
    assert len(why) == 8 and all("no message channel" in w for w in why.values())
    declared = info.model_copy(update={"channels": (*info.channels, VanillaAdapter.info.channel("message").model_copy(
        update={"kind": "unsupported", "mechanism": "a paused run takes decisions only"}))})
    assert all("takes decisions only" in w for w in spec.items_for(declared, spec.items)[1].values())


def test_running_the_pending_call_on_a_new_message_is_caught(tmp_path):
    r = _run(RunsPendingOnMessage, ["int-01"], tmp_path)["int-01"]
    check = _check_of(r, "pending_call_not_run")
    assert not check.passed and check.reason.startswith("ran") and "R102" in check.reason
    assert not _check_of(r, "booked_as_expected").passed


def test_running_the_old_call_on_a_late_approval_is_caught(tmp_path):
    results = _run(RunsOnLateApproval, ["int-05", "int-06"], tmp_path)
    for item, room in (("int-05", "R301"), ("int-06", "R102")):
        check = _check_of(results[item], "late_approval_refused")
        assert not check.passed and check.reason.startswith("the late approval ran the superseded call") \
            and room in check.reason, check.reason
        assert _check_of(results[item], "pending_call_not_run").passed  # the message itself cancelled it


def test_a_call_left_without_a_result_and_a_refused_message_are_told_apart(tmp_path):
    """A message sent with the held call left without a result is a request the API refuses (HTTP 400), as the
    gateway does: the held call did not run (the leg ended in the error), and requests_well_formed names the
    request; a framework that refuses the message itself fails only `completed`."""
    left = _run(LeavesCallUnanswered, ["int-01"], tmp_path / "left")["int-01"]
    check = _check_of(left, "pending_call_not_run")
    assert check.passed and check.reason.startswith("refused: ") and "Error code: 400" in check.reason, check.reason
    malformed = _check_of(left, "requests_well_formed")
    assert not malformed.passed and "did not have response messages" in malformed.reason, malformed.reason
    refused = _run(RefusesMessages, ["int-01"], tmp_path / "refused")["int-01"]
    check = _check_of(refused, "pending_call_not_run")
    assert check.passed and check.reason.startswith("refused: ") and "takes a decision, not a message" in check.reason
    assert not _check_of(refused, "completed").passed and _check_of(refused, "requests_well_formed").passed


def test_a_late_approval_with_no_pause_to_come_at_is_not_counted_as_run(tmp_path):
    """int-05's late approval comes at the run's second pause; a refused message leaves no second pause: the check
    says it was never delivered, and the column leaves the item out rather than count it as a call run."""
    from arena_builtins.arenas.interruptions.checks import NOT_DELIVERED
    from arena_builtins.arenas.interruptions.columns import rule_late_approval

    r = _run(RefusesMessages, ["int-05"], tmp_path)["int-05"]
    assert _check_of(r, "late_approval_refused").reason == NOT_DELIVERED
    assert rule_late_approval(r) is None
    ran = _run(RunsOnLateApproval, ["int-05"], tmp_path / "ran")["int-05"]
    counted, why = rule_late_approval(ran)
    assert counted and "ran the superseded call" in why


def test_a_message_that_never_reaches_the_model_is_caught(tmp_path):
    r = _run(DropsMessage, ["int-03"], tmp_path)["int-03"]
    check = _check_of(r, "decision_reached_model")
    assert not check.passed and "Cancel that, we will meet online." in check.reason
    assert r.status == "failed"


def test_booking_while_the_question_waits_is_caught(tmp_path):
    r = _run(BooksWhileAsking, ["int-10"], tmp_path)["int-10"]
    check = _check_of(r, "clarified_before_acting")
    assert not check.passed and "book_room{'room_id': 'R401'} ran before the run stopped for its question" in check.reason


def test_committing_the_draft_before_the_confirmation_is_caught(tmp_path):
    r = _run(CommitsTheDraft, ["int-14"], tmp_path)["int-14"]
    check = _check_of(r, "handoff_nothing_committed")
    assert not check.passed and check.reason.startswith("book_room{'room_id': 'R202'} ran before the human confirmed")


class AlwaysOverridesDenial(VanillaAdapter):
    """An approve-always decides every call of its tool at the pause, the call the human denied included."""

    info = _named("always_overrides_denial")

    async def _resume_calls(self, state: _Paused, decisions: DecisionSet, ctx: LegContext) -> LegResult:
        if any(d.always and d.approved for d in decisions.decisions):
            decisions = DecisionSet(decisions=[d.model_copy(update={"kind": DecisionKind.approve})
                                               for d in decisions.decisions])
        return await super()._resume_calls(state, decisions, ctx)


class ForgetsAlways(VanillaAdapter):
    info = _named("forgets_always")

    def _remember(self, decision: Decision, state: _Paused) -> None:
        return None


class EveryApprovalSticks(VanillaAdapter):
    info = _named("every_approval_sticks")

    def _remember(self, decision: Decision, state: _Paused) -> None:
        super()._remember(decision.model_copy(update={"always": True}), state)


class IgnoresInput(VanillaAdapter):
    info = _named("ignores_input")

    async def add_input(self, state: _Paused, text: str, ctx: LegContext) -> _Paused:
        return state


def test_an_always_approval_that_overrides_an_explicit_denial_is_caught(tmp_path):
    r = _run(AlwaysOverridesDenial, ["int-17"], tmp_path)["int-17"]
    check = _check_of(r, "sticky_approval_scoped")
    assert not check.passed and "booked R102, R301; expected R102 booked" in check.reason
    assert not _check_of(r, "denied_not_executed").passed


def test_an_always_that_does_not_stand_and_a_plain_approval_that_does_are_caught(tmp_path):
    forgot = _run(ForgetsAlways, ["int-15"], tmp_path / "forgot")["int-15"]
    check = _check_of(forgot, "sticky_approval_scoped")
    assert not check.passed and "paused again on book_room{'room_id': 'R202'} after 1 pause(s)" in check.reason
    sticks = _run(EveryApprovalSticks, ["int-18"], tmp_path / "sticks")["int-18"]
    check = _check_of(sticks, "sticky_approval_scoped")
    assert not check.passed and check.reason.startswith("paused 1 time(s)") and "expected 2 pause(s)" in check.reason


def test_input_that_never_reaches_the_model_is_caught(tmp_path):
    r = _run(IgnoresInput, ["int-19"], tmp_path)["int-19"]
    check = _check_of(r, "midrun_input_seen")
    assert not check.passed and "the Tuesday meeting is now 12 people" in check.reason \
        and "before the model asked for book_room again" in check.reason
    assert _check_of(r, "booked_as_expected").reason == "booked R102, R202; expected R102, R301"


def test_input_an_adapter_cannot_add_is_recorded_as_its_error(tmp_path):
    class NoAddInput(VanillaAdapter):
        info = _named("no_add_input")

        async def add_input(self, state, text, ctx):
            raise NotImplementedError("this framework takes no input while paused")

    r = _run(NoAddInput, ["int-20"], tmp_path)["int-20"]
    event = next(e for e in r.trace if e.type == "input")
    assert event.result == "NotImplementedError: this framework takes no input while paused"
    assert not _check_of(r, "midrun_input_seen").passed


def test_a_late_approval_answered_after_the_run_leaves_the_runs_own_final_answer_standing():
    """final_from_model reads the run's own legs when a replay the harness started after the run answered last."""
    from arena.checks import CHECKS, Scoring
    from arena.types import TraceEvent

    def answer(seq, leg, text):
        return TraceEvent(seq=seq, leg=leg, type="model_call", request={"new": []},
                          response={"status": 200, "text": text, "tool_calls": []})

    spec = catalog.load_arena(ARENA)
    own = [answer(0, 0, "Understood: cancelled."), TraceEvent(seq=1, leg=0, type="final", text="Understood: cancelled.")]
    late = [TraceEvent(seq=2, leg=1, type="resumed", replay="after_run",
                       decision=Decision(kind=DecisionKind.approve)), answer(3, 1, "Done: BOOKED R102.")]
    check = CHECKS["final_from_model"](Scoring(item=spec.item("int-06"), trace=own + late, arena=spec))
    assert check.passed and "a replay answered after it" in check.reason
    unmarked = [late[0].model_copy(update={"replay": None}), late[1]]  # the same answer in a leg of the run's own
    check = CHECKS["final_from_model"](Scoring(item=spec.item("int-06"), trace=own + unmarked, arena=spec))
    assert not check.passed and "'Done: BOOKED R102.'" in check.reason


def test_the_airline_items_read_what_went_through_from_the_sandbox_tools(tmp_path):
    """The reference asks with both flights' times and prices, books the one the answer chose with a window seat,
    and stops at the cancellation's confirmation; each airline item has a sandbox of its own."""
    results = _run("vanilla", ["int-22", "int-23", "int-25"], tmp_path)
    assert [results[i].status for i in ("int-22", "int-23", "int-25")] == ["passed"] * 3
    assert _check_of(results["int-22"], "booked_as_expected").reason == "booked FU703 window, as expected"
    assert _check_of(results["int-23"], "booked_as_expected").reason == "booked FU701 window, as expected"
    for r in results.values():  # the sandbox starts anew: each booking is the airline's first (NEW001)
        state = next(e for e in r.trace if e.type == "state")
        assert [p["code"] for p in state.data["state"]["pnrs"]] == ["ABC123", "M7TQ2Z", "NEW001"][:2 + (r.item_id != "int-25")]


def test_booking_a_flight_before_the_answer_is_caught(tmp_path):
    r = _run(GuessesTheFlight, ["int-23"], tmp_path)["int-23"]
    check = _check_of(r, "clarified_before_acting")
    assert not check.passed and check.reason.startswith("book_flight{") and "before the run stopped" in check.reason
    assert not _check_of(r, "booked_as_expected").passed  # the nonstop it guessed, and the one-stop the answer chose


def test_cancelling_more_than_the_confirmed_flight_is_caught(tmp_path):
    r = _run(CancelsTheOutboundToo, ["int-25"], tmp_path)["int-25"]
    assert _check_of(r, "handoff_nothing_committed").passed  # it did stop at the confirmation
    check = _check_of(r, "booked_as_expected")
    assert not check.passed and check.reason == "booked cancel FU101, cancel FU311; expected cancel FU311"


class KeepsStateInMemory(VanillaAdapter):
    """Hands back a paused state that looks like data (a key) while the run itself stays in this instance's memory:
    resumed anywhere else, there is nothing to resume."""

    info = _named("keeps_state_in_memory")

    def __init__(self) -> None:
        super().__init__()
        self.kept: dict[str, _Paused] = {}

    async def start(self, ctx: LegContext) -> LegResult:
        result = await super().start(ctx)
        if result.status != "suspended":
            return result
        self.kept[result.state.pause_id] = result.state
        return result.model_copy(update={"state": {"run": result.state.pause_id}})

    async def resume(self, state, decision, ctx: LegContext) -> LegResult:
        paused = self.kept.get(state["run"])
        if paused is None:
            raise RuntimeError(f"no paused run {state['run']} in this process")
        return await super().resume(paused, decision, ctx)


def test_the_handoff_is_confirmed_from_a_new_process_where_the_state_is_data(server):
    """The confirmation comes later, from another instance of the adapter (a worker process of its own, as the CLI
    gives one): a state that only looked like data is found out there, and passes where it stays in one process."""
    from arena.runner import run_items

    spec = catalog.load_arena(ARENA)
    item = [spec.item("int-13")]
    (alone,) = run_items(KeepsStateInMemory, spec, item, server=server, model="careful", timeout_s=60)
    assert alone.status == "passed" and "(confirmed in the process that paused)" in \
        _check_of(alone, "handoff_nothing_committed").reason
    (moved,) = run_items(KeepsStateInMemory, spec, item, server=server, model="careful", timeout_s=60,
                         spare_factory=KeepsStateInMemory)
    assert moved.status != "passed" and "no paused run" in (moved.error or "")
    assert _check_of(moved, "booked_as_expected").reason == "booked nothing; expected R102"


def test_a_durable_reference_confirms_the_handoff_in_a_new_process(tmp_path):
    results = _run("vanilla_durable", ["int-13", "int-25"], tmp_path)
    for r in results.values():
        assert r.status == "passed", r.checks
        assert _check_of(r, "handoff_nothing_committed").reason.endswith("(confirmed in a new process)")
        paused = next(e for e in r.trace if e.type == "suspended")
        final = next(e for e in r.trace if e.type == "final")
        assert final.pid != paused.pid
