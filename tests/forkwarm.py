"""An adapter whose fork server must skip a preload module it cannot import and run its `warm()` once."""

from __future__ import annotations

import os

from arena_builtins.adapters.vanilla import VanillaAdapter

WARMED: dict[str, int] = {}


class WarmedInServer(VanillaAdapter):
    preload = ("tests.forkwarm", "arena_no_such_module_for_tests")

    @staticmethod
    def warm() -> None:
        WARMED["pid"] = os.getpid()

    async def start(self, ctx):  # type: ignore[no-untyped-def]
        if WARMED.get("pid") in (None, os.getpid()):
            raise RuntimeError(f"not warmed in the fork server: {WARMED}")
        return await super().start(ctx)
