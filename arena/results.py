"""Results of a run: per item, and the per-adapter summary printed with --json."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field, computed_field

from arena.checks import CheckResult
from arena.stats import EpochTally, repeated
from arena.types import TraceEvent


Verdict = Literal["passed", "failed", "could_not_measure"]
VERDICTS: tuple[Verdict, ...] = ("passed", "failed", "could_not_measure")


def verdict_of(status: str) -> Verdict:
    """A status as a gate reads it: `errored` means the harness could not measure the item, not that it failed."""
    return "could_not_measure" if status == "errored" else "passed" if status == "passed" else "failed"


class ItemResult(BaseModel):
    item_id: str
    status: Literal["passed", "failed", "errored"]
    epoch: int = 1  # which run of the item (`arena run --epochs`); run directories from before epochs have 1
    checks: list[CheckResult] = Field(default_factory=list)
    error: str | None = None
    legs: int = 0
    duration_s: float = 0.0
    trace: list[TraceEvent] = Field(default_factory=list)
    # the adapter's exception as Python formatted it (from its worker, for an adapter in one), when it raised:
    # shown by `arena run --verbose`, never written out (results.jsonl, summaries)
    traceback: str | None = Field(default=None, exclude=True)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def verdict(self) -> Verdict:
        """Derived from `status`, so results.jsonl written before it existed still load (and gain it)."""
        return verdict_of(self.status)


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
    items: int  # results: with --epochs N, one per item and epoch (so are passed, failed, errors and checks)
    passed: int
    failed: int
    errors: int
    checks: dict[str, CheckTally]
    run_dir: str | None = None
    epochs: int = 1
    # with epochs > 1 (see arena.stats): pass@1, pass^k for k = epochs, the 95% Wilson interval of pass@1,
    # and each item's epochs; errored epochs are left out of them (they are in `errors`)
    pass_at_1: float | None = None
    pass_hat_k: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    item_epochs: dict[str, EpochTally] | None = None

    @computed_field  # type: ignore[prop-decorator]
    @property
    def verdicts(self) -> dict[str, int]:
        """Items per verdict: what a CI gate reads (a failure was measured; could_not_measure was not)."""
        return dict(zip(VERDICTS, (self.passed, self.failed, self.errors)))

    @classmethod
    def tally(cls, results: list[ItemResult], epochs: int = 1, **meta: object) -> RunSummary:
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
            epochs=epochs,
            **_repeated(results, epochs),  # type: ignore[arg-type]
            **meta,  # type: ignore[arg-type]
        )


def _repeated(results: list[ItemResult], epochs: int) -> dict[str, object]:
    if epochs <= 1:
        return {}
    stats = repeated(results, epochs)
    low, high = stats.ci if stats.ci is not None else (None, None)
    return {"pass_at_1": stats.pass_at_1, "pass_hat_k": stats.pass_hat_k, "ci_low": low, "ci_high": high,
            "item_epochs": stats.items}
