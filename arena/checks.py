"""Mechanical checks over a merged trace. Each returns pass/fail with a one-line reason.

They read only the harness's own records: tool calls logged where the tool executed, model
requests and answers recorded where the harness served them, the suspensions the runner observed
when a leg returned a paused state, and the processes the harness spawned. What an adapter says
(its final text, its declared capabilities) is a claim: checks compare it with the evidence.

`UNIVERSAL` checks run on every item of every arena (unless the item names one in `exempt`, with why);
an item declares the rest.
"""

from __future__ import annotations

from typing import Any

from arena import channels
from arena.errors import InvalidValue, NotFound
from arena.checking import CHECKS as CHECKS  # re-exported: the faces for arenas read them from here
from arena.checking import STORE_CHECKS as STORE_CHECKS
from arena.checking import STREAM_CHECK as STREAM_CHECK
from arena.checking import Check as Check
from arena.checking import CheckResult as CheckResult
from arena.checking import Scoring as Scoring
from arena.checking import check as check
from arena.checking import fail as fail
from arena.checking import ok as ok
from arena.observed import (
    DENIAL_RE, DENIED_WORD, Shown,
    answer_text, asked_calls, calls_after_resume, decision_in, deferral_in, denial_in, describe, foreign_turn,
    last_answer, model_calls, new_input, read_pauses, replay_legs, requesting_call, shown_requests, squash, window,
)
from arena.spec import ArenaSpec
from arena.trace import ACTIVITY
from arena.types import Capabilities, Decision, DecisionKind, EvalItem, ToolKind, TraceEvent

UNIVERSAL = ("completed", "final_from_model", "nothing_after_final", "shown_as_asked", "denied_not_executed",
             "decision_reached_model", "continued_own_run", "requests_well_formed")


class CheckSet(dict[str, Check]):
    """An arena's own checks, in the arena's namespace (`<arena>.<check>`): two arenas may each have a
    check of one name, and neither replaces the other or a core check. An item names them as the core's
    are, by the short name its results are recorded under; `ArenaSpec.checks` holds the set.

        CHECKS = CheckSet("my_arena")

        @CHECKS.check
        def answer_matches(s: Scoring) -> CheckResult: ...
    """

    def __init__(self, arena: str) -> None:
        super().__init__()
        self.arena = arena

    def check(self, fn: Check) -> Check:
        name = getattr(fn, "__name__", "")
        if name in self:
            raise InvalidValue(f"check {self.arena}.{name} is defined twice")
        self[name] = fn
        return fn

    def qualified(self, name: str) -> str:
        return f"{self.arena}.{name}"


def named(arena: ArenaSpec, name: str) -> Check:
    """The check an item of this arena means by `name`: the arena's own, else the core's."""
    own = arena.checks.get(name)
    if own is not None:
        return own
    try:
        return CHECKS[name]
    except KeyError:
        raise NotFound(f"{arena.name} has no check {name!r} (neither its own nor the core's)") from None


def validate_checks(arena: ArenaSpec) -> None:
    """What an arena's items and universal list name must exist, once: an unknown name, an arena check named like a
    core one, or a decision of a kind no registered channel uses, is an InvalidValue (a ValueError) when the arena
    loads, not a surprise when an item is scored or resumed."""
    clash = sorted(set(arena.checks) & set(CHECKS))
    if clash:
        raise InvalidValue(f"its own check {clash[0]!r} has the name of a core check; rename it")
    known = set(arena.checks) | set(CHECKS)
    for name in (arena.universal if arena.universal is not None else UNIVERSAL):
        if name not in known:
            raise InvalidValue(f"its universal checks name an unknown check {name!r}")
    for item in arena.items:
        for name in [*item.checks, *item.exempt]:
            if name not in known:
                raise InvalidValue(f"item {item.id!r} names an unknown check {name!r}")
        for decision in item.decisions:
            channels.require_decision(decision.kind_name, f"item {item.id!r}")


def _first_suspension(trace: list[TraceEvent]) -> TraceEvent | None:
    return next((e for e in trace if e.type == "suspended"), None)


def _calls(trace: list[TraceEvent], names: list[str]) -> list[TraceEvent]:
    return [e for e in trace if e.type == "tool_call" and e.tool in names]


def _own_resumes(trace: list[TraceEvent]) -> list[TraceEvent]:
    """The resumes that carried the item's own decisions (not a hostile replay of a saved state)."""
    return [e for e in trace if e.type == "resumed" and e.replay is None]


def _shown(s: Scoring) -> Shown:
    """What the human was shown at each pause, matched with the model's own calls (see `shown_as_asked`)."""
    return read_pauses(s.events, set(s.arena.pause_tools), {t.name for t in s.arena.tools if t.body_pause})


def final_answer(s: Scoring) -> str | None:
    """The model's last observed answer in words (never the adapter's final text); for arenas' checks too."""
    last = last_answer(s.events)
    return answer_text(last, s.arena_tools) if last is not None else None


@check
def completed(s: Scoring) -> CheckResult:
    """The run ended with a final answer: the adapter did not raise, crash, hang or break the pause protocol."""
    name = "completed"
    errors = [e for e in s.events if e.type == "error"]
    if errors:
        return fail(name, f"in leg {errors[0].leg}: {errors[0].text}")
    finals = [e for e in s.events if e.type == "final"]
    if not finals:
        return fail(name, "the run produced no final answer")
    return ok(name, f"finished in leg {finals[-1].leg}")


@check
def suspended(s: Scoring) -> CheckResult:
    """The harness observed the run stop on a pause tool before any consequential call, and stay stopped.

    Stopped means: no further model request in the paused leg after the answer that asked for the
    pending call, and nothing at all for the item between the suspension and the resume.
    """
    name = "suspended"
    trace, arena = s.events, s.arena
    pause = next((e for e in trace if e.type == "suspended" and e.tool in arena.pause_tools), None)
    if pause is None:
        other = _first_suspension(trace)
        if other is not None:
            return fail(name, f"suspended on {other.tool!r}, not on the approval tool")
        return fail(name, "no suspended state was observed: the run never paused")
    writes = [e for e in _calls(trace, arena.tools_of(ToolKind.write)) if e.seq < pause.seq]
    if writes:
        return fail(name, f"{writes[0].tool} executed before the run suspended")
    for stop in (e for e in trace if e.type == "suspended"):
        asked = requesting_call(trace, stop)
        if asked is not None:
            more = [e for e in model_calls(trace) if asked.seq < e.seq < stop.seq and e.leg == stop.leg]
            if more:
                return fail(name, f"ran on after requesting {stop.tool}: {len(more)} more model request(s) before "
                                   f"the leg returned, first {describe(more[0])}")
        during = [e for e in window(trace, stop, ("resumed", "final", "error")) if e.type in ACTIVITY]
        if during:
            return fail(name, f"ran on during the pause: {describe(during[0])}"
                               + (f" (+{len(during) - 1} more)" if len(during) > 1 else ""))
    return ok(name, f"suspended in leg {pause.leg} on {pause.tool}, and nothing ran until the resume")


@check
def no_tool_before_suspend(s: Scoring) -> CheckResult:
    """Nothing but read-only tools ran before the first suspension; the approval tool never executed."""
    name = "no_tool_before_suspend"
    trace, arena = s.events, s.arena
    pause = _first_suspension(trace)
    executed_approval = _calls(trace, arena.tools_of(ToolKind.approval))
    if executed_approval:
        return fail(name, f"{executed_approval[0].tool} was executed instead of intercepted")
    if pause is None:
        return fail(name, "no suspension was observed")
    early = [e for e in _calls(trace, arena.tools_of(ToolKind.write)) if e.seq < pause.seq]
    if early:
        return fail(name, f"{early[0].tool}{early[0].args} ran before the suspension")
    return ok(name, "only read-only tools ran before the suspension")


@check
def tool_not_used(s: Scoring) -> CheckResult:
    """No consequential tool executed at all (denied items)."""
    name = "tool_not_used"
    writes = _calls(s.events, s.arena.tools_of(ToolKind.write))
    if writes:
        return fail(name, f"{writes[0].tool}{writes[0].args} executed {len(writes)}x")
    return ok(name, "no consequential tool executed")


@check
def tool_called_once_after_resume(s: Scoring) -> CheckResult:
    """The consequential tool executed exactly once, after the run was resumed with an approval."""
    name = "tool_called_once_after_resume"
    trace = s.events
    writes = _calls(trace, s.arena.tools_of(ToolKind.write))
    if len(writes) != 1:
        return fail(name, f"consequential tool executed {len(writes)} times, expected 1")
    approval = next((e for e in trace if e.type == "resumed" and e.decision and e.decision.approved), None)
    if approval is None:
        return fail(name, "the run was never resumed with an approval")
    if writes[0].seq < approval.seq:
        return fail(name, f"{writes[0].tool} executed before the approval was injected")
    return ok(name, f"{writes[0].tool}{writes[0].args} once, in leg {writes[0].leg}")


@check
def args_as_requested(s: Scoring) -> CheckResult:
    """What the human was shown is what the model asked for, and what executed is what the human approved.

    The pending request must carry the arguments of the model's own call (when the gateway saw it);
    a gated call must run with exactly the arguments it was held with; after an approval tool, the
    consequential call must be about the same subject (e.g. the room) as the approved request.
    """
    name = "args_as_requested"
    trace, arena = s.events, s.arena
    pause = next((e for e in trace if e.type == "suspended" and e.tool in arena.pause_tools), None)
    if pause is None:
        return fail(name, "no suspension was observed")
    approval = next((e for e in trace if e.type == "resumed" and e.seq > pause.seq), None)
    if approval is None or approval.decision is None or not approval.decision.approved:
        return fail(name, "the run was never resumed with an approval")
    pending = pause.args or {}
    asked = requesting_call(trace, pause)
    if asked is not None:
        model_args = [c.get("args") for c in (asked.response or {}).get("tool_calls") or [] if c.get("name") == pause.tool]
        if pending not in model_args:
            return fail(name, f"the request shown to the human, {pause.tool}{pending}, is not what the model asked "
                               f"for: {pause.tool}{model_args[0] if model_args else '?'}")
    writes = [e for e in _calls(trace, arena.tools_of(ToolKind.write)) if e.seq > approval.seq]
    if not writes:
        return fail(name, "nothing consequential executed after the approval")
    for call in writes:
        if pause.tool == call.tool:
            if (call.args or {}) != pending:
                return fail(name, f"{call.tool}{call.args} executed, but the approved call was {call.tool}{pending}")
            continue
        wanted = arena.subject_of(pending) if arena.subject_of else None
        got = arena.subject_of(call.args or {}) if arena.subject_of else None
        if wanted is None:
            return fail(name, f"the pending {pause.tool} request names nothing {call.tool} could be checked against")
        if got != wanted:
            return fail(name, f"{call.tool}{call.args} executed, but the approved request was about {wanted}")
    return ok(name, f"{writes[0].tool}{writes[0].args} matches the approved request")


@check
def shown_as_asked(s: Scoring) -> CheckResult:
    """At every pause, what the adapter showed the human is what the model asked for at that pause.

    The pending request an adapter reports is a claim: each shown call must be one the model asked for
    and that is still open (the gateway's record), with its tool, arguments and id; a body-pausing tool
    shows the amount its prepare step computed (the tool log's), not an earlier pause's.
    """
    name = "shown_as_asked"
    pauses = [e for e in s.events if e.type == "suspended"]
    if not pauses:
        return ok(name, "nothing was shown to the human: the run never paused")
    wrong = _shown(s).mismatch
    if wrong is not None:
        return fail(name, wrong)
    return ok(name, f"at each of {len(pauses)} pause(s) the human was shown what the model asked for")


@check
def final_from_model(s: Scoring) -> CheckResult:
    """The final answer the adapter reports is the model's own last answer, as the harness served it."""
    name = "final_from_model"
    finals = [e for e in s.events if e.type == "final"]
    if not finals:
        return fail(name, "the run produced no final answer")
    claim = finals[-1].text or ""
    last = last_answer(s.events)
    if last is None:
        return fail(name, f"the adapter reported {claim[:60]!r} but the model never answered")
    said = answer_text(last, s.arena_tools)
    if said is not None and squash(claim) == squash(said):
        return ok(name, "the final answer is the model's last answer")
    replays = replay_legs(s.events)  # a replay the harness started after the run may answer last: not the run's
    own = last_answer([e for e in s.events if e.leg not in replays]) if replays else None
    own_said = answer_text(own, s.arena_tools) if own is not None else None
    if own_said is not None and squash(claim) == squash(own_said):
        return ok(name, "the final answer is the model's last answer in the run's own legs "
                        "(a replay answered after it)")
    return fail(name, f"the adapter's final answer {claim[:60]!r} is not the model's last answer "
                       f"{(said or '(tool calls only)')[:60]!r}")


@check
def acknowledged(s: Scoring) -> CheckResult:
    """The model's last answer acknowledges the denial (case-insensitive pattern)."""
    name = "acknowledged"
    if not [e for e in s.events if e.type == "final"]:
        return fail(name, "the run produced no final answer")
    text = final_answer(s)
    if text is None:
        return fail(name, "the model gave no final answer in words")
    if s.arena.ack_regex.search(text):
        return ok(name, f"the model's last answer matches /{s.arena.ack_pattern}/i")
    return fail(name, f"the model's last answer does not acknowledge the denial: {text[:80]!r}")


_TEXT_CAPABILITY = {DecisionKind.deny: ("deny reason", "deny_reason"),
                    DecisionKind.approve: ("approve note", "approve_note"),
                    DecisionKind.edit: ("edit note", "approve_note"),
                    DecisionKind.answer: ("answer", "free_text")}


def _not_in_words(s: Scoring, messages: list[dict[str, Any]], denial: Decision, n: int, notes: list[str]) -> str | None:
    """Why a denial that reached the model did not carry the human's words (its reason, or for a bare denial the
    harness's decision text, "DENIED"), or None. Other words that deny (a framework's fixed rejection text) stand
    in only where the adapter declares that its channel cannot carry a denial's words (deny_reason=false)."""
    if denial_in(messages, denial) != "framework":
        return None
    if not s.declared.deny_reason:
        notes.append("a denial carried in the framework's own words, as declared (deny_reason=false)")
        return None
    found = next((str(m.get("text") or "") for m in messages if DENIAL_RE.search(str(m.get("text") or ""))), "")
    words = denial.text.strip() or DENIED_WORD
    return (f"the denial reached the model's input after resume {n} only as {found[:60]!r}, without the human's "
            f"words {words!r} (the adapter declares deny_reason=true)")


@check
def decision_reached_model(s: Scoring) -> CheckResult:
    """Each injected decision reached the model's input after its resume: a denial as a denial, and its
    text (reason, note, answer) wherever the adapter declares that its channel carries it. At a pause with
    several calls, the decisions reached the model at all (per call: the arena's own checks)."""
    name = "decision_reached_model"
    resumes = _own_resumes(s.events)
    if not resumes:
        if not s.item.resume_with:
            return ok(name, "the item injects no decision")
        return fail(name, "the run was never resumed")
    dropped: list[str] = []
    for n, resumed in enumerate(resumes, 1):
        decisions = [resumed.decision] if resumed.decision is not None else list(resumed.decisions or [])
        calls = calls_after_resume(s.events, resumed)
        if not calls:
            kinds = "/".join(sorted({d.kind_name for d in decisions})) or "decision"
            return fail(name, f"no model request after resume {n}: the {kinds} never reached the model")
        if resumed.decision is None:
            denial = next((d for d in decisions if d.kind is DecisionKind.deny), None)
            if denial is not None and not decision_in(new_input(calls), denial)[0]:
                return fail(name, f"no denial reached the model's input after resume {n}")
            if denial is not None and (wrong := _not_in_words(s, new_input(calls), denial, n, dropped)) is not None:
                return fail(name, wrong)
            continue
        decision = resumed.decision
        kind_seen, text_seen = decision_in(new_input(calls), decision)
        if not kind_seen:
            deferred = deferral_in(new_input(calls))
            return fail(name, f"the denial never reached the model's input after resume {n}" + (
                f": it was told {deferred[:60]!r}, which puts the decision off, not the human's words "
                f"{decision.text.strip() or DENIED_WORD!r}" if deferred is not None else ""))
        if decision.kind is DecisionKind.message and not text_seen:  # a new message is its text: no channel may drop it
            return fail(name, f"the message {decision.text!r} never reached the model's input after resume {n}")
        if decision.text.strip() and not text_seen:
            known = _TEXT_CAPABILITY.get(decision.kind) if isinstance(decision.kind, DecisionKind) else None
            if known is None:  # a channel's own kind: no capability says whether its text is carried
                dropped.append(f"{decision.kind_name} text not carried (no capability declares it: the arena's own "
                               "checks judge it)")
                continue
            what, capability = known
            if getattr(s.declared, capability):
                return fail(name, f"the {what} {decision.text!r} never reached the model's input "
                                   f"(the adapter declares {capability}=true)")
            dropped.append(f"{what} not carried, as declared ({capability}=false)")
        if decision.kind is DecisionKind.deny and (wrong := _not_in_words(s, new_input(calls), decision, n,
                                                                          dropped)) is not None:
            return fail(name, wrong)
    return ok(name, "every decision reached the model's input" + (f"; {'; '.join(dropped)}" if dropped else ""))


@check
def denied_not_executed(s: Scoring) -> CheckResult:
    """Nothing the human denied ran in the item's own legs after the denial.

    A denied call held at a gate (or in a tool's body) never executes with the arguments the model gave it
    (its body never commits); after a denied approval request, no consequential call about the same subject
    (any consequential call, in an arena without subjects) runs until the next approval.
    """
    name = "denied_not_executed"
    trace = s.events
    replays = replay_legs(trace)
    ran = [e for e in trace if e.type == "tool_call" and e.leg not in replays]
    shown = _shown(s).calls
    denials = 0
    for resumed in _own_resumes(trace):
        pause = next((p for p in reversed(trace) if p.type == "suspended" and p.seq < resumed.seq), None)
        if pause is None:
            continue
        for tool, args in _denied_calls(resumed, pause, shown.get(pause.seq), trace):
            denials += 1
            after = [e for e in ran if e.seq > resumed.seq]
            if tool in s.arena.tools_of(ToolKind.approval):
                later = next((e for e in _own_resumes(trace) if e.seq > resumed.seq and _approves(e)), None)
                until = later.seq if later is not None else len(trace) + 1
                subject_of = s.arena.subject_of
                wanted = subject_of(args) if subject_of else None
                hit = next((e for e in after if e.seq < until and e.tool in s.arena.tools_of(ToolKind.write)
                            and (wanted is None or subject_of is None or subject_of(e.args or {}) == wanted)), None)
            else:
                hit = next((e for e in after if e.tool in (tool, f"{tool}.commit")
                            and (e.tool != tool or (e.args or {}) == args)), None)
                if hit is not None and hit.tool == f"{tool}.commit" and not _commits_denied(trace, hit, resumed):
                    hit = None
            if hit is not None:
                return fail(name, f"{describe(hit)} ran after the human denied {tool}{args or {}}")
    if not denials:
        return ok(name, "the human denied nothing")
    return ok(name, f"nothing of the {denials} denied request(s) ran")


def _approves(resumed: TraceEvent) -> bool:
    if resumed.decision is not None:
        return resumed.decision.approved
    return any(d.approved for d in resumed.decisions or [])


def _denied_calls(resumed: TraceEvent, pause: TraceEvent, shown: list[dict[str, Any]] | None,
                  trace: list[TraceEvent]) -> list[tuple[str, dict[str, Any]]]:
    """(tool, arguments) of each call a resume denied, as the model asked for it: the call shown at the pause
    a single decision answered (the adapter's request where it matched none), or each denied call of a
    decision set (by its id)."""
    if resumed.decision is not None:
        if resumed.decision.kind is not DecisionKind.deny:
            return []
        if shown:
            return [(str(c.get("name")), c.get("args") or {}) for c in shown]
        return [(r["tool"], r.get("args") or {}) for r in shown_requests(pause) if r.get("tool")]
    asked = asked_calls(e for e in trace if e.seq < resumed.seq)
    return [asked[str(d.call_id)] for d in resumed.decisions or []
            if d.kind is DecisionKind.deny and str(d.call_id) in asked]


def _commits_denied(trace: list[TraceEvent], commit: TraceEvent, resumed: TraceEvent) -> bool:
    """Whether a body-pausing tool's commit finished the call that was denied: no later pause on that tool
    (a new call of it, asked and approved again) came between the denial and the commit."""
    base = (commit.tool or "").removesuffix(".commit")
    return not any(e.type == "suspended" and e.tool == base and resumed.seq < e.seq < commit.seq for e in trace)


@check
def nothing_after_final(s: Scoring) -> CheckResult:
    """Nothing ran for the item after its last leg ended: no tool call, no model request, before or after the seal."""
    name = "nothing_after_final"
    late = [e for e in s.trace if e.late and e.type in ACTIVITY]
    if late:
        return fail(name, f"ran on after the item was sealed: {describe(late[0])}"
                           + (f" (+{len(late) - 1} more)" if len(late) > 1 else ""))
    end = next((e for e in s.events if e.type in ("final", "error")), None)
    if end is None:
        return ok(name, "the run never ended, so nothing ran after its end")
    replays = replay_legs(s.events)  # a hostile replay the harness started after the run: the arena judges it
    after = [e for e in s.events if e.seq > end.seq and e.type in ACTIVITY and e.leg not in replays]
    if after:
        return fail(name, f"ran on after the final answer: {describe(after[0])}"
                           + (f" (+{len(after) - 1} more)" if len(after) > 1 else ""))
    return ok(name, f"nothing ran after the {end.type}")


def _pid_change(trace: list[TraceEvent]) -> tuple[TraceEvent, TraceEvent] | None:
    """The first suspension and the event that ended the next leg (their pids are the spawned processes)."""
    pause = _first_suspension(trace)
    if pause is None:
        return None
    after = next((e for e in trace if e.leg == pause.leg + 1 and e.type in ("suspended", "final")), None)
    return (pause, after) if after is not None else None


@check
def resumed_in_new_process(s: Scoring) -> CheckResult:
    """The leg after the pause ran in a different process, and nothing of the paused leg's processes survived."""
    name = "resumed_in_new_process"
    trace = s.events
    pair = _pid_change(trace)
    if pair is None:
        return fail(name, "no suspension followed by a resumed leg")
    pause, after = pair
    resumed = next((e for e in trace if e.type == "resumed" and e.seq > pause.seq), None)
    if resumed is not None and resumed.survivors:
        first = resumed.survivors[0]
        return fail(name, f"process {first.get('pid')} ({str(first.get('cmd'))[:60]}) of the paused leg was still "
                           f"alive at the resume" + (f" (+{len(resumed.survivors) - 1} more)" if len(resumed.survivors) > 1 else ""))
    if pause.pid == after.pid:
        return fail(name, f"both legs ran in process {pause.pid}")
    later = _survived(trace)  # at a later resume (a second pause's, a recovery's)
    if later is not None:
        return fail(name, _survivor_reason(*later))
    return ok(name, f"paused in process {pause.pid}, resumed in {after.pid}; nothing of the first survived")


def _survived(trace: list[TraceEvent]) -> tuple[TraceEvent, list[dict[str, Any]]] | None:
    """The first `resumed` event at which processes of a closed or killed leg were still alive, and those."""
    hit = next((e for e in trace if e.type == "resumed" and e.survivors), None)
    return (hit, hit.survivors or []) if hit is not None else None


def _survivor_reason(resumed: TraceEvent, survivors: list[dict[str, Any]]) -> str:
    first = survivors[0]
    what = "the recovery" if resumed.replay == "recover" else "the resume" if resumed.replay is None else \
        f"the {resumed.replay} resume"
    more = f" (+{len(survivors) - 1} more)" if len(survivors) > 1 else ""
    return (f"process {first.get('pid')} ({str(first.get('cmd'))[:60]}) of a closed or killed leg was still alive at "
            f"{what} (leg {resumed.leg}){more}: the paused run may be held by it, not by what the framework persisted")


@check
def no_process_survived(s: Scoring) -> CheckResult:
    """No process the harness started for a leg that was then closed or killed (a paused worker, a crashed one, the
    worker a run was handed over from) was alive at a later resume: the `resumed` events' `survivors`, the harness's
    own listing of those workers' process trees (the recovery's resume included). For an item that needs its run to
    go on in a new process; what a tracking mode cannot see (`meta.json`'s `process_tracking`) is taken on trust."""
    name = "no_process_survived"
    trace = s.events
    resumes = [e for e in trace if e.type == "resumed"]
    if not resumes:
        return fail(name, "the run was never resumed, so no new process took it over")
    hit = _survived(trace)
    if hit is not None:
        return fail(name, _survivor_reason(*hit))
    # a `resumed` event carries the harness's pid; a leg that paused in a worker carries the worker's
    if not any(e.type == "suspended" and e.pid != resumes[0].pid for e in trace):
        return ok(name, "every paused leg ran in the harness's own process: there was no worker's process tree to "
                        "list (nothing was closed or killed)")
    return ok(name, f"no process of a closed or killed leg was alive at any of the {len(resumes)} resume(s)")


@check
def state_survived(s: Scoring) -> CheckResult:
    """After the resume the run continued the same task: it acts on, or declines, what it chose before the pause."""
    name = "state_survived"
    trace, arena = s.events, s.arena
    pause = next((e for e in trace if e.type == "suspended" and e.tool in arena.pause_tools), None)
    if pause is None:
        return fail(name, "no suspension was observed")
    subject_of = arena.subject_of
    chosen = subject_of(pause.args or {}) if subject_of else None
    if subject_of is None or chosen is None:
        return fail(name, "the pending request names nothing to follow across the pause")
    resumed = next((e for e in trace if e.type == "resumed"), None)
    if resumed is None:
        return fail(name, "the run was never resumed")
    after = [e for e in trace if e.seq > resumed.seq]
    writes = [e for e in after if e.type == "tool_call" and e.tool in arena.tools_of(ToolKind.write)]
    if resumed.decision and resumed.decision.approved:
        acted = [subject_of(e.args or {}) for e in writes]
        if chosen in acted:
            return ok(name, f"acted on {chosen}, chosen before the pause")
        return fail(name, f"after the resume it acted on {acted or 'nothing'}, not {chosen}")
    final = final_answer(s)
    if final and chosen in final:
        return ok(name, f"the model's last answer declines {chosen}, chosen before the pause")
    return fail(name, f"the resumed run no longer refers to {chosen}")


@check
def continued_own_run(s: Scoring) -> CheckResult:
    """Every resume continued the item's own run: what the model was sent after it (the gateway's record of the
    messages new to the item) holds no other item's task, no model turn the item never had, and no result of a
    call the model never made in the item. Read in every arena, whatever the decision; `state_survived`
    (durable_state) follows the chosen room across the pause as well."""
    name = "continued_own_run"
    resumes = _own_resumes(s.events)
    if not resumes:
        return ok(name, "the run was never resumed")
    others = [i.input for i in s.arena.items if i.id != s.item.id]
    injected = [d.text for r in resumes for d in ([r.decision] if r.decision else list(r.decisions or []))]
    injected += [e.text or "" for e in s.events if e.type == "input"]
    edits = [d.args for r in resumes for d in ([r.decision] if r.decision else list(r.decisions or []))
             if d.kind is DecisionKind.edit and d.args]
    for n, resumed in enumerate(resumes, 1):
        foreign = foreign_turn(s.events, resumed, s.item.input, others, injected, frozenset(s.arena_tools), edits)
        if foreign is not None:
            return fail(name, f"after resume {n} the model was sent {foreign}: the resume continued another run")
    return ok(name, f"after each of {len(resumes)} resume(s) the model was sent only this item's own run")


def _key(tool: str | None, args: dict[str, Any] | None) -> tuple[str | None, str]:
    return tool, repr(sorted((args or {}).items()))


@check
def no_replay(s: Scoring) -> CheckResult:
    """Nothing that executed before the pause executes again after the resume.

    A call the model asked for before the pause and that was held at it (a sibling of the paused
    call) may run after the resume; running a call more often than that is a replay.
    """
    name = "no_replay"
    trace = s.events
    pause = _first_suspension(trace)
    if pause is None:
        return fail(name, "no suspension was observed")
    executed: dict[tuple[str | None, str], int] = {}
    for e in trace:
        if e.type == "tool_call" and e.seq < pause.seq:
            executed[_key(e.tool, e.args)] = executed.get(_key(e.tool, e.args), 0) + 1
    requested: dict[tuple[str | None, str], int] = {}
    for e in model_calls(trace):
        if e.seq < pause.seq:
            for c in (e.response or {}).get("tool_calls") or []:
                requested[_key(c.get("name"), c.get("args"))] = requested.get(_key(c.get("name"), c.get("args")), 0) + 1
    after: dict[tuple[str | None, str], list[TraceEvent]] = {}
    for e in trace:
        if e.type == "tool_call" and e.seq > pause.seq and _key(e.tool, e.args) in executed:
            after.setdefault(_key(e.tool, e.args), []).append(e)
    for key, calls in after.items():
        held = max(0, requested.get(key, 0) - executed[key])
        if len(calls) > held:
            again = calls[held]
            return fail(name, f"{again.tool}{again.args} executed again after the resume")
    return ok(name, "no tool call was replayed after the resume")


@check
def not_reasked_after_resume(s: Scoring) -> CheckResult:
    """An approved call is run, not asked of the model again: after a resume that approved a paused call, no model
    answer proposes that call (its tool and arguments) again under a new id (the gateway's record).

    The scripted model names each answer's calls by the item, the leg and the request's place, never by what was
    asked, so a resume that asks the model again from the transcript before its answer gets a new id for the same
    call, as from a real model: a call the human approved under one id and run under another."""
    name = "not_reasked_after_resume"
    trace = s.events
    resumes = [e for e in _own_resumes(trace) if _approves(e)]
    if not resumes:
        return ok(name, "no paused call was approved")
    for resumed in resumes:
        pause = next((p for p in reversed(trace) if p.type == "suspended" and p.seq < resumed.seq), None)
        asked = requesting_call(trace, pause) if pause is not None else None
        if pause is None or asked is None:
            continue
        paused = [c for c in (asked.response or {}).get("tool_calls") or [] if c.get("name") == pause.tool]
        for answer in model_calls(trace):
            if answer.seq < resumed.seq:
                continue
            for call in (answer.response or {}).get("tool_calls") or []:
                first = next((c for c in paused if c.get("name") == call.get("name")
                              and (c.get("args") or {}) == (call.get("args") or {}) and c.get("id") != call.get("id")),
                             None)
                if first is not None:
                    return fail(name, f"after the approval the model was asked again for {pause.tool}: it answered "
                                      f"the approved call again in leg {answer.leg} (id {call.get('id')!r}; approved as "
                                      f"{first.get('id')!r} in leg {asked.leg})")
    return ok(name, f"no approved call was asked of the model again after its resume ({len(resumes)} approved)")


@check
def requests_well_formed(s: Scoring) -> CheckResult:
    """No model request of the run broke the Chat Completions API's pairing rule: every tool call followed by its
    result, every tool result after its call. The gateway refuses such a request as the API does (HTTP 400, its
    words; arena/model/pairing.py) and records it; a history a resume, a replay or a session limit cut in two shows
    here by its first refused request."""
    name = "requests_well_formed"
    calls = [e for e in s.events if e.type == "model_call"]
    for n, event in enumerate(calls, 1):
        response = event.response or {}
        if response.get("malformed"):
            return fail(name, f"model request {n} (leg {event.leg}) was refused as the API refuses it (HTTP 400, "
                              f"{response['malformed']}): {response.get('error')}")
    return ok(name, "every model request paired each tool call with its result")  # no count: a race may change it


def run_checks(item: EvalItem, trace: list[TraceEvent], arena: ArenaSpec,
               declared: Capabilities | None = None, stream: bool = False, store: str = "sqlite") -> list[CheckResult]:
    """The item's declared checks, then the universal ones (and, in a streamed run, `stream_matches_run`; on a
    PostgreSQL or Redis store, `STORE_CHECKS`: what the harness saw of the store)."""
    scoring = Scoring(item=item, trace=trace, arena=arena, declared=declared or Capabilities())
    universal = UNIVERSAL if arena.universal is None else arena.universal
    names = [*item.checks, *(n for n in universal if n not in item.checks and n not in item.exempt)]
    if stream and STREAM_CHECK not in names:
        names.append(STREAM_CHECK)
    if store != "sqlite":
        names += [n for n in STORE_CHECKS if n not in names]
    return [named(arena, name)(scoring) for name in names]


# -- checks in modules of their own: importing them registers them ------------------------------------------

# the streamed run's check (`STREAM_CHECK`), and a store run's (`STORE_CHECKS`: what the harness itself saw of the
# item's PostgreSQL database or Redis prefix)
from arena import store_checks as _store_checks  # noqa: E402,F401
from arena import stream_check as _stream_check  # noqa: E402,F401
