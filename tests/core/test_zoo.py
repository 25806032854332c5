"""The zoo of faulty adapters: every fault fails at least one item, for a reason that names it."""

from __future__ import annotations

import sys
from functools import partial

import pytest

from arena import catalog
from arena.catalog import load_target
from arena.runner import run_items
from arena.runner.watch import Watch
from arena.worker.client import WorkerAdapter
from tests.zoo import FAULTS


@pytest.mark.parametrize("name", list(FAULTS))
def test_each_fault_fails_an_item_for_its_own_reason(name, server):
    fault = FAULTS[name]
    spec = catalog.load_arena(fault.arena)
    items = [i for i in spec.items if i.id in fault.items]
    assert len(items) == len(fault.items)
    cls = load_target(fault.adapter)
    factory = (partial(WorkerAdapter, fault.adapter, cls.info, sys.executable, server, spec.restart_between_legs)
               if fault.worker else cls)
    watch = Watch(dwell_s=fault.dwell_s) if fault.dwell_s is not None else Watch()
    results = run_items(factory, spec, items, server=server, model=fault.profile, timeout_s=fault.timeout_s,
                        watch=watch)
    caught = [(r.item_id, c.reason) for r in results for c in r.checks
              if c.name == fault.check and not c.passed and fault.reason in c.reason and r.status == "failed"]
    assert caught, [(r.item_id, r.status, r.error, [(c.name, c.reason) for c in r.checks if not c.passed])
                    for r in results]


def test_the_reference_adapter_passes_where_the_zoo_is_caught(run_adapter):
    """The same arenas, profiles and items with the correct adapter: nothing is caught."""
    for fault in {(f.arena, f.profile, f.items) for f in FAULTS.values() if f.arena != "durable_state"}:
        arena, profile, items = fault
        results = run_adapter("vanilla", profile=profile, arena=arena, items=items)
        assert [r.status for r in results] == ["passed"] * len(items), (arena, profile, items)
