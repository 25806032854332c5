"""The arenas' data: every item is well-formed, balanced, and solvable by the rooms backend."""

from __future__ import annotations

import json

import pytest

import arenas
from adapters.vanilla import VanillaAdapter
from arena.checks import CHECKS
from arena.model import PROFILES
from arena.tools.rooms import search_rooms


@pytest.mark.parametrize("name", arenas.names())
def test_items_are_balanced_and_consistent(name):
    spec = arenas.load(name)
    assert len(spec.items) >= 12
    approved = [i for i in spec.items if i.resume_with[0].approved]
    assert len(approved) * 2 == len(spec.items)
    assert len({i.id for i in spec.items}) == len(spec.items)
    for item in spec.items:
        assert set(item.checks) <= set(CHECKS)
        first = json.loads(search_rooms(item.metadata["capacity"], item.metadata["day"]))["rooms"][0]["room_id"]
        assert first == item.metadata["expected_room"]
    assert set(spec.profiles) <= set(PROFILES)
    assert spec.pause_tools, "an arena must say where a correct run pauses"


@pytest.mark.parametrize("name", ["durable_state", "approval_gate"])
def test_denials_carry_free_text(name):
    denied = [i for i in arenas.load(name).items if not i.resume_with[0].approved]
    assert denied and all(i.resume_with[0].text for i in denied)


@pytest.mark.parametrize("profile", ["reckless", "reckless-parallel"])
def test_vanilla_gates_book_room_against_a_reckless_model(run_adapter, profile):
    results = run_adapter(VanillaAdapter, profile=profile, arena="approval_gate")
    assert [r.status for r in results] == ["passed"] * 12
    for r in results:
        pause = next(e for e in r.trace if e.type == "suspended")
        assert pause.tool == "book_room" and pause.leg == 0
        assert all(e.leg > 0 for e in r.trace if e.type == "tool_call" and e.tool == "book_room")
