"""llama_index decisions: one HumanResponseEvent per decision, keyed by the call it answers (a held call without
one keeps waiting), and a new message sent the same way (adapters/llama_index/decision.py)."""

from __future__ import annotations

import pytest

pytest.importorskip("llama_index.core")
pytest.importorskip("llama_index.llms.litellm")

from arena import catalog  # noqa: E402

NAME = "llama_index"


# --- resume_safety: several held calls ----------------------------------------------------------------
# Each gated call waits under its own waiter id; a call without a decision gets no event and keeps waiting,
# so the run goes idle again and the leg suspends on it.


@pytest.fixture(scope="module")
def hostile(cell):
    return cell(NAME, "resume_safety", "retrying").by_id


def test_a_held_call_without_a_decision_keeps_waiting(hostile):
    r = hostile["rs-fewer"]
    pauses = [(e.leg, e.tool, e.args) for e in r.trace if e.type == "suspended"]
    assert pauses == [(0, "book_room", {"room_id": "R101"}), (1, "book_room", {"room_id": "R202"})]
    books = [(e.leg, e.args["room_id"]) for e in r.trace if e.type == "tool_call" and e.tool == "book_room"]
    assert books == [(1, "R101")]  # the decided call ran, the other did not
    # no decision at all: nothing is sent, the same call is still held
    empty = hostile["rs-empty-one"]
    assert [(e.leg, e.tool) for e in empty.trace if e.type == "suspended"] == [(0, "book_room"), (1, "book_room")]
    assert not [e for e in empty.trace if e.type == "tool_call" and e.tool == "book_room"]


# --- interruptions: a new message at the gate is the waiting call's HumanResponseEvent -------------------------


def test_a_message_at_the_gate_is_the_held_calls_result(server):
    """int-01: R102 waits at the gate and the human types "Actually we are 10 people, not 4." instead of deciding.
    The message is sent as the waiting call's HumanResponseEvent (llama-index's one input for a waiting run): the
    gated body does not run and returns the text as book_room's result, which the model reads as the human's words:
    it searches again and asks for R202, which is approved and booked."""
    from arena.runner import run_items

    spec = catalog.load_arena("interruptions")
    item = spec.item("int-01")
    [r] = run_items(catalog.adapters()[NAME].load(), spec, [item], server=server, model="careful", timeout_s=60)
    checks = {c.name: c for c in r.checks}
    assert checks["pending_call_not_run"].reason.startswith(
        "cancelled: the model was sent a result for book_room{'room_id': 'R102'} without it running: "
        "'Actually we are 10 people, not 4.'")
    assert checks["decision_reached_model"].passed
    assert [(e.leg, (e.args or {}).get("room_id")) for e in r.trace if e.type == "suspended"] == [(0, "R102"), (1, "R202")]
    assert [(e.args or {}).get("room_id") for e in r.trace if e.type == "tool_call" and e.tool == "book_room"] == ["R202"]
    assert r.status == "passed", [c for c in r.checks if not c.passed]
