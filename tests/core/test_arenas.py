"""The arenas: every spec is self-contained and well-formed; the room arenas' items are balanced and solvable."""

from __future__ import annotations

import json

import pytest

from arena import catalog
from arena_builtins.adapters.vanilla import VanillaAdapter
from arena.checks import CHECKS, validate_checks
from arena.report.columns import Column
from arena_builtins.arenas._rooms.tools import search_rooms

ROOM_ARENAS = ["human_in_the_loop", "durable_state", "approval_gate"]


@pytest.mark.parametrize("name", catalog.arena_names())
def test_every_arena_is_a_complete_spec(name):
    spec = catalog.load_arena(name)
    assert spec.name == name and spec.readme and spec.instructions
    assert len({i.id for i in spec.items}) == len(spec.items) >= 12
    validate_checks(spec)  # every check an item names is the core's or the arena's own, and none is both
    assert all(set(item.checks) <= set(CHECKS) | set(spec.checks) for item in spec.items)
    assert sum(bool(item.resume_with) for item in spec.items) * 4 >= len(spec.items) * 3, "mostly items that pause"
    assert spec.profiles and all(callable(p) for p in spec.policies.values())
    assert set(spec.profile_notes) >= set(spec.profiles), "every profile says what it does"
    # a column of the arena on a server store or across an upgrade reads `<name>@<store>` / `<name>@upgrade` runs
    assert all(isinstance(c, Column) and c.arena.split("@")[0] == name and set(c.profiles) <= set(spec.profiles)
               for c in spec.columns)
    assert set(spec.facts) <= set(spec.profiles)
    assert spec.pause_tools, "an arena must say where a correct run pauses"
    assert set(spec.functions) <= {t.name for t in spec.tools}


def test_names_skip_shared_packages_and_order_is_stable():
    assert "_rooms" not in catalog.arena_names()
    assert [s.name for s in catalog.arenas()] == [*ROOM_ARENAS, "flight_booking", "doc_review", "resume_safety",
                                                  "crash_recovery", "interruptions", "delegation", "run_context",
                                                  "follow_up"]
    assert [c.key for c in catalog.columns()][:3] == ["declared_kind", "measured_kind", "pause_enforced"]


@pytest.mark.parametrize("name", ROOM_ARENAS)
def test_room_items_are_balanced_and_solvable(name):
    spec = catalog.load_arena(name)
    approved = [i for i in spec.items if i.resume_with[0].approved]
    assert len(approved) * 2 == len(spec.items)
    for item in spec.items:
        first = json.loads(search_rooms(item.metadata["capacity"], item.metadata["day"]))["rooms"][0]["room_id"]
        assert first == item.metadata["expected_room"]


@pytest.mark.parametrize("name", ["durable_state", "approval_gate"])
def test_denials_carry_free_text(name):
    denied = [i for i in catalog.load_arena(name).items if not i.resume_with[0].approved]
    assert denied and all(i.resume_with[0].text for i in denied)


@pytest.mark.parametrize("profile", ["reckless", "reckless-parallel"])
def test_vanilla_gates_book_room_against_a_reckless_model(run_adapter, profile):
    results = run_adapter(VanillaAdapter, profile=profile, arena="approval_gate")
    assert [r.status for r in results] == ["passed"] * 12
    for r in results:
        pause = next(e for e in r.trace if e.type == "suspended")
        assert pause.tool == "book_room" and pause.leg == 0
        assert all(e.leg > 0 for e in r.trace if e.type == "tool_call" and e.tool == "book_room")
