"""What a check is: its result, what it reads (`Scoring`), the core's registry of checks, and the helpers that
make results. A module of its own so that the modules holding checks (`arena.checks`, `arena.stream_check`,
`arena.store_checks`) each import it, and none of them has to import another."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from pydantic import BaseModel

from arena.spec import ArenaSpec
from arena.types import Capabilities, EvalItem, TraceEvent


class CheckResult(BaseModel):
    name: str
    passed: bool
    reason: str


@dataclass(frozen=True)
class Scoring:
    """What a check reads: the item, its merged trace, its arena, and what the adapter declared."""

    item: EvalItem
    trace: list[TraceEvent]
    arena: ArenaSpec
    declared: Capabilities = field(default_factory=Capabilities)

    @property
    def events(self) -> list[TraceEvent]:
        """The trace without late events (those are judged by `nothing_after_final` alone)."""
        return [e for e in self.trace if not e.late]

    @property
    def arena_tools(self) -> set[str]:
        return {t.name for t in self.arena.tools}


Check = Callable[[Scoring], CheckResult]
CHECKS: dict[str, Check] = {}  # the core's checks: every arena's items may name them


def check(fn: Check) -> Check:
    """Register one of the core's checks (an arena registers its own in its `CheckSet`)."""
    CHECKS[fn.__name__] = fn
    return fn


def ok(name: str, reason: str) -> CheckResult:
    """A passing result (for checks, in the core and in arenas)."""
    return CheckResult(name=name, passed=True, reason=reason)


def fail(name: str, reason: str) -> CheckResult:
    return CheckResult(name=name, passed=False, reason=reason)


STREAM_CHECK = "stream_matches_run"  # a streamed run's own check (arena.stream_check)
# a store run's checks (arena.store_checks): what the harness itself saw of the item's database or key prefix
STORE_CHECKS = ("store_held_pause", "store_read_at_resume", "no_state_in_workdir", "store_namespace_own")
