"""What an adapter's framework leaves running after its last leg: the threads the harness waits for.

A framework may leave a thread behind that acts later (books a room 1.5 s after the final answer). What it does
must reach the item's trace however late it comes, so the harness waits for such threads, up to a bound, before it
lets their process go or writes its results:

- in a worker process, the worker's exit waits for the framework's non-daemon threads (as a Python process's
  normal exit does), at most `LEFTOVER_MAX_S`, before it ends; daemon threads end with it, as at any exit;
- in the harness's own process (an in-process adapter), the run's finalisation waits for the threads the adapter
  started (from an item's thread, `arena-item-*`, or from a thread one started) that are still busy, daemon or not
  (they keep running while the harness does), at most `LEFTOVER_MAX_S`. Which thread started which is recorded by
  `attribute()` (where `threading` starts an OS thread, wrapped once in the harness's process), so that what the
  harness itself starts meanwhile (preparing the next cell of a matrix) is never taken for the adapter's.

A thread that only waits for work without a timeout (an idle pool worker, a queue's consumer, an event loop with
nothing scheduled) cannot act on its own and is not waited for; one in a timed wait, asleep or running is.
"""

from __future__ import annotations

import os
import sys
import threading
import time
import weakref
from collections.abc import Iterable
from types import FrameType
from typing import Any

LEFTOVER_MAX_S = 5.0  # how long a process's end, or a run's finalisation, waits for a framework's leftover threads
_POLL_S = 0.02
HARNESS_PREFIX = "arena-"  # the harness's own threads are named so (the server, item threads, the items' pool)


ITEM_PREFIX = "arena-item-"  # an item's thread: the adapter's code runs there (isolation.run_isolated)
_STARTED_BY: weakref.WeakKeyDictionary[threading.Thread, threading.Thread] = weakref.WeakKeyDictionary()
# Where every `Thread.start` (and every subclass's, wrapped or not) ends: the module function that starts the OS
# thread with the Thread's bound `_bootstrap`. Wrapping it, not `Thread.start`, sees a `Timer` whose `start` a
# framework's tracing has wrapped on its own class (strands instruments threading so), and leaves that wrapping alone.
_LAUNCHER = "_start_joinable_thread" if hasattr(threading, "_start_joinable_thread") else "_start_new_thread"
_REAL_LAUNCH = getattr(threading, _LAUNCHER)


def _launch(function: Any, *args: Any, **kwargs: Any) -> Any:
    started = getattr(function, "__self__", None)
    if isinstance(started, threading.Thread):
        _STARTED_BY[started] = threading.current_thread()
    return _REAL_LAUNCH(function, *args, **kwargs)


def attribute() -> None:
    """From now on, remember which thread started each thread (see `started_in`); idempotent."""
    if getattr(threading, _LAUNCHER) is not _launch:
        setattr(threading, _LAUNCHER, _launch)


def started_in(thread: threading.Thread, prefix: str) -> bool:
    """Whether `thread` was started by a thread named `prefix`..., or by one such a thread started (transitively)."""
    seen: set[int] = set()
    parent = _STARTED_BY.get(thread)
    while parent is not None and id(parent) not in seen:
        if parent.name.startswith(prefix):
            return True
        seen.add(id(parent))
        parent = _STARTED_BY.get(parent)
    return False


def snapshot() -> set[threading.Thread]:
    """The threads alive now (what a run that starts now did not start)."""
    return set(threading.enumerate())


def _untimed_wait(frame: FrameType) -> bool:
    """The thread is blocked waiting for someone else, with no timeout: it cannot act on its own."""
    code, where = frame.f_code, os.path.basename(frame.f_code.co_filename)
    if code.co_name == "_worker" and code.co_filename.endswith(os.path.join("concurrent", "futures", "thread.py")):
        return True  # a pool's worker between work items (waiting on its queue)
    if where in ("threading.py", "queue.py", "selectors.py") and code.co_name in ("wait", "get", "select"):
        return frame.f_locals.get("timeout", 0) is None
    return False


def busy(before: Iterable[threading.Thread], daemons: bool = True, started_by: str | None = None
         ) -> list[threading.Thread]:
    """Threads alive now that are not in `before`, not this one, not the harness's own, and not idle (see
    `_untimed_wait`); with `daemons` False, non-daemon threads only; with `started_by`, only those `started_in` it."""
    old = set(before)
    frames = sys._current_frames()
    me = threading.current_thread()
    out = []
    for thread in threading.enumerate():
        if thread in old or thread is me or not thread.is_alive() or thread.name.startswith(HARNESS_PREFIX):
            continue
        if (thread.daemon and not daemons) or (started_by is not None and not started_in(thread, started_by)):
            continue
        frame = frames.get(thread.ident) if thread.ident is not None else None
        if frame is not None and _untimed_wait(frame):
            continue
        out.append(thread)
    return out


def wait_for(before: Iterable[threading.Thread], max_s: float | None = None, daemons: bool = True,
             started_by: str | None = None) -> list[str]:
    """Wait until no thread is `busy` (at most `max_s`, default `LEFTOVER_MAX_S`); return the names of those still
    busy then."""
    old = set(before)
    deadline = time.monotonic() + (LEFTOVER_MAX_S if max_s is None else max_s)
    while (left := busy(old, daemons, started_by)) and time.monotonic() < deadline:
        time.sleep(_POLL_S)
    return [thread.name for thread in left]
