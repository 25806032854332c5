"""The reference for crash_recovery: vanilla's tool-calling loop, made durable the way a careful hand-written
loop is in production.

It journals the run to a JSON file in the item's work directory (with `--store`, a row in the item's PostgreSQL
database or a key under its Redis prefix, the same JSON): the transcript after every step, the paused
turn at each pause, the decision with the process that is carrying it out, and every tool's answer by the
model's call id as soon as it returns. Its tools get that call id (`ToolBox.call(..., call_id=)`), an
idempotency key a tool can de-duplicate by. A paused run resumes in any process from the journal alone; a
resume whose process died before the leg ended is recovered by resuming again with the same decision, or by
continuing with the decision the journal holds (`continue_run`): from the latest journaled transcript (or the paused turn, if it died there), each call of the last turn answered
from the journal if it returned, else run again under the same id (the tool answers a repeated id without
acting twice). A second resume of a pause whose leg ended, or that a live
process is carrying out, or with another decision, is refused before anything runs.
"""

from __future__ import annotations

from .adapter import VanillaDurableAdapter
from .store import JOURNAL, Journal

__all__ = ["JOURNAL", "Journal", "VanillaDurableAdapter"]
