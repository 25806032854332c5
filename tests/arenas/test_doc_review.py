"""doc_review: real .docx documents, the gold, the decision vocabulary (several calls, edit), routing by
call id, and each check failing on a faulty adapter or a crafted document for the right reason."""

from __future__ import annotations

import docx
import pytest

from arena import catalog
from arena_builtins.adapters.vanilla import VanillaAdapter
from arena.checks import Scoring, named
from arena.runner import route
from arena.tools.box import parse_args
from arena.trace import TraceRecorder
from arena.types import Decision, DecisionKind, DecisionSet, EvalItem, LegResult
from arena_builtins.arenas.doc_review import document
from arena_builtins.arenas.doc_review.checks import gold_calls, gold_snapshot
from arena_builtins.arenas.doc_review.fixtures import FIXTURES
from arena_builtins.arenas.doc_review.policy import plan

SPEC = catalog.load_arena("doc_review")
ITEMS = {i.id: i for i in SPEC.items}


def _check(result, name):
    return next(c for c in result.checks if c.name == name)


# -- the document ------------------------------------------------------------------------------------


def test_a_built_document_opens_in_python_docx_with_its_tracked_changes_and_comments(tmp_path):
    path = document.build(FIXTURES["contract"], tmp_path / "c.docx")
    opened = docx.Document(str(path))
    assert [c.author for c in opened.comments] == ["Bob Ortiz", "Alice Chen"]
    snap = document.snapshot(path)
    assert [(c["id"], c["kind"], c["author"]) for c in snap["changes"][:2]] == [("1", "insertion", "Alice Chen"),
                                                                               ("2", "deletion", "Alice Chen")]
    assert snap["track_revisions"] is True


def test_documents_of_one_fixture_are_copies_each_edited_on_its_own(tmp_path):
    """A fixture's .docx is built once per process; each item gets a file of its own from it."""
    first = document.build(FIXTURES["contract"], tmp_path / "a.docx")
    assert document.accept_change(first, "1").startswith("ok:")
    second = document.build(FIXTURES["contract"], tmp_path / "b.docx")
    assert document.snapshot(second) != document.snapshot(first)
    assert document.snapshot(second) == document.snapshot(document._build(FIXTURES["contract"], tmp_path / "c.docx"))


def test_each_edit_does_what_word_would(tmp_path):
    path = document.build(FIXTURES["contract"], tmp_path / "c.docx")
    assert document.accept_change(path, "1").startswith("ok:")  # insertion kept as text
    assert document.accept_change(path, "2").startswith("ok:")  # deletion gone
    assert document.reject_change(path, "4").startswith("ok:")  # insertion gone
    assert document.reject_change(path, "3").startswith("ok:")  # deletion back as text
    assert document.snapshot(path)["paragraphs"][0] == [["t", "The Supplier shall deliver the Goods within thirty "
                                                              "days of the order."]]
    assert document.propose_edit(path, 1, "colour", "color").startswith("ok:")
    assert ["del", "colour", document.AGENT] in document.snapshot(path)["paragraphs"][1]
    assert document.reply_comment(path, "0", "Yes.").startswith("ok:")
    assert document.resolve_comment(path, "0").startswith("ok:")
    threads = document.comparable(document.snapshot(path))["comments"]
    assert (document.AGENT, "Yes.", "Can we move to net 60?", False) in threads
    assert ("Bob Ortiz", "Can we move to net 60?", None, True) in threads
    with pytest.raises(document.DocumentError):
        document.accept_change(path, "1")  # already accepted: no such change any more


def _parsed_afresh(path):
    return document._snapshot(docx.Document(str(path)))


def test_the_file_on_disk_is_the_state_after_every_edit_whatever_parse_is_kept(tmp_path):
    """Edits reuse the parse of what the previous call saved; the file still says the same after each one."""
    path = document.build(FIXTURES["contract"], tmp_path / "c.docx")
    for edit in (lambda: document.accept_change(path, "1"), lambda: document.propose_edit(path, 1, "colour", "color"),
                 lambda: document.reply_comment(path, "0", "Yes."), lambda: document.resolve_comment(path, "0")):
        assert edit().startswith("ok:")
        assert document.snapshot(path) == _parsed_afresh(path)


def test_a_document_changed_on_disk_by_anything_else_is_read_again(tmp_path):
    path = document.build(FIXTURES["contract"], tmp_path / "c.docx")
    assert document.accept_change(path, "1").startswith("ok:")  # its parse is kept
    other = docx.Document(str(path))
    other.add_paragraph("Added by another program.")
    other.save(str(path))
    assert document.snapshot(path)["paragraphs"][-1] == [["t", "Added by another program."]]
    assert document.accept_change(path, "2").startswith("ok:")
    assert _parsed_afresh(path)["paragraphs"][-1] == [["t", "Added by another program."]]


def test_an_edit_that_fails_half_way_leaves_the_document_as_the_file_says(tmp_path, monkeypatch):
    """A kept parse an edit changed before it raised is dropped: the next call reads the unchanged file."""
    path = document.build(FIXTURES["contract"], tmp_path / "c.docx")
    before = document.snapshot(path)

    def half_then_fail(element):
        element.getparent().remove(element)  # changed in memory...
        raise document.DocumentError("failed half way")  # ...and never saved

    monkeypatch.setattr(document, "_unwrap", half_then_fail)
    with pytest.raises(document.DocumentError):
        document.accept_change(path, "1")  # an insertion: unwrapped
    assert document.snapshot(path) == before == _parsed_afresh(path)


def test_every_gold_document_is_a_real_docx_that_differs_from_the_fixture(tmp_path):
    for item in SPEC.items:
        gold = gold_snapshot(item)
        start = document.snapshot(document.build(FIXTURES[item.metadata["fixture"]], tmp_path / f"{item.id}.docx"))
        changed = any(d.approved for d in item.resume_with[0]) or any(c["tool"] == "reply_comment"
                                                                      for c in item.metadata["calls"])
        assert (document.comparable(gold) != document.comparable(start)) == changed, item.id
        assert gold["track_revisions"]
        assert docx.Document(str(document.build(FIXTURES[item.metadata["fixture"]], tmp_path / "x.docx")))


def test_items_hold_several_gated_calls_with_mixed_decisions():
    assert len(SPEC.items) >= 14
    kinds = [{d.kind for d in item.resume_with[0]} for item in SPEC.items]
    assert all(len(item.resume_with[0]) >= 2 for item in SPEC.items)
    assert sum(DecisionKind.edit in k for k in kinds) >= 4
    assert sum({DecisionKind.approve, DecisionKind.deny} <= k for k in kinds) >= 4
    for item in SPEC.items:  # the request the scripted model reads asks for exactly the calls the item expects
        assert [{"tool": c.name, "args": c.args} for c in plan(item.input)] == item.metadata["calls"]
        assert len(gold_calls(item)) == sum(d.approved for d in item.resume_with[0]) + sum(
            c["tool"] == "reply_comment" for c in item.metadata["calls"])


# -- the decision vocabulary ---------------------------------------------------------------------------


def test_a_decision_matches_its_call_by_tool_and_arguments():
    d = Decision(kind="deny", text="no", match={"tool": "accept_change", "change_id": "2"})
    assert d.matches("accept_change", {"change_id": "2"})
    assert not d.matches("accept_change", {"change_id": "3"}) and not d.matches("reject_change", {"change_id": "2"})
    edit = Decision(kind="edit", args={"x": 1})
    assert edit.approved and edit.as_text().startswith("APPROVED WITH CHANGES {\"x\": 1}")
    assert DecisionSet(decisions=[d.model_copy(update={"call_id": "c9"})]).for_call("c9").text == "no"


def test_decisions_are_routed_by_the_ids_the_model_gave_not_by_position():
    recorder = TraceRecorder()
    recorder.record("model_call", response={"status": 200, "tool_calls": [
        {"id": "b", "name": "reject_change", "args": {"change_id": "3"}},
        {"id": "a", "name": "accept_change", "args": {"change_id": "1"}}]})
    pause = recorder.record("suspended", tool="reject_change")
    routed = route([Decision(kind="approve", match={"tool": "accept_change", "change_id": "1"}),
                    Decision(kind="deny", match={"tool": "reject_change", "change_id": "3"}),
                    Decision(kind="deny", match={"tool": "resolve_comment"})], recorder.events, pause)
    assert [d.call_id for d in routed.decisions] == ["a", "b", None]


def test_a_decision_set_crosses_the_worker_protocol():
    from arena.worker.protocol import Request

    wire = Request(op="resume", decision=DecisionSet(decisions=[Decision(kind="edit", args={"a": 1}, call_id="x")]))
    back = Request.model_validate_json(wire.model_dump_json())
    assert isinstance(back.decision, DecisionSet) and back.decision.for_call("x").args == {"a": 1}
    single = Request.model_validate_json(Request(op="resume", decision=Decision(kind="deny")).model_dump_json())
    assert isinstance(single.decision, Decision)


# -- the reference adapter passes, in both orders ------------------------------------------------------


@pytest.mark.parametrize("profile", ["reviewer", "reviewer-shuffled"])
def test_vanilla_passes_every_item(run_adapter, profile):
    results = run_adapter("vanilla", profile=profile, arena="doc_review")
    failed = {r.item_id: [c.reason for c in r.checks if not c.passed] for r in results if r.status != "passed"}
    assert not failed


def test_the_shuffled_profile_asks_in_another_order():
    item = ITEMS["dr-10"]
    turn = SPEC.policies["reviewer-shuffled"](
        [{"role": "user", "content": item.input},
         {"role": "assistant", "tool_calls": [{"id": "r1", "function": {"name": "list_changes", "arguments": "{}"}}]},
         {"role": "tool", "tool_call_id": "r1", "content": "[]"}])
    assert [c.name for c in turn.tool_calls] != [c["tool"] for c in item.metadata["calls"]]
    assert sorted(c.name for c in turn.tool_calls) == sorted(c["tool"] for c in item.metadata["calls"])


# -- faulty adapters: each check fails for its reason ------------------------------------------------------


class _Faulty(VanillaAdapter):
    """Vanilla with one fault in how it applies a pause's decisions."""

    def decide(self, decisions: DecisionSet, call: dict, index: int) -> Decision | None:
        return decisions.for_call(call["id"])

    def execute_args(self, decision: Decision, args: dict) -> dict:
        return decision.args if decision.args is not None else args

    async def _resume_calls(self, state, decisions: DecisionSet, ctx) -> LegResult:
        gated = set(ctx.gated_tools)
        index = 0
        for call in state.turn:
            name, args = call["function"]["name"], parse_args(call["function"]["arguments"])
            if name not in gated:
                result = await ctx.tools.acall(name, args)
            else:
                decision = self.decide(decisions, call, index)
                index += 1
                result = await self.apply(ctx, name, args, decision)
            state.messages.append({"role": "tool", "tool_call_id": call["id"], "content": result})
        return await self._loop(state.messages, ctx)

    async def apply(self, ctx, name, args, decision):
        if decision is None:
            return "NOT EXECUTED"
        if decision.approved:
            return await ctx.tools.acall(name, self.execute_args(decision, args))
        return decision.as_text()


class RoutesByPosition(_Faulty):
    def decide(self, decisions, call, index):
        return decisions.decisions[index] if index < len(decisions.decisions) else None


class RunsTheModelsArgumentsOnEdit(_Faulty):
    def execute_args(self, decision, args):
        return args


class ExecutesDenied(_Faulty):
    async def apply(self, ctx, name, args, decision):
        await ctx.tools.acall(name, args)
        return decision.as_text() if decision and not decision.approved else "ok: done"


class AppliesTwice(_Faulty):
    async def apply(self, ctx, name, args, decision):
        result = await super().apply(ctx, name, args, decision)
        if decision is not None and decision.approved:
            await ctx.tools.acall(name, self.execute_args(decision, args))
        return result


class DropsTheReason(_Faulty):
    async def apply(self, ctx, name, args, decision):
        if decision is not None and not decision.approved:
            return "The tool call was not executed."
        return await super().apply(ctx, name, args, decision)


class ApprovesDenied(_Faulty):
    """Answers every call with a plain 'ok:' result (as if approved) without running the denied ones."""

    async def apply(self, ctx, name, args, decision):
        if decision is not None and not decision.approved:
            return "ok: done"
        return await super().apply(ctx, name, args, decision)


class GivesTheEditAnotherResult(_Faulty):
    """Runs an edited call as edited, but hands the model another call's result for it."""

    async def apply(self, ctx, name, args, decision):
        result = await super().apply(ctx, name, args, decision)
        if decision is not None and decision.kind is DecisionKind.edit:
            return "ok: suggested in paragraph 1: 'seperately' -> 'separately' (tracked)"
        return result


class ClaimsDeniedWasApplied(_Faulty):
    """Runs nothing that was denied, but tells the model a denied call ran ("ok: ...")."""

    async def apply(self, ctx, name, args, decision):
        if decision is not None and not decision.approved:
            return "ok: applied"
        return await super().apply(ctx, name, args, decision)


@pytest.mark.parametrize("adapter, item, profile, check, says", [
    (GivesTheEditAnotherResult, "dr-06", "reviewer", "decision_routed_by_call_id", "was edited, but the model was sent"),
    (ClaimsDeniedWasApplied, "dr-07", "reviewer", "answer_matches_document", "was applied, but it never ran"),
    (RoutesByPosition, "dr-10", "reviewer-shuffled", "decision_routed_by_call_id", "was"),
    (RoutesByPosition, "dr-10", "reviewer-shuffled", "document_matches_gold", "paragraph"),
    (RunsTheModelsArgumentsOnEdit, "dr-06", "reviewer", "edited_args_executed", "ran with the model's arguments"),
    (ExecutesDenied, "dr-07", "reviewer", "denied_left_no_trace", "executed although the human denied it"),
    (AppliesTwice, "dr-01", "reviewer", "approved_applied_once", "executed 2 times"),
    (DropsTheReason, "dr-07", "reviewer", "deny_reasons_reached_model", "did not reach the model"),
    (ApprovesDenied, "dr-07", "reviewer", "decision_routed_by_call_id", "was denied, but its result reads"),
])
def test_a_faulty_adapter_fails_the_check_for_its_fault(run_adapter, adapter, item, profile, check, says):
    (result,) = run_adapter(adapter, profile=profile, arena="doc_review", items=[item])
    failed = _check(result, check)
    assert not failed.passed and says in failed.reason, failed.reason


def _crafted(item: EvalItem, edit_snapshot) -> Scoring:
    snap = gold_snapshot(item)
    edit_snapshot(snap)
    recorder = TraceRecorder()
    recorder.record("state", data={"document": snap})
    return Scoring(item=item, trace=recorder.events, arena=SPEC)


def test_a_document_with_track_changes_off_fails():
    scoring = _crafted(ITEMS["dr-01"], lambda s: s.update(track_revisions=False))
    assert not named(SPEC, "track_changes_on")(scoring).passed
    assert named(SPEC, "comments_as_decided")(scoring).passed


def test_a_document_with_a_comment_resolved_that_was_not_decided_fails():
    def resolve_all(snap):
        for c in snap["comments"]:
            c["resolved"] = True

    scoring = _crafted(ITEMS["dr-09"], resolve_all)
    result = named(SPEC, "comments_as_decided")(scoring)
    assert not result.passed and "comments differ" in result.reason
    assert not named(SPEC, "document_matches_gold")(scoring).passed
    assert named(SPEC, "document_matches_gold")(_crafted(ITEMS["dr-09"], lambda s: None)).passed


# -- frameworks: their own multi-call approval APIs ----------------------------------------------------


@pytest.mark.parametrize("name", ["langgraph", "langgraph_per_call", "pydantic_ai"])
def test_frameworks_with_native_edit_apply_every_decision_by_call_id(run_adapter, name):
    """Mixed decisions and edits, in shuffled order, through each framework's own API."""
    results = run_adapter(name, profile="reviewer-shuffled", arena="doc_review", items=["dr-06", "dr-10", "dr-11"])
    failed = {r.item_id: [c.reason for c in r.checks if not c.passed] for r in results if r.status != "passed"}
    assert not failed


@pytest.mark.parametrize("name", ["openai_agents", "microsoft_af", "google_adk_confirm"])
def test_frameworks_without_native_edit_route_but_do_not_run_the_edit(run_adapter, name):
    (result,) = run_adapter(name, profile="reviewer-shuffled", arena="doc_review", items=["dr-10"])
    assert _check(result, "decision_routed_by_call_id").passed
    assert _check(result, "denied_left_no_trace").passed
    edited = _check(result, "edited_args_executed")
    assert not edited.passed and "never ran with the human's arguments" in edited.reason


class NoMultiCall(VanillaAdapter):
    info = VanillaAdapter.info.model_copy(update={
        "name": "no_multi_call", "channels": tuple(c for c in VanillaAdapter.info.channels if c.name != "multi_call")})


def test_an_adapter_without_multi_call_is_not_run_and_says_why(tmp_path):
    import subprocess
    import sys
    from pathlib import Path

    out = subprocess.run([sys.executable, "-m", "arena", "run", "doc_review", "-a",
                          "tests.arenas.test_doc_review:NoMultiCall", "--out", str(tmp_path)],
                         capture_output=True, text=True, timeout=120, cwd=Path(__file__).parents[2])
    assert out.returncode == 3, out.stderr  # nothing was measured: "could not measure", not success
    assert "does not handle the multi_call channel this arena needs" in out.stderr
    assert not list(tmp_path.iterdir())  # no run directory: nothing was measured
