"""Which processes ran an item's legs, as the harness knows them: the worker it spawned for a leg, and what of an
adapter's closed or killed workers is still alive. Read by the leg loop and by directors alike (its own module, so
that neither imports the other for it)."""

from __future__ import annotations

import os
from typing import Any

from arena.adapter import Adapter


def leg_pid(adapter: Adapter) -> int:
    """The process that ran the leg, as the harness knows it: a worker it spawned, or itself."""
    from arena.worker.client import WorkerAdapter

    if isinstance(adapter, WorkerAdapter) and adapter.leg_pid is not None:
        return adapter.leg_pid
    return os.getpid()


def survivors_of(adapter: Adapter) -> list[dict[str, Any]] | None:
    """What the `resumed` event records as `survivors`: processes of the adapter's closed or killed workers that are
    still alive (the harness's own listing of their process trees); None when there are none, or the adapter runs
    in the harness's process (nothing of its own to list)."""
    from arena.worker.client import WorkerAdapter

    if isinstance(adapter, WorkerAdapter):
        return [p.to_json() for p in adapter.survivors()] or None
    return None
