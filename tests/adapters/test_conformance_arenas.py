"""Conformance over every arena: the adapter × channel × arena table, generated from each adapter's declared
channels and each arena's needs, and every pair of it held to what was measured.

The table (`TABLE`) is not written by hand: for each built-in adapter and each of the arenas, what the arena needs of
an adapter (its `needs`, and the channels it reads per item), how the adapter declares each, and what follows from
the declarations alone: the arena declines the adapter (with the reason), or runs it on its items but those it
cannot measure (each with the reason).

Held to what was measured, twice:
- the committed verdict record (reports/verdicts/, made by the full matrix, which CI runs again and compares) runs
  each pair exactly as the table says: no run of a declined pair; every item of a run pair either in the run or
  named not measured, and every item the table cannot measure among those;
- each pair the record runs, in all nine arenas, runs here too on one item (its first measured one that needs no
  second process where there is one, plain, with the arena's default profile) and that item ends as the record says,
  check by check (test_conformance.py runs the pairs of its CELLS whole, so they are not run again here). With
  ARENA_FULL_MATRIX set (CI), the session's full matrix runs every item of every pair and compares it with the same
  record (tests/report/test_findings_committed.py), so these one-item runs are left to a suite without it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from arena import catalog, evaluate
from arena.report.verdicts import compare, read_verdicts, records
from tests.adapters.test_conformance import CELLS

ROOT = Path(__file__).resolve().parents[2]
RECORD = read_verdicts(ROOT / "reports" / "verdicts")
# channels an arena reads per item, beyond its `needs` (what its `unmeasured` asks of an adapter)
PER_ITEM = {"delegation": ("tool_gate", "nested", "handoff", "multi_nested"),
            "interruptions": ("message", "always", "input"),
            "crash_recovery": ("recover",)}


@dataclass(frozen=True)
class Pairing:
    """One adapter × arena: the channels the arena reads and how the adapter declares each ("-": not listed), and
    what follows: `declined` (why), or the items it runs (`measured`) and those it cannot (`not_measured`, why)."""

    adapter: str
    arena: str
    channels: dict[str, str]
    declined: str | None = None
    measured: tuple[str, ...] = ()
    not_measured: dict[str, str] = field(default_factory=dict)

    @property
    def id(self) -> str:
        return f"{self.adapter}-{self.arena}"


def pairing(adapter: str, arena: str) -> Pairing:
    info = catalog.adapters()[adapter].load().info
    spec = catalog.load_arena(arena)
    read = dict.fromkeys((*spec.needs, *PER_ITEM.get(arena, ())))
    channels = {name: info.kind(name) if info.channel(name) is not None else "-" for name in read}
    why = spec.declined(info)
    if why is not None:
        return Pairing(adapter, arena, channels, declined=why)
    items, not_measured = spec.items_for(info, list(spec.items))
    if not items:  # as a run does: nothing to measure declines it
        return Pairing(adapter, arena, channels, declined="none of the items can be measured: "
                       + "; ".join(sorted(set(not_measured.values()))), not_measured=not_measured)
    return Pairing(adapter, arena, channels, measured=tuple(i.id for i in items), not_measured=not_measured)


TABLE = [pairing(adapter, arena) for adapter in catalog.adapters() if not catalog.adapters()[adapter].plugin
         for arena in catalog.arena_names()]


def _runs(pair: Pairing) -> dict[str, dict[str, Any]]:
    """The record's plain runs of the pair (one per profile), by profile."""
    runs = RECORD[pair.arena]["runs"]
    return {key.split(" × ", 1)[1]: run for key, run in runs.items() if key.split(" × ", 1)[0] == pair.adapter}


def test_the_table_is_generated_for_every_adapter_and_all_eleven_arenas():
    arenas = catalog.arena_names()
    assert len(arenas) == 11 and all(a in RECORD for a in arenas)
    assert {p.arena for p in TABLE} == set(arenas)
    assert len(TABLE) == len(arenas) * len({p.adapter for p in TABLE}) >= 11 * 16
    # the table reads the declarations: a pair declined or cut down names the reason, and each says something
    assert all(p.declined.strip() for p in TABLE if p.declined is not None)
    assert all(why.strip() for p in TABLE for why in p.not_measured.values())
    assert any(p.declined for p in TABLE) and any(p.not_measured for p in TABLE)
    assert {p.channels.get("multi_call") for p in TABLE if p.arena == "doc_review"} >= {"native", "-"}


@pytest.mark.parametrize("pair", TABLE, ids=lambda p: p.id)
def test_the_record_runs_each_pair_as_the_table_says(pair):
    runs = _runs(pair)
    if pair.declined is not None:
        assert not runs, f"{pair.arena} declines {pair.adapter} ({pair.declined}), yet the record has {list(runs)}"
        return
    assert runs, f"{pair.adapter} × {pair.arena} runs by the declarations, but the record has no run of it"
    every = {i.id for i in catalog.load_arena(pair.arena).items}
    for profile, run in runs.items():
        unmeasured = set(run.get("not_measured") or {})
        assert set(run["items"]) | unmeasured == every, profile
        assert set(pair.not_measured) <= unmeasured, (profile, sorted(set(pair.not_measured) - unmeasured))


RUN_HERE = [p for p in TABLE if p.declined is None and not any(key[:2] == (p.adapter, p.arena) for key in CELLS)]


@pytest.mark.parametrize("pair", RUN_HERE, ids=lambda p: p.id)
def test_one_item_of_each_pair_ends_as_the_record_says(pair, tmp_path):
    if os.environ.get("ARENA_FULL_MATRIX"):
        pytest.skip("this session's full matrix runs every item of every pair and compares it with the record")
    entry = catalog.adapters()[pair.adapter]
    if not entry.available:
        pytest.skip(f"{entry.framework} is not installed")
    spec = catalog.load_arena(pair.arena)
    profile = spec.profiles[0]
    run = _runs(pair)[profile]
    recorded = [i for i in spec.items if i.id in pair.measured and i.id in run["items"]]
    item = next((i for i in recorded if spec.second_process is None or not spec.second_process(i)), recorded[0]).id
    evaluation = evaluate(pair.arena, [pair.adapter], model=profile, items=[item], out=tmp_path)
    assert len(evaluation) == 1, (evaluation.failed, evaluation.declined)
    key = f"{pair.adapter} × {profile}"
    expected = {pair.arena: {"runs": {key: {"framework": run["framework"], "status": run["status"],
                                            "items": {item: run["items"][item]}}}}}
    fresh = records(evaluation)
    for record in fresh.values():
        for measured in record["runs"].values():
            measured.pop("not_measured", None)  # what one item's run leaves out is not the arena's
    assert compare(expected, fresh) == []


def test_the_record_check_sees_a_pair_run_against_the_declarations():
    """Not vacuous: a pair the declarations decline that the record runs, and an item the declarations cannot
    measure that the record measured, are each caught."""
    hitl = next(p for p in TABLE if (p.adapter, p.arena) == ("vanilla", "human_in_the_loop"))
    with pytest.raises(AssertionError, match="declines vanilla"):
        test_the_record_runs_each_pair_as_the_table_says(Pairing("vanilla", "human_in_the_loop", {}, declined="no"))
    with pytest.raises(AssertionError, match="hitl-01"):
        test_the_record_runs_each_pair_as_the_table_says(Pairing(
            "vanilla", "human_in_the_loop", {}, measured=hitl.measured[1:], not_measured={"hitl-01": "crafted"}))
