"""`stream_matches_run`: in a streamed run, the framework's stream's account (what the adapter handed over through
`LegContext.told` as it read the stream, the trace's `streamed` events) compared with what the harness saw, both ways.

From the stream to the run, each claim is held against the harness's records: a call the stream says the model made
is one the model asked for (the gateway); a result it reports is of a call that ran (the tool log), before the stream
said so, or the framework's answer to a denial or an edit the harness delivered; a pause it announces is one the leg
stopped at, on the tool the leg stopped at.

From the run to the stream, each thing the harness saw must have been told: every suspension was announced (a
`pause` told in that leg before it returned); every consequential (`write`) call that ran is reported with its
outcome (a `tool_result` with text); a call the human denied, reported, reads as a denial (the human's words or a
denial's word), not as a success; and results are reported in the order the tool log ran them, within a leg, where
that order is certain (the later call was asked by a model request that carried the earlier one's result).

Each is a failure reason of its own. Tools that are not the arena's (a framework's own) are not the harness's to
check, except that a pause announced on one is a pause announced on another tool than the leg stopped at.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

from arena.checking import STREAM_CHECK, CheckResult, Scoring, check, fail, ok
from arena.observed import model_calls
from arena.types import Decision, DecisionKind, ToolKind, ToolSpec, TraceEvent

# a result that reads as a denial: the words frameworks and adapters say one with ("DENIED", "rejected by the user",
# "not approved", "NOT EXECUTED", "cancelled", ...). A denied call's report carrying none of them, nor the human's
# own words, reads as the call's success.
DENIAL = re.compile(r"\bden(y|ied|ial)|reject|declin|refus|not (been )?approved|not (be(en)? )?(executed|run)\b|"
                    r"cancel|disallow|forbid|\bblocked\b|\babort", re.IGNORECASE)


def _answered_unrun(trace: list[TraceEvent], tool: str, call_id: str | None, seq: int) -> bool:
    """Whether the human's decision for that call, before `seq`, is one a framework answers without running the
    call: a denial, or an edit (sent as a rejection where the framework cannot run a call with other arguments;
    whether an edit ran as asked is the edit checks' to say). A framework streams that answer as the call's result."""
    for e in trace:
        if e.type != "resumed" or e.seq >= seq:
            continue
        for d in ([e.decision] if e.decision is not None else []) + list(e.decisions or []):
            if d.approved and d.kind is not DecisionKind.edit:
                continue
            if d.call_id is not None and call_id is not None:
                if d.call_id == call_id:
                    return True
            elif d.match is None or d.match.get("tool") in (None, tool):
                return True
    return False


def _ids(call: str | None) -> str:
    return f" ({call})" if call else ""


def _stopped_at(stop: TraceEvent) -> set[str]:
    """The tools a leg that suspended waits on (the suspension's pending calls); empty where none is named. A name
    a channel adds to a pending call counts too: delegation's `agent`, a delegate called as a tool whose call waits,
    since the run's stream sees its own call of that delegate wait (pydantic-ai, Strands), the delegate's name being
    that tool's."""
    named = {v for p in stop.pending or [] for k, v in p.items() if k not in ("args", "call_id") and v
             and isinstance(v, str)}
    return named | ({stop.tool} if stop.tool else set())


def _of(specs: dict[str, ToolSpec], tool: str | None) -> tuple[ToolSpec | None, str]:
    """The arena's tool a tool log entry ran, and its phase (a body-pausing tool's `prepare`, `commit`, `abort`)."""
    name = str(tool)
    if name in specs:
        return specs[name], ""
    base, _, phase = name.rpartition(".")
    return specs.get(base), phase


def _denied(trace: list[TraceEvent], asked: dict[str, str]) -> Iterator[tuple[TraceEvent, str, str | None, Decision]]:
    """Each call the human denied: the resume that delivered the denial, the call's tool and id (where known)."""
    stop: TraceEvent | None = None
    for e in trace:
        if e.type == "suspended" or (e.type == "replayed" and e.result == "suspended"):
            stop = e
        if e.type != "resumed":
            continue
        if e.decisions:
            for d in e.decisions:
                tool = asked.get(str(d.call_id)) or (d.match or {}).get("tool")
                if d.kind is DecisionKind.deny and tool:
                    yield e, str(tool), d.call_id, d
        elif e.decision is not None and e.decision.kind is DecisionKind.deny and stop is not None:
            pending = [(str(p.get("tool")), p.get("call_id")) for p in stop.pending or [] if p.get("tool")]
            for tool, call in pending or ([(stop.tool, None)] if stop.tool else []):
                yield e, tool, None if call is None else str(call), e.decision


def _reads_as_denial(result: str | None, decision: Decision) -> bool:
    text = " ".join((result or "").split()).lower()
    words = " ".join((decision.text or "").split()).lower()
    return bool(text) and ((bool(words) and words in text) or DENIAL.search(text) is not None)


def _carries(request: dict[str, object] | None, result: str | None) -> bool:
    """Whether a model request carries a tool's result (its text, as JSON would quote it)."""
    if request is None or not result:
        return False
    return json.dumps(result)[1:-1] in json.dumps(request)


@check
def stream_matches_run(s: Scoring) -> CheckResult:
    """A streamed run's stream told the truth and the whole truth (see the module's doc): each claim the stream
    made is backed by the harness's records, and each suspension, consequential call, denial and order of results
    the harness saw is told. A result reported again for a call that ran (a resumed stream repeating it) is the same
    truth."""
    name = STREAM_CHECK
    trace = s.events
    told = [e for e in trace if e.type == "streamed" and (e.tool in s.arena_tools or e.text == "pause")]
    ran = [e for e in trace if e.type == "tool_call" and not (e.result or "").startswith("ERROR: item sealed")]
    stops = [e for e in trace if e.type == "suspended"]
    if not told:
        if ran:
            return fail(name, f"{len(ran)} tool call(s) ran and the stream told of none (nothing handed over)")
        if stops:
            return fail(name, f"the leg stopped at {stops[0].tool} and the stream told of nothing (no pause announced)")
        return ok(name, "nothing ran and the stream told of nothing")
    specs = {t.name: t for t in s.arena.tools}
    approval = {t.name for t in s.arena.tools if t.kind is ToolKind.approval}
    calls = [(e.seq, str(c.get("id")), str(c.get("name"))) for e in model_calls(trace)
             for c in (e.response or {}).get("tool_calls") or []]
    used: set[int] = set()  # tool log entries without a call id, each matched to one streamed result
    backed: set[str] = set()  # call ids whose run backs their reported results
    reported: list[tuple[TraceEvent, TraceEvent]] = []  # (a streamed result, the run in its own leg that backs it)

    # -- from the stream to the run: every claim backed -------------------------------------------------------
    for e in told:
        tool, kind, call = str(e.tool), e.text, e.call_id
        if kind == "tool_call":
            if not any(seq < e.seq and n == tool and (call is None or i == call) for seq, i, n in calls):
                return fail(name, f"the stream said the model called {tool}{_ids(call)}; the model asked for no such call")
        elif kind == "tool_result":
            of_tool = [r for r in ran if r.seq < e.seq and (r.tool == tool or str(r.tool).startswith(tool + "."))]
            if tool in approval and not of_tool:  # its result is the human's decision, delivered by a resume
                if any(r.type == "resumed" and r.seq < e.seq for r in trace):
                    continue
                return fail(name, f"the stream gave {tool} a result before any decision was delivered")
            by_id = [r for r in of_tool if call is not None and r.call_id == call]
            if call is not None and (call in backed or by_id):
                backed.add(call)  # that call ran (a stream may report its result again, on a resume)
                if by_id and by_id[-1].leg == e.leg:
                    reported.append((e, by_id[-1]))
                continue
            match = next((r for r in of_tool if r.seq not in used and r.call_id is None), None)
            if match is not None:  # the tool log has no ids here: one run backs one reported result
                used.add(match.seq)
                if call is not None:
                    backed.add(call)
                if match.leg == e.leg:
                    reported.append((e, match))
            elif not _answered_unrun(trace, tool, call, e.seq):
                return fail(name, f"the stream said {tool} ran{_ids(call)}; the tool log shows it did not")
        elif kind == "pause":
            # the leg stopped there: a `suspended` event, or a director's replayed resume that ended suspended
            stop = next((r for r in trace if r.leg == e.leg and r.seq > e.seq and (
                r.type == "suspended" or (r.type == "replayed" and r.result == "suspended"))), None)
            if stop is None:
                return fail(name, f"the stream announced a pause on {tool}; the leg did not stop there")
            waits = _stopped_at(stop)
            if waits and tool not in waits:
                return fail(name, f"the stream announced the pause on {tool}{_ids(call)}; the leg stopped at "
                                  f"{', '.join(sorted(waits))}")

    # -- from the run to the stream: every suspension announced -----------------------------------------------
    pauses = [e for e in told if e.text == "pause"]
    for stop in stops:
        if not any(p.leg == stop.leg and p.seq < stop.seq for p in pauses):
            return fail(name, f"the leg stopped at {stop.tool} (suspended) and the stream never announced a pause")

    # -- every consequential call that ran reported, with its outcome ------------------------------------------
    results = [e for e in told if e.text == "tool_result"]
    cut = {e.leg for e in trace if e.type == "crashed"}  # a leg killed mid-way: its stream was cut there
    ran_ids = {r.call_id for r in ran if r.call_id is not None}
    claimed: set[int] = set()
    for r in ran:
        spec, phase = _of(specs, r.tool)
        if spec is None or spec.kind is not ToolKind.write or phase == "prepare" or r.leg in cut:
            continue  # a body's prepare step: its outcome is the pause, or its refusal (reported as the call's)
        later = [e for e in results if e.seq > r.seq and e.tool == spec.name]
        hit = next((e for e in later if r.call_id is not None and e.call_id == r.call_id), None)
        if hit is None:
            hit = next((e for e in later if e.seq not in claimed and (e.call_id is None or e.call_id not in ran_ids)),
                       None)
            if hit is not None:
                claimed.add(hit.seq)
        if hit is None:
            return fail(name, f"{r.tool}{_ids(r.call_id)} ran and the stream never reported its result")
        if not (hit.result or "").strip():
            return fail(name, f"the stream reported {spec.name}{_ids(hit.call_id)} without its outcome (no result)")

    # -- a denial reported as a denial ------------------------------------------------------------------------
    asked = {i: n for _, i, n in calls}
    for resumed, tool, call, decision in _denied(trace, asked):
        spec = specs.get(tool)
        if spec is None or any(r.seq > resumed.seq and _of(specs, r.tool) in ((spec, ""), (spec, "commit"))
                               and (call is None or r.call_id in (None, call)) for r in ran):
            continue  # it ran all the same: the stream's success is the truth (denied_not_executed says the rest)
        earlier = {r.call_id for r in ran if r.seq < resumed.seq and r.call_id is not None}
        report = next((e for e in results if e.seq > resumed.seq and e.tool == tool and e.call_id not in earlier
                       and (call is None or e.call_id is None or e.call_id == call)), None)
        if report is not None and not (report.result or "").strip():
            return fail(name, f"the stream reported {tool}{_ids(report.call_id)}, which the human denied, with no "
                              "outcome (no result)")
        if report is not None and not _reads_as_denial(report.result, decision):
            return fail(name, f"the stream reported {tool}{_ids(report.call_id)}, which the human denied, as a "
                              f"success: {(report.result or '')[:80]!r}")

    # -- results in the order the tool log ran them, within a leg ---------------------------------------------
    asks = model_calls(trace)
    for i, (first, first_run) in enumerate(reported):
        for later_told, later_run in reported[i + 1:]:
            if later_told.leg != first.leg or later_run.seq >= first_run.seq:
                continue
            # the later-told call ran first: certain where a model request between them carried its result
            if any(later_run.seq < m.seq < first_run.seq and m.leg == first.leg and _carries(m.request, later_run.result)
                   for m in asks):
                return fail(name, f"the stream reported {first.tool}{_ids(first.call_id)} before "
                                  f"{later_told.tool}{_ids(later_told.call_id)}; the tool log ran "
                                  f"{later_run.tool} first, a model turn earlier")

    counts = {k: sum(1 for e in told if e.text == k) for k in ("tool_call", "tool_result", "pause")}
    return ok(name, f"the stream told of {counts['tool_call']} call(s), {counts['tool_result']} result(s) and "
                    f"{counts['pause']} pause(s); each matches the tool log and the model's answers, and every "
                    "suspension, consequential call and denial was told, in order")
