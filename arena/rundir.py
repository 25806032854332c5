"""The run directory: metadata, per-item results and merged traces, written as items finish.

Each item's result is appended the moment it completes, so a crash loses at most the item in
flight; `meta.json` says whether the run completed.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import subprocess
import threading
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from arena.redact import redact
from arena.worker import procs
from arena.results import ItemResult, RunSummary
from arena.types import TraceEvent


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
    cleaned = re.sub(r"[^A-Za-z0-9_.-]+", "_", name).lstrip(".") or "_"
    return cleaned[:limit]


class RunDir:
    def __init__(self, root: Path, arena: str, adapter: str, model: str, meta: dict[str, Any]):
        stamp = time.strftime("%Y%m%d-%H%M%S")
        base = "-".join(safe_part(p) for p in (arena, adapter, model))
        for _ in range(20):  # two runs starting in the same second get different names
            self.path = root / f"{stamp}-{base}-{secrets.token_hex(2)}"
            try:
                (self.path / "traces").mkdir(parents=True, exist_ok=False)
                break
            except FileExistsError:
                continue
        else:
            raise FileExistsError(f"no free run directory name under {root}")
        self.meta = {**meta, "arena": arena, "adapter": adapter, "model": model, "git_commit": git_commit(),
                     "started_at": _now(), "ended_at": None, "status": "running", "pid": os.getpid(),
                     "pid_start": procs.start_time(os.getpid())}
        _OPEN.add(self)
        self._late_lock = threading.Lock()
        (self.path / "results.jsonl").touch()  # a run directory from its first moment, even with no result yet
        self._write_meta()

    @classmethod
    def reopen(cls, path: Path) -> tuple[RunDir, list[ItemResult]]:
        """An interrupted run directory, opened to complete it: (it, the results it already holds).

        A result line torn by the interruption is dropped (its item runs again); the rest stay."""
        run = cls.__new__(cls)
        run.path = path
        run.meta = json.loads((path / "meta.json").read_text())
        kept, done = [], []
        for line in (path / "results.jsonl").read_text().splitlines():
            try:
                result = ItemResult.model_validate_json(line)
            except ValueError:
                continue
            kept.append(line)
            done.append(result)
        tmp = path / "results.jsonl.tmp"
        tmp.write_text("".join(line + "\n" for line in kept))
        tmp.replace(path / "results.jsonl")
        for result in done:
            trace_file = path / "traces" / trace_name(result.item_id, result.epoch)
            if trace_file.exists():
                result.trace = [TraceEvent.model_validate_json(t) for t in trace_file.read_text().splitlines()]
        run.meta.update(status="running", ended_at=None, pid=os.getpid(), pid_start=procs.start_time(os.getpid()),
                        resumed=[*run.meta.get("resumed", []), _now()])
        run.meta.pop("interrupted_by", None)
        run._late_lock = threading.Lock()
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
        with (self.path / "results.jsonl").open("a") as f:
            f.write(redact(result.model_dump_json(exclude={"trace"})) + "\n")

    def add_late(self, item_id: str, event: TraceEvent, epoch: int = 1) -> None:
        """An event that arrived after its item was sealed: appended at once to late.jsonl."""
        which = {"item_id": item_id, **({"epoch": epoch} if epoch > 1 else {})}
        with self._late_lock, (self.path / "late.jsonl").open("a") as f:
            f.write(redact(json.dumps({**which, **event.model_dump(mode="json", exclude_none=True)})) + "\n")

    def finish(self, summary: RunSummary, results: list[ItemResult] | None = None) -> None:
        """Mark the run complete; results rescored after late events replace what was written for them."""
        if results is not None:
            for result in results:
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


def load_results(run_dir: Path) -> list[ItemResult]:
    """Read a run directory back: results with their traces re-attached."""
    from arena.types import TraceEvent

    results = []
    source = run_dir / "results.jsonl"
    try:
        for line in source.read_text().splitlines():
            result = ItemResult.model_validate_json(line)
            source = run_dir / "traces" / trace_name(result.item_id, result.epoch)
            if source.exists():
                result.trace = [TraceEvent.model_validate_json(t) for t in source.read_text().splitlines()]
            results.append(result)
            source = run_dir / "results.jsonl"
    except (ValueError, UnicodeDecodeError) as exc:  # a torn or corrupt file: say which
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise ValueError(f"{source.name}: {first}") from None
    return results
