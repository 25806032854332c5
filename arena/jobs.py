"""A matrix run as several processes of this machine (`arena matrix --jobs N`), reported as one.

Most of a cell's time is waiting (the model, the watched pause, a fork server starting) and what is work
runs under one interpreter lock, so one process keeps less than one core busy (about 0.8 on the matrix: one
more process than cores keeps them busy, bench/README.md). Here N processes run at a time, each
taking every cell of one framework (the adapters of one module: an adapter, its variants and its releases; its
framework imported and its fork servers started once); the frameworks wait in one queue, costliest first by
their cells' expected cost (`cell_cost`), and a slot that ends starts the next. A queue, not N groups split up
front: the expected costs are rough, and a split made before the run left one process running alone for the last
third of the full matrix. For the same reason a slot that ends when the queue is empty starts another process for
the framework with the most cells not yet started, which takes them from the end of its plan while the first
goes on from the start (`Claims`: every cell runs once, in whichever process claims it first), instead of
leaving one process to run them alone at the end. The children's progress reaches the caller's reporter as if
one process ran everything; the run directories are the same as an unsplit run's (each cell is independent of
where it ran).
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from arena.report.matrix import Run
    from arena.results import ItemResult


class Listener(Protocol):
    """What hears the jobs' progress: `arena.Reporter` (this module does not import the evaluation above it)."""

    def say(self, message: str, level: Any = "info") -> None: ...
    def started(self, key: str, label: str, total: int) -> None: ...
    def result(self, key: str, result: ItemResult) -> None: ...
    def finished(self, key: str, outcome: str) -> None: ...


@dataclass
class Outcome:
    """Every job's runs, and what did not run: adapters whose environment failed, cells declined, jobs that failed."""

    runs: list[Run] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)
    declined: dict[str, str] = field(default_factory=dict)


STDERR_TAIL = 1500  # characters of a failed job's stderr shown with its error
HELP_FROM = 2  # cells not yet started for which another process of the framework is worth its start


class Claims:
    """Which of a run's cells a process has started: the processes of one framework (its job, and those started
    to help it when the queue is empty) share its cells, and each runs a cell only if it claims it first (a file
    made exclusively in a folder of the run's)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def _path(self, key: str) -> Path:
        return self.folder / hashlib.sha256(key.encode()).hexdigest()[:32]

    def claim(self, key: str) -> bool:
        """True for the one process that claims `key` first; False for every other, and again."""
        try:
            os.close(os.open(self._path(key), os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        except FileExistsError:
            return False
        return True

    def unclaimed(self, keys: Sequence[str]) -> list[str]:
        return [k for k in keys if not self._path(k).exists()]


def queue(costs: dict[str, float], family: Callable[[str], str] | None = None) -> list[list[str]]:
    """The jobs to run, costliest first (deterministic: equal costs by name): each one adapter, or with `family`
    every adapter of one family (the matrix's: the adapters of one module, a framework's variants and releases,
    whose cells across an upgrade need both), in plan order."""
    kin = family or (lambda name: name)
    members: dict[str, list[str]] = {}
    summed: dict[str, float] = {}
    for name, cost in costs.items():  # plan order within a family
        members.setdefault(kin(name), []).append(name)
        summed[kin(name)] = summed.get(kin(name), 0.0) + cost
    return [members[k] for k in sorted(summed, key=lambda k: (-summed[k], k))]


class Lines:
    """A job's reporter: each event one JSON line on the pipe its parent reads (`arena matrix-job`)."""

    def __init__(self, fd: int) -> None:
        self.stream = os.fdopen(fd, "w", buffering=1, encoding="utf-8")
        self.lock = threading.Lock()

    def send(self, **event: Any) -> None:
        with self.lock:
            self.stream.write(json.dumps(event) + "\n")

    def say(self, message: str, level: str = "info") -> None:
        self.send(ev="say", message=message, level=level)

    def started(self, key: str, label: str, total: int) -> None:
        self.send(ev="started", key=key, label=label, total=total)

    def result(self, key: str, result: ItemResult) -> None:
        self.send(ev="result", key=key, result=result.model_dump(mode="json"))

    def finished(self, key: str, outcome: str) -> None:
        self.send(ev="finished", key=key, outcome=outcome)


def run_jobs(costs: dict[str, float], arenas: Sequence[str], *, jobs: int, out: Path,
             timeout: float, concurrency: int | None, reporter: Listener, total: int, stream: bool = False,
             store_kinds: Sequence[str] = (), family: Callable[[str], str] | None = None,
             cells: dict[str, list[str]] | None = None, stream_releases: bool = False) -> Outcome:
    """Run the matrix of the adapters `costs` names, in plan order (by name, releases as name@version, with their
    cells' expected cost) × `arenas`, a process (`arena matrix-job`) per framework (`queue`), `jobs` at a time;
    forward their progress to `reporter`; return every run. With `cells` (each adapter's cell keys), a slot
    that ends when the queue is empty helps the framework with the most cells not yet started (`Claims`)."""
    from arena.report.matrix import load_run
    from arena.results import ItemResult
    from arena.scratch import prefix

    lock = threading.Lock()
    done = Outcome()
    waiting = [tuple(part) for part in queue(costs, family)]
    slots = jobs if cells else min(jobs, len(waiting))  # with cells, a slot with no job left helps one (`to_help`)
    claims = Claims(Path(tempfile.mkdtemp(prefix=prefix("claims")))) if cells else None
    keys = {part: [k for name in part for k in (cells or {}).get(name, [])] for part in waiting}
    numbers = itertools.count(len(waiting) + 1)  # of the processes started to help
    # frameworks one of whose processes ended: each cell claimed by then, or its job failed (not retried, again and
    # again)
    over: set[tuple[str, ...]] = set()
    reporter.say(f"{slots} jobs at a time over {len(waiting)} frameworks, costliest first: "
                 + " | ".join(", ".join(p) for p in waiting), "info")
    reporter.started("matrix", "matrix (items)", total)
    numbered = list(enumerate(waiting, 1))

    def one(number: int, part: tuple[str, ...], helping: bool = False) -> None:
        read_fd, write_fd = os.pipe()
        request = {"adapters": list(part), "arenas": list(arenas), "out": str(out), "timeout": timeout,
                   "concurrency": concurrency, "fd": write_fd, "stream": stream, "stores": list(store_kinds),
                   "stream_releases": stream_releases,
                   "claims": str(claims.folder) if claims is not None else None, "from_end": helping}
        with tempfile.TemporaryFile() as stderr:
            proc = subprocess.Popen([sys.executable, "-m", "arena", "matrix-job", json.dumps(request)], pass_fds=(write_fd,),
                                    stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=stderr)
            os.close(write_fd)
            ended: dict[str, Any] | None = None
            with os.fdopen(read_fd, encoding="utf-8") as events:
                for line in events:  # read to the end whatever happens, or the job blocks on a full pipe
                    try:
                        event = json.loads(line)
                        kind = event.pop("ev")
                    except (ValueError, KeyError, AttributeError):
                        continue  # not an event: the job's account ("done") decides how it ended
                    with lock:
                        if kind == "say":
                            reporter.say(event["message"], event["level"])
                        elif kind == "started" and event["key"] != "matrix":
                            reporter.started(event["key"], event["label"], event["total"])
                        elif kind == "result":
                            reporter.result(event["key"], ItemResult.model_validate(event["result"]))
                        elif kind == "finished" and event["key"] != "matrix":
                            reporter.finished(event["key"], event["outcome"])
                        elif kind == "done":
                            ended = event
            code = proc.wait()
            stderr.seek(0)
            tail = stderr.read().decode(errors="replace")[-STDERR_TAIL:].strip()
        with lock:
            if ended is None or code != 0:
                why = f"job {number} ({', '.join(part)}) ended with exit code {code}" + (f": {tail}" if tail else "")
                reporter.say(why, "error")
                done.failed[f"job {number}"] = why
            if ended is not None:
                done.runs.extend(load_run(Path(p)) for p in ended["runs"])
                done.failed.update(ended["failed"])
                done.declined.update(ended["declined"])

    def to_help() -> tuple[tuple[str, ...], int] | None:
        """The framework with the most cells not yet started (the queue is empty: each has started), if another
        process is worth starting for it."""
        if claims is None:
            return None
        left = {part: len(claims.unclaimed(k)) for part, k in keys.items() if part not in over}
        part = max(left, key=lambda p: (left[p], p), default=None)
        return (part, left[part]) if part is not None and left[part] >= HELP_FROM else None

    def slot() -> None:
        while True:
            with lock:
                helping = not numbered
                if helping:
                    wanted = to_help()
                    if wanted is None:
                        return
                    part, left = wanted
                    number = next(numbers)
                    reporter.say(f"job {number}: another process for {', '.join(part)}, taking from the end the "
                                 f"{left} cells not started yet", "info")
                else:
                    number, part = numbered.pop(0)
            try:
                one(number, part, helping)
            finally:
                with lock:
                    over.add(part)

    threads = [threading.Thread(target=slot, name=f"arena-jobs-{n}") for n in range(1, slots + 1)]
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        if claims is not None:
            shutil.rmtree(claims.folder, ignore_errors=True)
    reporter.finished("matrix", f"{len(done.runs)} runs")
    return done
