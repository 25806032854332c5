"""Faulty adapters that start a process and leave it running (issue 51, section 4): whatever a leg starts must end
with its item, and with the harness, however either ends. `$ARENA_TEST_SLEEP` is the child's `sleep` duration, unique
to the test, so the test can find the process (and only its own)."""

from __future__ import annotations

import os
import subprocess
import time

from arena_builtins.adapters.vanilla import VanillaAdapter
from arena.types import LegContext, LegResult


def _sleep() -> subprocess.Popen[bytes]:
    # a session of its own: a process-group kill would miss it
    return subprocess.Popen(["sleep", os.environ.get("ARENA_TEST_SLEEP", "617")], start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


class StartsAChildAndHangs(VanillaAdapter):
    """Starts `sleep $ARENA_TEST_SLEEP` in a session of its own, then hangs (blocking its thread or worker)."""

    info = VanillaAdapter.info.model_copy(update={"name": "starts_a_child_and_hangs"})

    async def start(self, ctx: LegContext) -> LegResult:
        _sleep()
        while True:
            time.sleep(0.05)


class StartsAChildAndFinishes(VanillaAdapter):
    """Starts `sleep $ARENA_TEST_SLEEP` in a session of its own, leaves it running, and plays the item as vanilla."""

    info = VanillaAdapter.info.model_copy(update={"name": "starts_a_child_and_finishes"})

    async def start(self, ctx: LegContext) -> LegResult:
        _sleep()
        return await super().start(ctx)
