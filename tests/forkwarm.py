"""An adapter whose fork server must skip a preload module it cannot import and run its `warm()` once, and
whose forked workers must use their own item's temporary folder although the server asked for its own first
(as crewai does at import)."""

from __future__ import annotations

import os
import tempfile

from arena_builtins.adapters.vanilla import VanillaAdapter

WARMED: dict[str, object] = {}


class WarmedInServer(VanillaAdapter):
    preload = ("tests.forkwarm", "arena_no_such_module_for_tests")

    @staticmethod
    def warm() -> None:
        WARMED["pid"] = os.getpid()
        WARMED["tmp"] = tempfile.gettempdir()  # tempfile keeps what it found first

    async def start(self, ctx):  # type: ignore[no-untyped-def]
        if WARMED.get("pid") in (None, os.getpid()):
            raise RuntimeError(f"not warmed in the fork server: {WARMED}")
        if tempfile.gettempdir() != os.environ["TMPDIR"]:
            raise RuntimeError(f"the server's temporary folder, not the item's: {tempfile.gettempdir()}")
        return await super().start(ctx)
