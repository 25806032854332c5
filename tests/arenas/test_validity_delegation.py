"""delegation after the decision (`delegate_reported_outcome`), and a `module:Class` adapter's second process.

Each fault of `tests/delegation_faults.py` loses the delegate's part after the decision in its own way and fails
`delegate_reported_outcome` for that reason, while the pause and the decision itself still pass; the references pass
(test_delegation.py). An adapter given as `module:Class` that a worker can import gets a second process for the
items that need one (delegation's durable items, interruptions' hand-offs), as a registered adapter does; one that
a worker cannot import is not measured on them, with the reason, never failed.
"""

from __future__ import annotations

import json
import sys
import types

from arena import catalog, evaluate
from arena.results import CheckResult, ItemResult
from arena_builtins.adapters.vanilla_durable import VanillaDurableAdapter
from tests.delegation_faults import DelegateNeverAnswers, DeskWritesAfterHandoff, DurableAsPlugin, EmptyDelegateAnswer

ARENA = "delegation"
CHECK = "delegate_reported_outcome"


def _run(adapter, items, tmp_path, arena: str = ARENA):
    run = evaluate(arena, [adapter], items=items, out=tmp_path, timeout=60)[0]
    return {r.item_id: r for r in run.results}, run


def _check_of(result: ItemResult, name: str) -> CheckResult:
    return next(c for c in result.checks if c.name == name)


def _only_this_failed(result: ItemResult) -> CheckResult:
    failed = [c.name for c in result.checks if not c.passed]
    assert failed == [CHECK], [c for c in result.checks if not c.passed]
    return _check_of(result, CHECK)


def test_every_item_checks_the_delegates_part_after_the_decision():
    spec = catalog.load_arena(ARENA)
    assert all(CHECK in i.checks for i in spec.items)


def test_a_delegate_whose_model_never_runs_again_after_the_approval_is_caught(tmp_path):
    results, _ = _run(DelegateNeverAnswers, ["del-01"], tmp_path)
    check = _only_this_failed(results["del-01"])
    assert check.reason == ("the booking_agent's model was never sent the result of its book_flight (NEW001, BOOKED) "
                            "(its model never ran again after the decision)")
    # the desk answered with the airline's raw output, which the older checks took as the delegate's answer
    final = next(e for e in results["del-01"].trace if e.type == "final")
    assert final.text.startswith('booking agent: {"charged": 290')
    assert _check_of(results["del-01"], "outer_learned_outcome").passed


def test_a_delegate_answer_that_reaches_the_desk_empty_is_caught(tmp_path):
    results, _ = _run(EmptyDelegateAnswer, ["del-03"], tmp_path)
    check = _only_this_failed(results["del-03"])
    assert check.reason.startswith("the desk's model was not sent the changes_agent's answer ('Done: cancelled FU311")
    assert check.reason.endswith("it was sent ''")
    assert next(e for e in results["del-03"].trace if e.type == "final").text == "changes agent: "


def test_a_desk_that_writes_the_answer_after_an_approved_handoff_is_caught(tmp_path):
    results, _ = _run(DeskWritesAfterHandoff, ["del-06", "del-07"], tmp_path)
    check = _only_this_failed(results["del-06"])
    assert check.reason.startswith("after the handoff the travel_desk, not the booking_agent, wrote the final answer: "
                                   "a model request (answered 'transfer to booking agent:")
    assert results["del-07"].status == "passed"  # denied: the fault leaves it as it is


def test_a_module_class_adapter_gets_a_second_process_for_delegation_and_interruptions(tmp_path):
    """`-a tests.delegation_faults:DurableAsPlugin`: the durable reference as a plugin author would give it; the
    items that need a second process get one (not the false `resumed in the process that paused`)."""
    target = f"{DurableAsPlugin.__module__}:{DurableAsPlugin.__qualname__}"
    assert target == "tests.delegation_faults:DurableAsPlugin"
    results, run = _run(target, ["del-13", "del-14"], tmp_path / "delegation")
    assert "not_measured" not in run.meta
    for r in results.values():
        assert r.status == "passed", [c for c in r.checks if not c.passed]
        assert _check_of(r, "nested_durable").reason.startswith("resumed in a new process")
    results, run = _run(target, ["int-13", "int-25"], tmp_path / "interruptions", arena="interruptions")
    for r in results.values():
        assert r.status == "passed", [c for c in r.checks if not c.passed]
        assert _check_of(r, "handoff_nothing_committed").reason.endswith("(confirmed in a new process)")


class _DefinedHere(VanillaDurableAdapter):
    info = VanillaDurableAdapter.info.model_copy(update={"name": "only_this_process"})


def test_a_module_class_adapter_no_worker_can_import_is_not_measured_on_those_items(tmp_path, monkeypatch):
    """A class of a module only this process has (as of `__main__` or a module made at run time): its items that need
    a second process are not measured, with the reason; the others run."""
    module = types.ModuleType("arena_made_at_run_time")
    cls = type("OnlyHere", (_DefinedHere,), {"__module__": module.__name__})
    module.OnlyHere = cls  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, module.__name__, module)
    results, run = _run(cls, ["del-01", "del-13", "del-14"], tmp_path)
    assert set(results) == {"del-01"} and results["del-01"].status == "passed"
    why = run.meta["not_measured"]
    assert set(why) == {"del-13", "del-14"}
    assert all(w.startswith("arena_made_at_run_time:OnlyHere is given as module:Class and a worker process cannot "
                            "import it (") and "No module named 'arena_made_at_run_time'" in w
               and w.endswith("so it is not measured") for w in why.values())

    def local() -> type:
        class InAFunction(_DefinedHere):
            pass
        return InAFunction

    done = evaluate("interruptions", [local()], items=["int-13", "int-01"], out=tmp_path / "local", timeout=60)
    assert [r.status for r in done[0].results] == ["passed"]  # int-01 ran; int-13 is not measured, not failed
    assert "defined inside a function" in done[0].meta["not_measured"]["int-13"]


def test_a_delegate_reads_an_edited_calls_result_out_of_the_note_that_wraps_it():
    """LangChain's HumanInTheLoopMiddleware sends an edited call's result after a note on the edit: the scripted
    delegate reads the result in it, as a model would (it once read the note as a failure: langgraph del-05)."""
    from arena_builtins.arenas.delegation.policy import careful

    def call(i: str, name: str, args: dict) -> dict:
        return {"id": i, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}

    flights = {"flights": [{"flight": "FU401", "origin": "JFK", "destination": "LAX", "date": "2026-12-05",
                            "depart": "08:30", "arrive": "11:50", "stops": 0, "via": None, "fares": {"main": 334}}]}
    booked = {"charged": 334, "pnr": "NEW001", "status": "BOOKED"}
    note = ("Note: a human reviewer replaced this tool call before it ran. The call recorded in your message is the one "
            "you produced, not the one that executed. Executed instead: book_flight with arguments {}.\n\n"
            f"Tool response:\n{json.dumps(booked)}")
    messages = [
        {"role": "system", "content": "You are the booking agent."},
        {"role": "user", "content": "Book the 8:30 am nonstop from JFK to LAX on 2026-12-05, main fare, for Alex Rivera."},
        {"role": "assistant", "content": None, "tool_calls": [call("c1", "search_flights", {"origin": "JFK"})]},
        {"role": "tool", "tool_call_id": "c1", "content": json.dumps(flights)},
        {"role": "assistant", "content": None, "tool_calls": [call("c2", "book_flight", {"fare": "main"})]},
    ]
    tools = [{"type": "function", "function": {"name": n, "parameters": {}}} for n in ("search_flights", "book_flight")]
    for result, said in ((note, "Done: booked NEW001, FU401"), (json.dumps(booked), "Done: booked NEW001, FU401"),
                         ("ERROR: the airline is down", "did not go through")):
        turn = careful([*messages, {"role": "tool", "tool_call_id": "c2", "content": result}], tools)
        assert said in (turn.content or ""), (result, turn)
