"""The run directory: metadata, per-item results and merged traces, written as items finish.

Each item's result is appended the moment it completes, so a crash loses at most the item in
flight; `meta.json` says whether the run completed. Reading one back keeps everything it holds:
a torn or corrupt line costs only its own item (reported as not measured), and late events that
arrived after the results were written (`late.jsonl`) are folded into their items' scores.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, TypeVar

from arena.checks import CHECKS, Scoring
from arena.errors import warn
from arena.redact import redact
from arena.spec import ArenaSpec
from arena.worker import procs
from arena.results import ItemResult, RunSummary
from arena.types import EvalItem, TraceEvent

T = TypeVar("T")


def git_commit() -> str | None:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5, cwd=Path(__file__).parent
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return (out.stdout.strip() or None) if out.returncode == 0 else None


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def trace_name(item_id: str, epoch: int = 1) -> str:
    """An item's trace file: `<item>.jsonl` for its first epoch (as before epochs existed, so reports and
    their evidence links do not change), `<item>@<k>.jsonl` for epoch k."""
    return f"{item_id}.jsonl" if epoch <= 1 else f"{item_id}@{epoch}.jsonl"


def safe_part(name: str, limit: int = 60) -> str:
    """A name as one harmless piece of a directory name: no separators, no leading dots, no odd characters."""
    cleaned = re.sub(r"[^A-Za-z0-9_.-]+", "_", name).lstrip(".").rstrip("_") or "_"
    return cleaned[:limit]


class RunDir:
    def __init__(self, root: Path, arena: str, adapter: str, model: str, meta: dict[str, Any]):
        self.meta = {**meta, "arena": arena, "adapter": adapter, "model": model, "git_commit": git_commit(),
                     "started_at": _now(), "ended_at": None, "status": "running", "pid": os.getpid(),
                     "pid_start": procs.start_time(os.getpid())}
        self._late_lock = threading.Lock()
        self.last_late = 0.0  # time.monotonic() of the last late event (what the run's last quiet period waits on)
        self._written: dict[tuple[str, int], ItemResult] = {}  # the result whose trace is on disk, per item and epoch
        self.path = self._create(root, "-".join(safe_part(p) for p in (arena, adapter, model)))
        _OPEN.add(self)

    def _create(self, root: Path, base: str) -> Path:
        """The run directory appears whole (meta.json, an empty results.jsonl, traces/) or not at all: it is
        built under a hidden name and renamed into place, so a run killed at any moment never leaves a
        directory that readers (the matrix, --resume) would take for a run without its meta.json."""
        root.mkdir(parents=True, exist_ok=True)
        stamp = time.strftime("%Y%m%d-%H%M%S")
        staged = Path(tempfile.mkdtemp(prefix=f".{stamp}-{base}-", suffix=".staged", dir=root))
        (staged / "traces").mkdir()
        (staged / "results.jsonl").touch()
        self.path = staged
        self._write_meta()
        for _ in range(20):  # two runs starting in the same second get different names
            final = root / f"{stamp}-{base}-{secrets.token_hex(2)}"
            try:  # a rename never replaces a run directory: a directory that exists is not empty
                staged.rename(final)
                return final
            except OSError:
                continue
        shutil.rmtree(staged, ignore_errors=True)
        raise FileExistsError(f"no free run directory name under {root}")

    @classmethod
    def reopen(cls, path: Path) -> tuple[RunDir, list[ItemResult]]:
        """An interrupted run directory, opened to complete it: (it, the results it already holds).

        A result torn by the interruption (its line, or a line of its trace) is dropped: its item runs again;
        the rest stay."""
        run = cls.__new__(cls)
        run.path = path
        run.meta = json.loads((path / "meta.json").read_text())
        done = []
        for result in _whole(read_jsonl(path / "results.jsonl", ItemResult.model_validate_json))[0]:
            result.trace, torn = read_trace(path, result)
            if not torn:
                done.append(result)
        tmp = path / "results.jsonl.tmp"
        tmp.write_text(redact("".join(r.model_dump_json(exclude={"trace"}) + "\n" for r in done)))
        tmp.replace(path / "results.jsonl")
        run.meta.update(status="running", ended_at=None, pid=os.getpid(), pid_start=procs.start_time(os.getpid()),
                        resumed=[*run.meta.get("resumed", []), _now()])
        run.meta.pop("interrupted_by", None)
        run._late_lock = threading.Lock()
        run.last_late = 0.0
        run._written = {(r.item_id, r.epoch): r for r in done}
        run._write_meta()
        _OPEN.add(run)
        return run, done

    def _write_meta(self) -> None:
        tmp = self.path / "meta.json.tmp"
        tmp.write_text(redact(json.dumps(self.meta, indent=2)) + "\n")
        tmp.replace(self.path / "meta.json")

    def _write_trace(self, result: ItemResult) -> None:
        name = trace_name(result.item_id, result.epoch)
        tmp = self.path / "traces" / f"{name}.tmp"
        tmp.write_text(redact("".join(event.model_dump_json() + "\n" for event in result.trace)))
        tmp.replace(self.path / "traces" / name)

    def add(self, result: ItemResult) -> None:
        self._write_trace(result)
        self._written[(result.item_id, result.epoch)] = result
        with (self.path / "results.jsonl").open("a") as f:
            f.write(redact(result.model_dump_json(exclude={"trace"})) + "\n")

    def add_late(self, item_id: str, event: TraceEvent, epoch: int = 1) -> None:
        """An event that arrived after its item was sealed: appended at once to late.jsonl."""
        which = {"item_id": item_id, **({"epoch": epoch} if epoch > 1 else {})}
        with self._late_lock, (self.path / "late.jsonl").open("a") as f:
            f.write(redact(json.dumps({**which, **event.model_dump(mode="json", exclude_none=True)})) + "\n")
            self.last_late = time.monotonic()

    def finish(self, summary: RunSummary, results: list[ItemResult] | None = None) -> None:
        """Mark the run complete; results rescored after late events replace what was written for them (a result
        is rescored into a new object: the trace of the very result `add` wrote is not written again)."""
        if results is not None:
            for result in results:
                if self._written.get((result.item_id, result.epoch)) is not result:
                    self._write_trace(result)
            tmp = self.path / "results.jsonl.tmp"
            tmp.write_text(redact("".join(r.model_dump_json(exclude={"trace"}) + "\n" for r in results)))
            tmp.replace(self.path / "results.jsonl")
        (self.path / "summary.json").write_text(redact(summary.model_dump_json(indent=2)) + "\n")
        self.meta.update(ended_at=_now(), status="complete")
        self._write_meta()
        _OPEN.discard(self)

    def interrupt(self, why: str) -> None:
        """The run was stopped before it completed (a signal): say so, with when and why."""
        self.meta.update(ended_at=_now(), status="interrupted", interrupted_by=why)
        self._write_meta()
        _OPEN.discard(self)


_OPEN: set[RunDir] = set()  # run directories of this process not yet complete


def interrupt_open_runs(why: str) -> list[Path]:
    """Mark every run directory this process still has open as interrupted; return their paths."""
    runs = list(_OPEN)
    for run in runs:
        try:
            run.interrupt(why)
        except OSError:
            pass
    return [r.path for r in runs]


def status_of(meta: dict[str, Any]) -> str:
    """A run's status as readers should show it: a "running" run whose process is gone was interrupted."""
    status = str(meta.get("status") or "unknown")
    if status == "running":
        pid = meta.get("pid")
        if not isinstance(pid, int) or not alive(pid, meta.get("pid_start")):
            return "interrupted"
    return status


def alive(pid: int, started: Any = None) -> bool:
    """The process that wrote the run is still running: not gone, not a zombie, not a new process with its pid."""
    if not Path("/proc").is_dir():  # no /proc here: ask the kernel
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True
    return procs.alive(pid) and (not isinstance(started, int) or procs.start_time(pid) == started)


Warn = Callable[[str], None]
LATE_CHECK = "nothing_after_final"  # what late events are judged by (it reads the trace alone)
# what `nothing_after_final` is judged with where the item's arena is not at hand: it reads neither
_NO_ARENA = ArenaSpec(name="", description="", instructions="", tools=[], functions={}, items=[])


@dataclass(frozen=True)
class Torn:
    """A line of a JSON-lines file that does not read back: its number (from 1) and its text."""

    number: int
    text: str


def read_jsonl(path: Path, parse: Callable[[str], T]) -> list[T | Torn]:
    """Every line of a JSON-lines file in order, parsed, or `Torn` when it does not parse (a write cut short
    by kill -9, a file damaged since): one bad line never costs the others."""
    out: list[T | Torn] = []
    for number, raw in enumerate(path.read_bytes().split(b"\n"), 1):
        if not raw.strip():
            continue
        try:
            out.append(parse(raw.decode()))
        except (ValueError, TypeError):  # not UTF-8, not JSON, not the model (pydantic's errors are ValueErrors)
            out.append(Torn(number, raw.decode(errors="replace")))
    return out


def _whole(entries: list[T | Torn]) -> tuple[list[T], list[Torn]]:
    return [e for e in entries if not isinstance(e, Torn)], [e for e in entries if isinstance(e, Torn)]


def _torn(torn: list[Torn]) -> str:
    """"line 12 is torn or corrupt (+1 more)"."""
    return f"line {torn[0].number} is torn or corrupt" + (f" (+{len(torn) - 1} more)" if len(torn) > 1 else "")


_ITEM_ID = re.compile(r'"item_id"\s*:\s*("(?:[^"\\]|\\.)*")')
_EPOCH = re.compile(r'"epoch"\s*:\s*(\d+)')


def _whose(line: Torn) -> tuple[str, int] | None:
    """The item (and epoch) a torn line was about, when enough of it is left to tell."""
    found = _ITEM_ID.search(line.text)
    try:
        item_id = json.loads(found.group(1)) if found is not None else None
    except ValueError:  # an escape cut in half
        return None
    epoch = _EPOCH.search(line.text)
    return (item_id, int(epoch.group(1)) if epoch else 1) if item_id else None


def _not_measured(result: ItemResult, why: str) -> ItemResult:
    """A damaged item: kept with what could be read, as one the harness could not measure."""
    return result.model_copy(update={"status": "errored", "error": "; ".join(filter(None, [why, result.error]))})


def read_trace(run_dir: Path, result: ItemResult) -> tuple[list[TraceEvent], list[Torn]]:
    """An item's merged trace as written (none when its file is missing), and its torn lines."""
    source = run_dir / "traces" / trace_name(result.item_id, result.epoch)
    return _whole(read_jsonl(source, TraceEvent.model_validate_json)) if source.exists() else ([], [])


def _late_line(text: str) -> tuple[tuple[str, int], TraceEvent]:
    """A line of late.jsonl: (item id, epoch) and the event."""
    data = json.loads(text)
    if not isinstance(data, dict) or not isinstance(data.get("item_id"), str):
        raise ValueError("not a late event of an item")
    epoch = data.pop("epoch", 1)
    return (data.pop("item_id"), epoch if isinstance(epoch, int) else 1), TraceEvent.model_validate(data)


def with_late(result: ItemResult, late: Iterable[TraceEvent], arena: ArenaSpec | None = None) -> ItemResult:
    """The result with the late events its trace lacks appended (flagged `late`) and `nothing_after_final`
    judged again over them: a passed item that now fails it is failed. Every other check stays as stored;
    an item without that check (its arena's `universal` leaves it out) only gains the events."""
    have = {(e.seq, e.ts) for e in result.trace}
    new = sorted((e for e in late if (e.seq, e.ts) not in have), key=lambda e: e.seq)
    if not new:
        return result
    trace = [*result.trace, *(e.model_copy(update={"late": True}) for e in new)]
    if not any(c.name == LATE_CHECK for c in result.checks):
        return result.model_copy(update={"trace": trace})
    item = next((i for i in arena.items if i.id == result.item_id), None) if arena is not None else None
    judged = CHECKS[LATE_CHECK](Scoring(item=item or EvalItem(id=result.item_id, input=""), trace=trace,
                                        arena=arena or _NO_ARENA))
    checks = [judged if c.name == LATE_CHECK else c for c in result.checks]
    status = "failed" if result.status == "passed" and not judged.passed else result.status
    return result.model_copy(update={"trace": trace, "checks": checks, "status": status})


def fold_late(run_dir: Path, results: list[ItemResult], arena: ArenaSpec | None = None,
              on_damage: Warn = warn) -> list[ItemResult]:
    """The results with the run directory's `late.jsonl` folded in (`with_late`), each item and epoch its
    own events. A torn line there makes the item it names not measured (one warning for the file)."""
    source = run_dir / "late.jsonl"
    if not source.exists():
        return results
    events, torn = _whole(read_jsonl(source, _late_line))
    late: dict[tuple[str, int], list[TraceEvent]] = {}
    for key, event in events:
        late.setdefault(key, []).append(event)
    damaged: dict[tuple[str, int] | None, list[Torn]] = {}
    for line in torn:
        damaged.setdefault(_whose(line), []).append(line)
    out = []
    for result in results:
        key = (result.item_id, result.epoch)
        result = with_late(result, late.get(key, ()), arena)
        out.append(_not_measured(result, "late.jsonl " + _torn(damaged[key])) if key in damaged else result)
    if torn:
        named = any(key is not None for key in damaged)
        on_damage(f"{source}: {_torn(torn)}"
                  + ("; the item it names is reported as not measured" if named else "; it names no item"))
    return out


def _torn_result(line: Torn) -> ItemResult:
    """A torn line of results.jsonl as its item (when the line still names it, else as the line), not measured."""
    item_id, epoch = _whose(line) or (f"results.jsonl line {line.number}", 1)
    return ItemResult(item_id=item_id, epoch=epoch, status="errored", error="results.jsonl " + _torn([line]))


def load_results(run_dir: Path, on_damage: Warn = warn) -> list[ItemResult]:
    """Read a run directory back: results with their traces re-attached and `late.jsonl` folded in.

    A torn or corrupt line (kill -9 mid-write) costs only its item, reported as not measured (`errored`,
    its `error` naming the file and line), with one warning line per damaged file; every whole line is kept.
    """
    source = run_dir / "results.jsonl"
    entries = read_jsonl(source, ItemResult.model_validate_json)
    results = [_torn_result(e) if isinstance(e, Torn) else e for e in entries]
    torn = [e for e in entries if isinstance(e, Torn)]
    if torn:
        on_damage(f"{source}: {_torn(torn)}; its item is reported as not measured")
    for n, result in enumerate(results):
        trace, bad = read_trace(run_dir, result)
        result.trace = trace
        if bad:
            name = f"traces/{trace_name(result.item_id, result.epoch)}"
            results[n] = _not_measured(result, f"{name} {_torn(bad)}")
            on_damage(f"{run_dir / name}: {_torn(bad)}; its item is reported as not measured")
    return fold_late(run_dir, results, on_damage=on_damage)
