"""The order a concurrent run starts its units in (`arena.runner.scheduling.LongestFirst`)."""

from __future__ import annotations

import asyncio
import threading

from arena import catalog
from arena.runner import run_items
from arena.runner.scheduling import LongestFirst
from arena.types import AdapterInfo, Channel, EvalItem, LegContext, LegResult

HITL = catalog.load_arena("human_in_the_loop")


def test_unmeasured_items_start_in_plan_order_then_the_one_that_took_longest():
    keys = [key for _epoch in range(3) for key in "abcd"]  # epoch by epoch, as run_items plans them
    order = LongestFirst(keys)
    started = [order.pop() for _ in range(5)]
    assert started == [0, 1, 2, 3, 4]  # a b c d, then a's second: nothing measured yet
    order.took("b", 1.0)
    order.took("a", 3.0)
    order.took("c", 2.0)
    order.took("c", 0.5)  # its latest run counts
    rest = [order.pop() for _ in range(7)]
    # d (not measured yet, so perhaps long) first, then a, b, c by their latest time, each item's epochs in order
    assert [(keys[i], i // 4 + 1) for i in rest] == [("d", 2), ("d", 3), ("a", 3), ("b", 2), ("b", 3), ("c", 2), ("c", 3)]


def test_many_units_are_ordered_without_a_scan_per_unit():
    keys = [f"item-{n}" for _epoch in range(20) for n in range(2000)]
    order = LongestFirst(keys)
    for n in range(2000):
        order.took(f"item-{n}", float(n % 7))
    first = [order.pop() for _ in range(len(keys))]
    assert sorted(first) == list(range(len(keys)))  # every unit once
    took = [int(keys[i].split("-")[1]) % 7 for i in first]
    assert took == sorted(took, reverse=True)  # longest first
    assert [keys[i] for i in first[:3]] == ["item-6", "item-13", "item-20"]  # alike ones in plan order


class SlowOrFast:
    """Finishes at once, or after a second for an item whose id starts with "slow"; records its starts."""

    info = AdapterInfo(name="slow_or_fast", framework="arena", channels=(Channel(name="ask", kind="native", mechanism="none"),))
    starts: list[str] = []
    lock = threading.Lock()

    async def start(self, ctx: LegContext) -> LegResult:
        with self.lock:
            self.starts.append(ctx.item.id)
        if ctx.item.id.startswith("slow"):
            await asyncio.sleep(1.0)
        return LegResult.finished("done")

    async def resume(self, state, decision, ctx: LegContext) -> LegResult:  # type: ignore[no-untyped-def]
        raise AssertionError("never suspended")


def test_a_concurrent_run_with_epochs_starts_the_items_that_took_longest_first(server):
    items = [EvalItem(id="fast", input="x", checks=[]), EvalItem(id="slow", input="x", checks=[])]
    SlowOrFast.starts = []
    results = run_items(SlowOrFast, HITL, items, server=server, model="scripted", concurrency=2, epochs=3)
    # in plan order: fast slow fast slow fast slow. Once `fast` has finished, `slow` (still running, not measured)
    # goes first; once it has finished, it is the longer.
    first, rest = SlowOrFast.starts[:2], SlowOrFast.starts[2:]
    assert sorted(first) == ["fast", "slow"]  # both at once
    assert rest == ["slow", "slow", "fast", "fast"]
    # which units ran, and the results' order, are those of the plan
    assert [(r.item_id, r.epoch) for r in results] == [(i, e) for e in (1, 2, 3) for i in ("fast", "slow")]
