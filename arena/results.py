"""Results of a run: per item, and the per-adapter summary printed with --json."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from arena.checks import CheckResult
from arena.types import TraceEvent


class ItemResult(BaseModel):
    item_id: str
    status: Literal["passed", "failed", "errored"]
    checks: list[CheckResult] = Field(default_factory=list)
    error: str | None = None
    legs: int = 0
    duration_s: float = 0.0
    trace: list[TraceEvent] = Field(default_factory=list)


class CheckTally(BaseModel):
    passed: int = 0
    total: int = 0


class RunSummary(BaseModel):
    arena: str
    adapter: str
    framework: str
    framework_version: str | None
    pause_mechanism: str
    pause_kind: str
    model: str
    items: int
    passed: int
    failed: int
    errors: int
    checks: dict[str, CheckTally]
    run_dir: str | None = None

    @classmethod
    def tally(cls, results: list[ItemResult], **meta: object) -> RunSummary:
        checks: dict[str, CheckTally] = {}
        for result in results:
            for c in result.checks:
                tally = checks.setdefault(c.name, CheckTally())
                tally.total += 1
                tally.passed += int(c.passed)
        return cls(
            items=len(results),
            passed=sum(r.status == "passed" for r in results),
            failed=sum(r.status == "failed" for r in results),
            errors=sum(r.status == "errored" for r in results),
            checks=checks,
            **meta,  # type: ignore[arg-type]
        )
