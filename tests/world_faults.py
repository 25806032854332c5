"""Adapters for issue 51's tests of the world's failures (`tests/core/test_world_failures.py`).

- `DurableRaises`: the reference vanilla_durable (its paused state in the item's PostgreSQL database or Redis prefix),
  except that its resume raises: the framework's own failure, on a store server that stays up (`failed`).
"""

from __future__ import annotations

from typing import Any

from arena.types import Decision, DecisionSet, LegContext, LegResult
from arena_builtins.adapters.vanilla_durable import VanillaDurableAdapter


class DurableRaises(VanillaDurableAdapter):
    info = VanillaDurableAdapter.info.model_copy(update={"name": "durable_raises"})

    async def resume(self, state: dict[str, Any], decision: Decision | DecisionSet, ctx: LegContext) -> LegResult:
        raise RuntimeError("the framework's own failure")
