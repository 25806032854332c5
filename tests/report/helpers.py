"""Hand-made results and run directories for the report tests."""

from __future__ import annotations

import json
from pathlib import Path

from arena.checks import CheckResult
from arena.report.matrix import Run
from arena.results import ItemResult
from arena.trace import TraceRecorder
from arena.types import Decision

APPROVE = Decision(kind="approve")
DENY = Decision(kind="deny", text="Budget Freeze")


def _answer(rec: TraceRecorder, text: str | None = None, calls: list[dict] | None = None, heard: list[str] = ()) -> None:
    """A model call as the gateway records it: the new input it was sent and what it answered."""
    rec.record("model_call", request={"new": [{"role": "tool", "text": h} for h in heard]},
               response={"status": 200, "text": text, "tool_calls": calls or []})


def item(item_id: str, checks: dict[str, bool] | None = None, *, decision: Decision | None = APPROVE,
         paused: bool = True, final: str | None = "done", status: str | None = None, early_write: bool = False,
         write_after: bool = False, error: str | None = None, summary: str = "book R1",
         heard: str | None = None) -> ItemResult:
    """One item: a trace (search, [book early], [suspend, resume, [book]], final) with the model calls a
    gateway records (the model hears `heard`, default the decision's text, after the resume, and its last
    answer is `final`) and the given check results."""
    rec = TraceRecorder()
    _answer(rec, calls=[{"name": "search_rooms", "args": {"capacity": 3, "day": "Monday"}}])
    rec.record("tool_call", tool="search_rooms", args={"capacity": 3, "day": "Monday"}, result="{}")
    if early_write:
        rec.record("tool_call", tool="book_room", args={"room_id": "R1"}, result="BOOKED")
    if paused:
        _answer(rec, calls=[{"name": "request_approval", "args": {"summary": summary}}])
        rec.record("suspended", tool="request_approval", args={"summary": summary})
        if decision is not None:
            rec.leg = 1
            rec.record("resumed", decision=decision)
    if write_after:
        rec.record("tool_call", tool="book_room", args={"room_id": "R1"}, result="BOOKED")
    if error:
        rec.record("error", text=error)
    elif final is not None:
        if paused and decision is not None:
            _answer(rec, final, heard=[decision.as_text() if heard is None else heard])
        else:
            _answer(rec, final)
        rec.record("final", text=final)
    results = [CheckResult(name=n, passed=p, reason=f"{n} {'ok' if p else 'failed'}") for n, p in (checks or {}).items()]
    if status is None:
        status = "errored" if error else ("passed" if all(c.passed for c in results) else "failed")
    return ItemResult(item_id=item_id, status=status, checks=results, error=error, legs=2 if paused else 1,
                      trace=rec.events)


def run(arena: str, adapter: str, model: str, results: list[ItemResult], path: Path | None = None, **meta) -> Run:
    base = {"arena": arena, "adapter": adapter, "model": model, "framework": f"{adapter}-fw",
            "framework_version": "1.0", "pause_kind": "native", "pause_mechanism": f"{adapter} mechanism",
            "capabilities": {"deny_reason": True, "approve_note": True, "free_text": True, "notes": ""},
            "status": "complete", "started_at": "2026-01-01T00:00:00+00:00", "base_url": "loopback (scripted)"}
    return Run(path=path or Path("runs") / f"{arena}-{adapter}-{model}", meta={**base, **meta}, results=results)


def write_run(root: Path, name: str, r: Run) -> Path:
    """Write a Run as a run directory (meta.json, results.jsonl, traces/)."""
    path = root / name
    (path / "traces").mkdir(parents=True)
    (path / "meta.json").write_text(json.dumps(r.meta))
    with (path / "results.jsonl").open("w") as f:
        for result in r.results:
            f.write(result.model_dump_json(exclude={"trace"}) + "\n")
            (path / "traces" / f"{result.item_id}.jsonl").write_text(
                "".join(e.model_dump_json() + "\n" for e in result.trace))
    return path
