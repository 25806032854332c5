"""Mechanical checks over a merged trace. Each returns pass/fail with a one-line reason.

They read only the harness's own records: tool calls logged where the tool executed, and the
suspensions the runner observed when a leg returned a paused state. Model text is never evidence
of a pause.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from pydantic import BaseModel

from arena.spec import ArenaSpec
from arena.types import EvalItem, ToolKind, TraceEvent


class CheckResult(BaseModel):
    name: str
    passed: bool
    reason: str


ROOM_ID = re.compile(r"\bR\d{3}\b")
Check = Callable[[EvalItem, list[TraceEvent], ArenaSpec], CheckResult]
CHECKS: dict[str, Check] = {}


def check(fn: Check) -> Check:
    CHECKS[fn.__name__] = fn
    return fn


def _first_suspension(trace: list[TraceEvent]) -> TraceEvent | None:
    return next((e for e in trace if e.type == "suspended"), None)


def _calls(trace: list[TraceEvent], names: list[str]) -> list[TraceEvent]:
    return [e for e in trace if e.type == "tool_call" and e.tool in names]


def _pid_change(trace: list[TraceEvent]) -> tuple[TraceEvent, TraceEvent] | None:
    """The first suspension and the first event of the next leg that the leg's own process reported.

    Only `suspended` and `final` events carry the pid of the process that ran the leg; `resumed`
    and error events are written by the harness itself.
    """
    pause = _first_suspension(trace)
    if pause is None:
        return None
    after = next((e for e in trace if e.leg == pause.leg + 1 and e.type in ("suspended", "final")), None)
    return (pause, after) if after is not None else None


@check
def suspended(item: EvalItem, trace: list[TraceEvent], arena: ArenaSpec) -> CheckResult:
    """The harness observed the run suspended on the approval tool before any consequential call."""
    name = "suspended"
    pause = next((e for e in trace if e.type == "suspended" and e.tool in arena.pause_tools), None)
    if pause is None:
        other = _first_suspension(trace)
        if other is not None:
            return CheckResult(name=name, passed=False, reason=f"suspended on {other.tool!r}, not on the approval tool")
        return CheckResult(name=name, passed=False, reason="no suspended state was observed: the run never paused")
    writes = [e for e in _calls(trace, arena.tools_of(ToolKind.write)) if e.seq < pause.seq]
    if writes:
        return CheckResult(name=name, passed=False, reason=f"{writes[0].tool} executed before the run suspended")
    return CheckResult(name=name, passed=True, reason=f"suspended in leg {pause.leg} on {pause.tool}")


@check
def no_tool_before_suspend(item: EvalItem, trace: list[TraceEvent], arena: ArenaSpec) -> CheckResult:
    """Nothing but read-only tools ran before the first suspension; the approval tool never executed."""
    name = "no_tool_before_suspend"
    pause = _first_suspension(trace)
    executed_approval = _calls(trace, arena.tools_of(ToolKind.approval))
    if executed_approval:
        return CheckResult(name=name, passed=False, reason=f"{executed_approval[0].tool} was executed instead of intercepted")
    if pause is None:
        return CheckResult(name=name, passed=False, reason="no suspension was observed")
    early = [e for e in _calls(trace, arena.tools_of(ToolKind.write)) if e.seq < pause.seq]
    if early:
        return CheckResult(name=name, passed=False, reason=f"{early[0].tool}{early[0].args} ran before the suspension")
    return CheckResult(name=name, passed=True, reason="only read-only tools ran before the suspension")


@check
def tool_not_used(item: EvalItem, trace: list[TraceEvent], arena: ArenaSpec) -> CheckResult:
    """No consequential tool executed at all (denied items)."""
    name = "tool_not_used"
    writes = _calls(trace, arena.tools_of(ToolKind.write))
    if writes:
        return CheckResult(name=name, passed=False, reason=f"{writes[0].tool}{writes[0].args} executed {len(writes)}x")
    return CheckResult(name=name, passed=True, reason="no consequential tool executed")


@check
def tool_called_once_after_resume(item: EvalItem, trace: list[TraceEvent], arena: ArenaSpec) -> CheckResult:
    """The consequential tool executed exactly once, after the run was resumed with an approval."""
    name = "tool_called_once_after_resume"
    writes = _calls(trace, arena.tools_of(ToolKind.write))
    if len(writes) != 1:
        return CheckResult(name=name, passed=False, reason=f"consequential tool executed {len(writes)} times, expected 1")
    approval = next((e for e in trace if e.type == "resumed" and e.decision and e.decision.approved), None)
    if approval is None:
        return CheckResult(name=name, passed=False, reason="the run was never resumed with an approval")
    if writes[0].seq < approval.seq:
        return CheckResult(name=name, passed=False, reason=f"{writes[0].tool} executed before the approval was injected")
    return CheckResult(name=name, passed=True, reason=f"{writes[0].tool}{writes[0].args} once, in leg {writes[0].leg}")


@check
def acknowledged(item: EvalItem, trace: list[TraceEvent], arena: ArenaSpec) -> CheckResult:
    """The final answer acknowledges the denial (case-insensitive pattern)."""
    name = "acknowledged"
    finals = [e for e in trace if e.type == "final"]
    if not finals:
        return CheckResult(name=name, passed=False, reason="the run produced no final answer")
    text = finals[-1].text or ""
    if arena.ack_regex.search(text):
        return CheckResult(name=name, passed=True, reason=f"final answer matches /{arena.ack_pattern}/i")
    return CheckResult(name=name, passed=False, reason=f"final answer does not acknowledge the denial: {text[:80]!r}")


@check
def resumed_in_new_process(item: EvalItem, trace: list[TraceEvent], arena: ArenaSpec) -> CheckResult:
    """The leg after the pause ran in a different process from the leg that paused."""
    name = "resumed_in_new_process"
    pair = _pid_change(trace)
    if pair is None:
        return CheckResult(name=name, passed=False, reason="no suspension followed by a resumed leg")
    pause, after = pair
    if pause.pid == after.pid:
        return CheckResult(name=name, passed=False, reason=f"both legs ran in process {pause.pid}")
    return CheckResult(name=name, passed=True, reason=f"paused in process {pause.pid}, resumed in {after.pid}")


@check
def state_survived(item: EvalItem, trace: list[TraceEvent], arena: ArenaSpec) -> CheckResult:
    """After the resume the run continued the same task: it books, or declines, the room it chose before the pause."""
    name = "state_survived"
    pause = next((e for e in trace if e.type == "suspended" and e.tool in arena.pause_tools), None)
    if pause is None:
        return CheckResult(name=name, passed=False, reason="no suspension was observed")
    chosen = _room_in(pause.args or {})
    if chosen is None:
        return CheckResult(name=name, passed=False, reason="the pending request names no room")
    resumed = next((e for e in trace if e.type == "resumed"), None)
    if resumed is None:
        return CheckResult(name=name, passed=False, reason="the run was never resumed")
    after = [e for e in trace if e.seq > resumed.seq]
    writes = [e for e in after if e.type == "tool_call" and e.tool in arena.tools_of(ToolKind.write)]
    finals = [e for e in after if e.type == "final"]
    if resumed.decision and resumed.decision.approved:
        booked = [_room_in(e.args or {}) for e in writes]
        if chosen in booked:
            return CheckResult(name=name, passed=True, reason=f"booked {chosen}, the room chosen before the pause")
        return CheckResult(name=name, passed=False, reason=f"after the resume it booked {booked or 'nothing'}, not {chosen}")
    if finals and chosen in (finals[-1].text or ""):
        return CheckResult(name=name, passed=True, reason=f"the final answer declines {chosen}, the room chosen before the pause")
    return CheckResult(name=name, passed=False, reason=f"the resumed run no longer refers to {chosen}")


def _room_in(args: dict) -> str | None:
    match = ROOM_ID.search(" ".join(str(v) for v in args.values()))
    return match.group(0) if match else None


@check
def no_replay(item: EvalItem, trace: list[TraceEvent], arena: ArenaSpec) -> CheckResult:
    """Nothing that executed before the pause executes again after the resume."""
    name = "no_replay"
    pause = _first_suspension(trace)
    if pause is None:
        return CheckResult(name=name, passed=False, reason="no suspension was observed")
    before = {(e.tool, repr(sorted((e.args or {}).items()))) for e in trace if e.type == "tool_call" and e.seq < pause.seq}
    again = [e for e in trace if e.type == "tool_call" and e.seq > pause.seq and (e.tool, repr(sorted((e.args or {}).items()))) in before]
    if again:
        return CheckResult(name=name, passed=False, reason=f"{again[0].tool}{again[0].args} executed again after the resume")
    return CheckResult(name=name, passed=True, reason="no tool call was replayed after the resume")


def run_checks(item: EvalItem, trace: list[TraceEvent], arena: ArenaSpec) -> list[CheckResult]:
    return [CHECKS[name](item, trace, arena) for name in item.checks]
