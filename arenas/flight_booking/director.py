"""flight_booking's director: the world moves on while the human decides.

An item scripts what changes in its airline during which pause (`metadata["during_pause"]`: pause
number -> change, e.g. a fare's new price); the change is applied to the item's sandbox when the
human starts deciding, between tool calls, so that an approval given for the old price is stale.
"""

from __future__ import annotations

from typing import Any

from arena.for_arenas.directing import BaseDirector, Pause, Stage
from arena_builtins.arenas.flight_booking.tools import FlightBackend


class WorldDirector(BaseDirector):
    """Applies the item's scripted change of the world at the pause it is for."""

    def __init__(self, stage: Stage) -> None:
        super().__init__(stage)
        changes = stage.item.metadata.get("during_pause") or {}
        self.changes: dict[int, dict[str, Any]] = {int(k): v for k, v in changes.items()}

    async def deciding(self, pause: Pause) -> None:
        backend = self.stage.backend
        if not isinstance(backend, FlightBackend):
            return
        with self.stage.locked():  # never in the middle of a tool call another thread is making
            change = self.changes.get(pause.number)
            if change:
                backend.sandbox.apply(change)
