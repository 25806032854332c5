"""The run directory: metadata, per-item results and merged traces, written as items finish.

Each item's result is appended the moment it completes, so a crash loses at most the item in
flight; `meta.json` says whether the run completed.
"""

from __future__ import annotations

import json
import secrets
import subprocess
import threading
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

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


class RunDir:
    def __init__(self, root: Path, arena: str, adapter: str, model: str, meta: dict[str, Any]):
        stamp = time.strftime("%Y%m%d-%H%M%S")
        safe_model = model.replace("/", "_")
        self.path = root / f"{stamp}-{arena}-{adapter}-{safe_model}-{secrets.token_hex(2)}"
        (self.path / "traces").mkdir(parents=True, exist_ok=False)
        self.meta = {**meta, "arena": arena, "adapter": adapter, "model": model, "git_commit": git_commit(),
                     "started_at": _now(), "ended_at": None, "status": "running"}
        self._late_lock = threading.Lock()
        self._write_meta()

    def _write_meta(self) -> None:
        tmp = self.path / "meta.json.tmp"
        tmp.write_text(json.dumps(self.meta, indent=2) + "\n")
        tmp.replace(self.path / "meta.json")

    def _write_trace(self, result: ItemResult) -> None:
        tmp = self.path / "traces" / f"{result.item_id}.jsonl.tmp"
        tmp.write_text("".join(event.model_dump_json() + "\n" for event in result.trace))
        tmp.replace(self.path / "traces" / f"{result.item_id}.jsonl")

    def add(self, result: ItemResult) -> None:
        self._write_trace(result)
        with (self.path / "results.jsonl").open("a") as f:
            f.write(result.model_dump_json(exclude={"trace"}) + "\n")

    def add_late(self, item_id: str, event: TraceEvent) -> None:
        """An event that arrived after its item was sealed: appended at once to late.jsonl."""
        with self._late_lock, (self.path / "late.jsonl").open("a") as f:
            f.write(json.dumps({"item_id": item_id, **event.model_dump(mode="json", exclude_none=True)}) + "\n")

    def finish(self, summary: RunSummary, results: list[ItemResult] | None = None) -> None:
        """Mark the run complete; results rescored after late events replace what was written for them."""
        if results is not None:
            for result in results:
                self._write_trace(result)
            tmp = self.path / "results.jsonl.tmp"
            tmp.write_text("".join(r.model_dump_json(exclude={"trace"}) + "\n" for r in results))
            tmp.replace(self.path / "results.jsonl")
        (self.path / "summary.json").write_text(summary.model_dump_json(indent=2) + "\n")
        self.meta.update(ended_at=_now(), status="complete")
        self._write_meta()


def load_results(run_dir: Path) -> list[ItemResult]:
    """Read a run directory back: results with their traces re-attached."""
    from arena.types import TraceEvent

    results = []
    for line in (run_dir / "results.jsonl").read_text().splitlines():
        result = ItemResult.model_validate_json(line)
        trace_file = run_dir / "traces" / f"{result.item_id}.jsonl"
        if trace_file.exists():
            result.trace = [TraceEvent.model_validate_json(t) for t in trace_file.read_text().splitlines()]
        results.append(result)
    return results
