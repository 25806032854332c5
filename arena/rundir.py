"""The run directory: metadata, per-item results and merged traces, written as items finish.

Each item's result is appended the moment it completes, so a crash loses at most the item in
flight; `meta.json` says whether the run completed. Reading one back keeps everything it holds:
a torn or corrupt line costs only its own item (reported as not measured), and late events that
arrived after the results were written (`late.jsonl`) are folded into their items' scores.
"""

from __future__ import annotations

import errno
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

from arena.run_meta import SCHEMA_VERSION, checked
from arena.checks import CHECKS, Scoring
from arena.errors import ArenaError, InvalidValue, warn
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


class CannotWrite(ArenaError):
    """The run directory could not be written (a full disk, a quota, a folder gone read-only): the run stops.

    Nothing half-written is left behind (a temporary file, a hidden staged directory, a torn result line);
    what was written before stays, so `arena run --resume` completes the run once the cause is gone."""

    def __init__(self, path: Path, exc: OSError, creating: bool = False):
        self.path = path  # the run directory, or where it was being created
        self.reason = exc.strerror or str(exc)
        self.out_of_space = exc.errno in (errno.ENOSPC, errno.EDQUOT)
        what = f"cannot create a run directory under {path}" if creating else f"cannot write the run directory {path}"
        super().__init__(f"{what}: {self.reason}")


def _unlink(path: Path) -> None:
    try:
        path.unlink(missing_ok=True)
    except OSError:
        pass


def _replace(path: Path, text: str) -> None:
    """Write a file whole or not at all: through `<name>.tmp`, which does not outlive a failed write."""
    tmp = path.with_name(path.name + ".tmp")
    try:
        tmp.write_text(text)
        tmp.replace(path)
    except OSError:
        _unlink(tmp)
        raise


def _append(path: Path, data: bytes) -> None:
    """Append whole lines or nothing: a write cut short (a full disk) is cut off again."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        size = os.fstat(fd).st_size
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
        except OSError:
            try:
                os.ftruncate(fd, size)
            except OSError:
                pass
            raise
    finally:
        os.close(fd)


def _overwrite(path: Path, data: bytes) -> None:
    """Rewrite a small existing file in place, where it holds its space already (meta.json on a full disk, where
    no new file can be made); a write that fails puts the old content back."""
    with path.open("r+b", buffering=0) as f:
        old = f.read()
        try:
            f.seek(0)
            view = memoryview(data)
            while view:
                view = view[f.write(view) or 0:]
            f.truncate(len(data))
        except OSError:
            f.seek(0)
            f.write(old)
            f.truncate(len(old))
            raise


class RunDir:
    def __init__(self, root: Path, arena: str, adapter: str, model: str, meta: dict[str, Any]):
        # a key meta.json does not know is refused here, before anything is written (arena/run_meta.py)
        self.meta = checked({"schema_version": SCHEMA_VERSION, **meta, "arena": arena, "adapter": adapter,
                             "model": model, "git_commit": git_commit(), "started_at": _now(), "ended_at": None,
                             "status": "running", "pid": os.getpid(), "pid_start": procs.start_time(os.getpid())})
        self._late_lock = threading.Lock()
        self.last_late = 0.0  # time.monotonic() of the last late event (what the run's last quiet period waits on)
        self._written: dict[tuple[str, int], ItemResult] = {}  # the result whose trace is on disk, per item and epoch
        self._lost: CannotWrite | None = None  # a late event that could not be written (raised by add/finish)
        self.path = self._create(root, "-".join(safe_part(p) for p in (arena, adapter, model)))
        _OPEN.add(self)

    def _create(self, root: Path, base: str) -> Path:
        """The run directory appears whole (meta.json, an empty results.jsonl, traces/) or not at all: it is
        built under a hidden name and renamed into place, so a run killed at any moment never leaves a
        directory that readers (the matrix, --resume) would take for a run without its meta.json. One that
        cannot be written (a full disk) leaves nothing: CannotWrite, naming `root`."""
        stamp = time.strftime("%Y%m%d-%H%M%S")
        staged: Path | None = None
        try:
            root.mkdir(parents=True, exist_ok=True)
            staged = Path(tempfile.mkdtemp(prefix=f".{stamp}-{base}-", suffix=".staged", dir=root))
            (staged / "traces").mkdir()
            (staged / "results.jsonl").touch()
            self.path = staged
            self._write_meta()
        except OSError as exc:
            if staged is not None:
                shutil.rmtree(staged, ignore_errors=True)
            raise CannotWrite(root, exc, creating=True) from None
        for _ in range(20):  # two runs starting in the same second get different names
            final = root / f"{stamp}-{base}-{secrets.token_hex(2)}"
            try:  # a rename never replaces a run directory: a directory that exists is not empty
                staged.rename(final)
                return final
            except OSError:
                continue
        shutil.rmtree(staged, ignore_errors=True)
        raise CannotWrite(root, FileExistsError(errno.EEXIST, "no free run directory name"), creating=True)

    @classmethod
    def reopen(cls, path: Path) -> tuple[RunDir, list[ItemResult]]:
        """An interrupted run directory, opened to complete it: (it, the results it already holds).

        A result torn by the interruption (its line, or a line of its trace) is dropped: its item runs again;
        the rest stay."""
        run = cls.__new__(cls)
        run.path = path
        run.meta = json.loads((path / "meta.json").read_text())
        done, _ = _readable(path, set_aside=True)
        try:
            _replace(path / "results.jsonl", redact("".join(r.model_dump_json(exclude={"trace"}) + "\n" for r in done)))
            _keep_late_of(path, {(r.item_id, r.epoch) for r in done})
        except OSError as exc:
            raise CannotWrite(path, exc) from None
        run.meta.update(status="running", ended_at=None, pid=os.getpid(), pid_start=procs.start_time(os.getpid()),
                        resumed=[*run.meta.get("resumed", []), _now()])
        run.meta.pop("interrupted_by", None)
        run._late_lock = threading.Lock()
        run.last_late = 0.0
        run._written = {(r.item_id, r.epoch): r for r in done}
        run._lost = None
        run._write_meta()
        _OPEN.add(run)
        return run, done

    def _write_meta(self) -> None:
        """meta.json, replaced whole; on a full disk (no room for a new file) rewritten in place, so that a run
        stopped by it can still say it was interrupted."""
        text = redact(json.dumps(checked(self.meta), indent=2)) + "\n"
        target = self.path / "meta.json"
        try:
            _replace(target, text)
        except OSError as exc:
            if exc.errno not in (errno.ENOSPC, errno.EDQUOT) or not target.is_file():
                raise
            _overwrite(target, text.encode())

    def _write_trace(self, result: ItemResult) -> None:
        name = trace_name(result.item_id, result.epoch)
        _replace(self.path / "traces" / name, redact("".join(event.model_dump_json() + "\n" for event in result.trace)))

    def add(self, result: ItemResult) -> None:
        """An item's result as it ends: its trace, then its line of results.jsonl. CannotWrite when the directory
        cannot take them (nothing half-written is left: the item runs again with --resume)."""
        try:
            if self._lost is not None:
                raise self._lost
            self._write_trace(result)
            self._written[(result.item_id, result.epoch)] = result
            _append(self.path / "results.jsonl", (redact(result.model_dump_json(exclude={"trace"})) + "\n").encode())
        except OSError as exc:
            raise CannotWrite(self.path, exc) from None

    def add_late(self, item_id: str, event: TraceEvent, epoch: int = 1) -> None:
        """An event that arrived after its item was sealed: appended at once to late.jsonl. One that cannot be
        written (called from any thread) is kept as the run's CannotWrite, raised by the next `add` or `finish`."""
        which = {"item_id": item_id, **({"epoch": epoch} if epoch > 1 else {})}
        line = redact(json.dumps({**which, **event.model_dump(mode="json", exclude_none=True)})) + "\n"
        with self._late_lock:
            try:
                _append(self.path / "late.jsonl", line.encode())
            except OSError as exc:
                self._lost = self._lost or CannotWrite(self.path, exc)
            self.last_late = time.monotonic()

    def finish(self, summary: RunSummary, results: list[ItemResult] | None = None) -> None:
        """Mark the run complete; results rescored after late events replace what was written for them (a result
        is rescored into a new object: the trace of the very result `add` wrote is not written again)."""
        try:
            if self._lost is not None:
                raise self._lost
            if results is not None:
                for result in results:
                    if self._written.get((result.item_id, result.epoch)) is not result:
                        self._write_trace(result)
                _replace(self.path / "results.jsonl",
                         redact("".join(r.model_dump_json(exclude={"trace"}) + "\n" for r in results)))
            _replace(self.path / "summary.json", redact(summary.model_dump_json(indent=2)) + "\n")
            self.meta.update(ended_at=_now(), status="complete")
            self._write_meta()
        except OSError as exc:
            self.meta.update(ended_at=None, status="running")
            raise CannotWrite(self.path, exc) from None
        _OPEN.discard(self)

    def interrupt(self, why: str) -> None:
        """The run was stopped before it completed (a signal): say so, with when and why."""
        self.meta.update(ended_at=_now(), status="interrupted", interrupted_by=why)
        self._write_meta()
        _OPEN.discard(self)


_OPEN: set[RunDir] = set()  # run directories of this process not yet complete


def interrupt_open_runs(why: str) -> list[Path]:
    """Mark every run directory this process still has open as interrupted; return their paths."""
    marked, unmarked = mark_open_runs_interrupted(why)
    return [*marked, *unmarked]


def mark_open_runs_interrupted(why: str) -> tuple[list[Path], list[Path]]:
    """Mark every run directory this process still has open as interrupted: (those marked, those whose meta.json
    could not be written: it still says `running`, which readers take for interrupted once this process is gone)."""
    marked, unmarked = [], []
    for run in list(_OPEN):
        try:
            run.interrupt(why)
            marked.append(run.path)
        except OSError:
            _OPEN.discard(run)
            unmarked.append(run.path)
    return marked, unmarked


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


def _trace_of(run_dir: Path, result: ItemResult) -> tuple[list[TraceEvent], str | None]:
    """An item's trace as `read_trace` reads it, and what is wrong with its file, if anything: torn lines, or a
    file that cannot be read at all (a directory in its place, no permission): then no event is read."""
    try:
        trace, torn = read_trace(run_dir, result)
    except OSError as exc:
        return [], f"cannot be read ({exc.strerror or type(exc).__name__})"
    return trace, _torn(torn) if torn else None


def _expected(run_dir: Path) -> list[tuple[str, int]]:
    """The (item, epoch) pairs a complete run holds a result for, as its meta.json lists them (none for a run
    not complete, or from before meta.json listed its items)."""
    try:
        meta = json.loads((run_dir / "meta.json").read_text())
    except (OSError, ValueError):
        return []
    if not isinstance(meta, dict) or meta.get("status") != "complete" or not isinstance(meta.get("items"), list):
        return []
    epochs: int = meta["epochs"] if isinstance(meta.get("epochs"), int) and meta["epochs"] > 0 else 1
    return [(i, e) for e in range(1, epochs + 1) for i in meta["items"] if isinstance(i, str)]


def _label(key: tuple[str, int]) -> str:
    return key[0] if key[1] <= 1 else f"{key[0]}@{key[1]}"


def _readable(run_dir: Path, set_aside: bool = False) -> tuple[list[ItemResult], dict[tuple[str, int], str]]:
    """The results of a run directory that read back whole (their line, every line of their trace, every line of
    late.jsonl that names them), traces attached; and, per (item, epoch) that does not, why. With `set_aside`, a
    trace path that is not a readable file (a directory) is renamed aside, so the item's trace can be written again."""
    late_torn: dict[tuple[str, int], list[Torn]] = {}
    if (run_dir / "late.jsonl").exists():
        for line in _whole(read_jsonl(run_dir / "late.jsonl", _late_line))[1]:
            if (key := _whose(line)) is not None:
                late_torn.setdefault(key, []).append(line)
    entries = read_jsonl(run_dir / "results.jsonl", ItemResult.model_validate_json)
    kept, why = [], {}
    for entry in entries:
        if isinstance(entry, Torn):
            if (key := _whose(entry)) is not None:
                why[key] = "results.jsonl " + _torn([entry])
            continue
        key = (entry.item_id, entry.epoch)
        name = f"traces/{trace_name(*key)}"
        entry.trace, bad = _trace_of(run_dir, entry)
        if bad is not None:
            why[key] = f"{name} {bad}"
            source = run_dir / name
            if set_aside and source.exists() and not source.is_file():
                source.rename(source.with_name(f"{source.name}.unreadable-{secrets.token_hex(2)}"))
        elif key in late_torn:
            why[key] = "late.jsonl " + _torn(late_torn[key])
        else:
            why.pop(key, None)
            kept.append(entry)
    anonymous = [e for e in entries if isinstance(e, Torn) and _whose(e) is None]
    have = {(r.item_id, r.epoch) for r in kept}
    for key in _expected(run_dir):
        if key not in have and key not in why:
            why[key] = "no result: results.jsonl " + (_torn(anonymous) if anonymous else "lacks its line")
    return kept, why


def to_run_again(run_dir: Path) -> dict[str, str]:
    """What `arena run --resume` runs again in a complete run directory: per item (`<item>@<k>` for epoch k) that
    cannot be read back whole, why. Empty: nothing to resume."""
    return {_label(key): why for key, why in _readable(run_dir)[1].items()}


def _keep_late_of(run_dir: Path, kept: set[tuple[str, int]]) -> None:
    """late.jsonl with only the events of `kept` results (and its torn lines that name no item, which stay
    reported): the late events of an item that runs again belong to its earlier run, not to the next."""
    source = run_dir / "late.jsonl"
    if not source.exists():
        return
    lines = [raw for raw in source.read_bytes().split(b"\n") if raw.strip()]
    keep = []
    for raw in lines:
        try:
            key: tuple[str, int] | None = _late_line(raw.decode())[0]
        except (ValueError, TypeError):
            key = _whose(Torn(0, raw.decode(errors="replace")))
            if key is None:
                keep.append(raw)
            continue
        if key in kept:
            keep.append(raw)
    if len(keep) != len(lines):
        _replace(source, "".join(raw.decode(errors="replace") + "\n" for raw in keep))


def _late_line(text: str) -> tuple[tuple[str, int], TraceEvent]:
    """A line of late.jsonl: (item id, epoch) and the event."""
    data = json.loads(text)
    if not isinstance(data, dict) or not isinstance(data.get("item_id"), str):
        raise InvalidValue("not a late event of an item")
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
    """A torn line of results.jsonl that still names its item, as that item, not measured."""
    item_id, epoch = _whose(line) or (f"results.jsonl line {line.number}", 1)
    return ItemResult(item_id=item_id, epoch=epoch, status="errored", error="results.jsonl " + _torn([line]))


def load_results(run_dir: Path, on_damage: Warn = warn) -> list[ItemResult]:
    """Read a run directory back: results with their traces re-attached and `late.jsonl` folded in.

    A torn or corrupt line (kill -9 mid-write) costs only its item, reported as not measured (`errored`,
    its `error` naming the file and line), with one warning line per damaged file; every whole line is kept.
    A line that names no item is no item: in a complete run, the items its meta.json lists that have no result
    are the ones it cost (not measured, named); otherwise it is only warned of. A trace that cannot be read
    at all (a directory in its place) costs only its item too.
    """
    source = run_dir / "results.jsonl"
    entries = read_jsonl(source, ItemResult.model_validate_json)
    results = [_torn_result(e) if isinstance(e, Torn) else e for e in entries if not isinstance(e, Torn) or _whose(e)]
    torn = [e for e in entries if isinstance(e, Torn)]
    if torn:
        have = {(r.item_id, r.epoch) for r in results}
        lost = [key for key in _expected(run_dir) if key not in have]
        anonymous = [e for e in torn if _whose(e) is None]
        why = _torn(anonymous) if anonymous else "has no line for it (the file was cut short)"
        results += [ItemResult(item_id=item_id, epoch=epoch, status="errored",
                               error="no result: results.jsonl " + why) for item_id, epoch in lost]
        what = "its item is reported as not measured"
        if anonymous:
            what = (f"{len(anonymous)} line(s) name no item; "
                    + (f"the items without a result ({', '.join(map(_label, lost))}) are reported as not measured"
                       if lost else "no item lacks a result here (--resume runs any that does)")
                    + ("; the items the others name, as not measured" if len(anonymous) < len(torn) else ""))
        on_damage(f"{source}: {_torn(torn)}; {what}")
    for n, result in enumerate(results):
        trace, bad = _trace_of(run_dir, result)
        result.trace = trace
        if bad is not None:
            name = f"traces/{trace_name(result.item_id, result.epoch)}"
            results[n] = _not_measured(result, f"{name} {bad}")
            on_damage(f"{run_dir / name}: {bad}; its item is reported as not measured")
    return fold_late(run_dir, results, on_damage=on_damage)
