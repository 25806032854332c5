"""What an arena's director uses beyond `BaseDirector`: the runner's own steps it may take at a pause (record a pause
or a resume, replay a state, route a decision), which processes ran a leg and which outlived it, a value built once
per process, and a second adapter of its own (`Adapter`)."""

from __future__ import annotations

from arena.adapter import Adapter
from arena.per_process import PerProcess
from arena.runner import (
    BaseDirector,
    Director,
    Pause,
    Stage,
    describe,
    leg_pid,
    record_pause,
    record_replayed,
    record_resume,
    replay,
    route,
    survivors_of,
)
from arena.tools.box import with_call_id
from arena.worker.procs import alive

__all__ = [
    "Adapter", "BaseDirector", "Director", "Pause", "PerProcess", "Stage", "alive", "describe", "leg_pid",
    "record_pause", "record_replayed", "record_resume", "replay", "route", "survivors_of", "with_call_id"
]
