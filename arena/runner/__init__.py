"""Runs items through an adapter leg by leg, watches the pauses, and merges everything into one trace.

One concept per module:

- `legs.py`: the leg loop. A leg is one call into the adapter (`start`, or `resume` with the item's
  next decision); each pause is recorded and watched (the decision is held for a short dwell while
  whatever the item still does lands in the trace); decisions are routed to the calls they are for;
  `MAX_RESUMES` caps the cycle so a broken adapter fails loudly instead of looping.
- `director.py`: the one hook an arena owns for its scenario (`ArenaSpec.director`): what happens at
  each pause and after the run. The core's `BaseDirector` does nothing but run the legs.
- `isolation.py`: one item: its own work directory, backend, tool executor, model endpoint and adapter
  instance, in a thread of its own under a timeout; after the last leg the item is watched until it
  goes quiet, then sealed (what arrives later is a late event), then closed.
- `scoring.py`: the checks over the merged trace, the item's status, rescoring after late events.
- `scheduling.py`: the items of a run and their epochs, up to `concurrency` at once; the run's last
  quiet period (`settle`).
- `watch.py`: the dwell and quiet times (`Watch`).

All legs, tool calls and model requests write into one recorder, so the merged trace is a single
ordered log.

Item status: `passed`; `failed` when a check fails, including `completed` when the adapter raised,
crashed, hung or broke the pause protocol (a measured fault of the adapter or its framework); and
`errored` only when the harness could not measure the item (the model endpoint failed).
"""

from __future__ import annotations

from arena.runner.director import BaseDirector, Director, DirectorFactory, Pause, Stage
from arena.runner.isolation import DEFAULT_TIMEOUT_S, AdapterExit, run_isolated
from arena.runner.legs import (MAX_RESUMES, describe, drive, record_pause, record_replayed, record_resume, replay,
                               route, run_and_close)
from arena.runner.processes import leg_pid, survivors_of
from arena.runner.scheduling import run_item, run_items, settle
from arena.runner.scoring import Scored, infrastructure_failure, rescore, score
from arena.runner.watch import PAUSE_DWELL_S, QUIET_MAX_S, QUIET_S, Watch, quiesce

__all__ = [
    "DEFAULT_TIMEOUT_S", "MAX_RESUMES", "PAUSE_DWELL_S", "QUIET_MAX_S", "QUIET_S",
    "AdapterExit", "BaseDirector", "Director", "DirectorFactory", "Pause", "Scored", "Stage", "Watch",
    "describe", "drive", "infrastructure_failure", "leg_pid", "quiesce", "record_pause", "record_replayed",
    "record_resume", "replay",
    "rescore", "route", "run_and_close", "survivors_of",
    "run_item", "run_items", "run_isolated", "score", "settle",
]
