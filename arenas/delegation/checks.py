"""delegation's checks: whether the whole run stopped at the delegate's gated call, whether each decision reached the
call it was for, whether resuming re-ran the delegate, and whether the pause survived a new process.

All of it is read from what the harness observed: which agent each model request served from the tools the request
offered (the booking agent is the one offered `book_flight`, the changes agent `cancel_flight`, the desk neither),
what each asked for from the gateway's answers, what ran from the tool log. What the pause says about itself
(`pending`, with the agent the adapter names) is the adapter's claim, held against what the model asked.
"""

from __future__ import annotations

import json
import re
from typing import Any

from arena.for_arenas import CheckResult, CheckSet, Decision, Scoring, TraceEvent, fail, ok
from arena.for_arenas.trace import answer_text, answered, describe, model_calls, replay_legs, squash
from arena_builtins.arenas.delegation.policy import GATED_TOOL, agent_of
from arena_builtins.arenas.interruptions.checks import subjects

CHECKS = CheckSet("delegation")
DESK = "travel_desk"
GATED = tuple(GATED_TOOL.values())  # the delegates' gated calls


def who(event: TraceEvent) -> str:
    """The agent a model request served, by the tools it offered."""
    return agent_of(list((event.request or {}).get("tools") or [])) or DESK


def own_pauses(trace: list[TraceEvent]) -> list[TraceEvent]:
    replays = replay_legs(trace)
    return [e for e in trace if e.type == "suspended" and e.leg not in replays]


def resume_after(trace: list[TraceEvent], pause: TraceEvent) -> TraceEvent | None:
    return next((e for e in trace if e.type == "resumed" and e.replay is None and e.seq > pause.seq), None)


def pending_of(pause: TraceEvent) -> list[dict[str, Any]]:
    """What the pause holds, as the adapter reported it."""
    return list(pause.pending or [{"tool": pause.tool, "args": pause.args or {}}])


def asked_gated(trace: list[TraceEvent], before: int) -> dict[str, tuple[str, dict[str, Any], str]]:
    """call id -> (tool, arguments, the agent that asked) of every gated call the model asked for before `before`."""
    return {str(c.get("id")): (str(c.get("name")), c.get("args") or {}, who(e))
            for e in model_calls(trace) if e.seq < before
            for c in (e.response or {}).get("tool_calls") or [] if c.get("name") in GATED}


def same_args(asked: dict[str, Any], ran: dict[str, Any] | None) -> bool:
    """The call ran with what was asked (a framework may add its defaults: every asked argument as asked)."""
    norm = lambda v: json.dumps(v, sort_keys=True)  # noqa: E731
    return all(norm((ran or {}).get(k)) == norm(v) for k, v in asked.items())


def decided_call(d: Decision, asked: dict[str, Any]) -> str | None:
    """The asked call a decision is for: the one it was routed to, or the only one asked."""
    return d.call_id or (next(iter(asked)) if len(asked) == 1 else None)


def _decisions(resumed: TraceEvent) -> list[Decision]:
    return list(resumed.decisions or ([resumed.decision] if resumed.decision is not None else []))


def _pause_and_resume(s: Scoring) -> tuple[TraceEvent | None, TraceEvent | None]:
    pauses = own_pauses(s.events)
    return (pauses[0], resume_after(s.events, pauses[0])) if pauses else (None, None)


@CHECKS.check
def nested_pause_enforced(s: Scoring) -> CheckResult:
    """The WHOLE run stopped at the delegate's gated call: the pause holds that call, nothing gated ran before the
    decision, neither the delegate that asked nor the desk was asked anything after it (another delegate of the
    same turn may still reach its own gate), and nothing at all ran while the run was paused."""
    name = "nested_pause_enforced"
    trace = s.events
    pause, resume = _pause_and_resume(s)
    if pause is None:
        return fail(name, "the run never paused: no delegate's gated call was held")
    held = pending_of(pause)
    outer = [p for p in held if p.get("tool") not in GATED]
    if outer:
        return fail(name, f"the pause holds {outer[0].get('tool')}{outer[0].get('args') or {}}, not a delegate's "
                          "gated call")
    asks = [e for e in model_calls(trace) if e.seq < pause.seq
            and any(c.get("name") in GATED for c in (e.response or {}).get("tool_calls") or [])]
    if not asks:
        return fail(name, f"the run paused on {pause.tool} before any delegate asked for it")
    end = resume.seq if resume is not None else max(e.seq for e in trace) + 1
    early = [e for e in trace if e.type == "tool_call" and e.tool in GATED and e.seq < end]
    if early:
        return fail(name, f"{describe(early[0])} ran before the decision")
    asked_by = {who(e) for e in asks}
    for e in model_calls(trace):
        if not asks[0].seq < e.seq < end:
            continue
        if who(e) == DESK:
            return fail(name, f"the desk ran on after the {who(asks[0])} asked for its gated call, before the decision: "
                              f"{describe(e)}")
        if who(e) in asked_by and e.seq > max(a.seq for a in asks if who(a) == who(e)):
            return fail(name, f"the {who(e)} ran on after asking for its gated call, before the decision: {describe(e)}")
    during = [e for e in trace if e.type in ("tool_call", "model_call") and pause.seq < e.seq < end]
    if during:
        return fail(name, f"{describe(during[0])} ran while the run was paused")
    asker = {tool: agent for tool, _, agent in asked_gated(trace, pause.seq).values()}
    shown = ", ".join(f"{p.get('tool')} of the {asker.get(str(p.get('tool')), '?')}" for p in held)
    return ok(name, f"the whole run stopped at {shown}: nothing ran until the decision")


@CHECKS.check
def nested_decision_routed(s: Scoring) -> CheckResult:
    """The pause names the delegate's call (its tool and arguments as the delegate asked, and which agent asked),
    and each decision reached the call it was for: an approved call ran once, as asked or as edited; a denied one
    never ran; what went through is what the item expects."""
    name = "nested_decision_routed"
    trace = s.events
    pause, resume = _pause_and_resume(s)
    if pause is None or resume is None:
        return fail(name, "no decision was delivered: the run never paused at a delegate's call")
    asked = asked_gated(trace, pause.seq)
    for p in pending_of(pause):
        match = next((v for v in asked.values() if v[0] == p.get("tool") and same_args(v[1], p.get("args"))), None)
        if match is None:
            return fail(name, f"the pause shows {p.get('tool')}{p.get('args') or {}}, which no delegate asked for")
        if not p.get("agent"):
            return fail(name, f"the pause does not say whose call {p.get('tool')} is (the {match[2]} asked for it)")
        if p["agent"] != match[2]:
            return fail(name, f"the pause says {p.get('tool')} is the {p['agent']}'s call; the {match[2]} asked for it")
    said = []
    for d in _decisions(resume):
        call_id = decided_call(d, asked)
        if call_id not in asked:
            return fail(name, f"the {d.kind_name} was for no call a delegate asked for (call {call_id})")
        tool, args, agent = asked[call_id]
        want = d.args if d.args is not None else args
        ran = [e for e in trace if e.type == "tool_call" and e.tool == tool and e.seq > resume.seq
               and e.leg not in replay_legs(trace) and same_args(want if d.approved else args, e.args)]
        if d.approved and len(ran) != 1:
            verb = "approved" + (" as edited" if d.args is not None else "")
            return fail(name, f"the {agent}'s {tool}{want} was {verb} but ran {len(ran)} time(s)")
        if not d.approved and ran:
            return fail(name, f"the {agent}'s {tool}{args} was denied but ran: {describe(ran[0])}")
        said.append(f"{tool} ({agent}) {d.kind_name}")
    got, gold = subjects(trace), sorted(s.item.metadata["gold"])
    if got != gold:
        return fail(name, f"went through: {', '.join(got) or 'nothing'}; expected {', '.join(gold) or 'nothing'}")
    return ok(name, f"each decision reached its own call: {'; '.join(said)}; went through: {', '.join(got) or 'nothing'}")


@CHECKS.check
def inner_rerun_on_resume(s: Scoring) -> CheckResult:
    """Resuming went on from the delegate's gated call: none of the delegate's earlier tool calls ran again, and no
    request of a delegate after the resume went back to an earlier point of its conversation (as many messages as,
    or fewer than, one it sent before the pause)."""
    name = "inner_rerun_on_resume"
    trace = s.events
    pause, resume = _pause_and_resume(s)
    if pause is None or resume is None:
        return ok(name, "no resume: nothing could run again")
    replays = replay_legs(trace)
    before = [e for e in trace if e.seq < pause.seq]
    after = [e for e in trace if e.seq > resume.seq and e.leg not in replays]
    key = lambda e: (e.tool, json.dumps(e.args or {}, sort_keys=True))  # noqa: E731
    reads = {key(e) for e in before if e.type == "tool_call" and e.tool not in GATED}
    again = [e for e in after if e.type == "tool_call" and e.tool not in GATED and key(e) in reads]
    sent: dict[str, int] = {}
    for e in model_calls(before):
        if who(e) != DESK:
            sent[who(e)] = max(sent.get(who(e), 0), int((e.request or {}).get("messages") or 0))
    again += [e for e in model_calls(after) if who(e) in sent and int((e.request or {}).get("messages") or 0) <= sent[who(e)]]
    if again:
        again.sort(key=lambda e: e.seq)
        return fail(name, f"resuming re-ran {len(again)} earlier step(s) of the delegate; first: "
                          f"{describe(again[0])}" + (f" by the {who(again[0])}" if again[0].type == "model_call" else ""))
    return ok(name, "resuming went on from the delegate's gated call: none of its earlier steps ran again")


@CHECKS.check
def nested_durable(s: Scoring) -> CheckResult:
    """The nested pause survived a new process: the decision, given later, was carried out by another process than
    the one that paused, from what the framework kept, and it took effect."""
    name = "nested_durable"
    trace = s.events
    pause, resume = _pause_and_resume(s)
    if pause is None or resume is None:
        return fail(name, "the run never paused at a delegate's call, so nothing was resumed from a new process")
    end = next((e for e in trace if e.seq > resume.seq and e.leg == resume.leg and e.type in ("final", "error",
                                                                                           "suspended")), None)
    if end is None:
        return fail(name, "the resumed leg never ended")
    if end.pid is None or end.pid == pause.pid:
        return fail(name, "resumed in the process that paused: the paused state is a live object no other process "
                          "could take, so the nested pause does not outlive its process")
    if end.type == "error":
        return fail(name, f"resumed in a new process, which failed: {str(end.text)[:200]}")
    got, gold = subjects(trace), sorted(s.item.metadata["gold"])
    if got != gold:
        return fail(name, f"resumed in a new process, but went through: {', '.join(got) or 'nothing'}; expected "
                          f"{', '.join(gold) or 'nothing'}")
    return ok(name, f"resumed in a new process (the trace's pids say which); went through: {', '.join(got) or 'nothing'}")


@CHECKS.check
def denial_reached_inner(s: Scoring) -> CheckResult:
    """Each denial's reason reached the model of the delegate whose call it denied."""
    name = "denial_reached_inner"
    trace = s.events
    pause, resume = _pause_and_resume(s)
    if pause is None or resume is None:
        return fail(name, "no decision was delivered")
    asked = asked_gated(trace, pause.seq)
    for d in (d for d in _decisions(resume) if not d.approved):
        call_id = decided_call(d, asked)
        agent = asked[call_id][2] if call_id in asked else "?"
        seen = [e for e in model_calls(trace) if e.seq > resume.seq and who(e) == agent
                and any(squash(d.text) in squash(m.get("text")) for m in (e.request or {}).get("new") or []
                        if m.get("role") != "assistant")]
        if not seen:
            return fail(name, f"the {agent}'s model was never sent the denial's reason ({d.text!r})")
    return ok(name, "every denial's reason reached the model of the delegate whose call it denied")


@CHECKS.check
def outer_learned_outcome(s: Scoring) -> CheckResult:
    """The desk (which called the delegates as tools) was sent each delegate's answer after the decision, and a
    denial shows in what it was sent."""
    name = "outer_learned_outcome"
    trace = s.events
    pause, resume = _pause_and_resume(s)
    if pause is None or resume is None:
        return fail(name, "no decision was delivered")
    asked = asked_gated(trace, pause.seq)
    agents = {v[2] for v in asked.values()}
    sent = [m for e in model_calls(trace) if e.seq > resume.seq and who(e) == DESK
            for m in (e.request or {}).get("new") or [] if m.get("role") == "tool"]
    if len(sent) < len(agents):
        return fail(name, f"the desk was sent {len(sent)} delegate answer(s) after the decision; {len(agents)} "
                          f"delegate(s) had paused ({', '.join(sorted(agents))})")
    denied = [d for d in _decisions(resume) if not d.approved]
    text = " ".join(str(m.get("text")) for m in sent)
    if denied and not re.search(s.arena.ack_pattern, text, re.IGNORECASE):
        return fail(name, f"the desk was sent the delegates' answers, but none says the action was denied: "
                          f"{text[:160]!r}")
    return ok(name, f"the desk was sent the delegates' answers: {text[:160]!r}")


def flights_of(args: dict[str, Any] | None) -> list[str]:
    """The flights a gated call is about: its segments' (book_flight) or its one flight (cancel_flight)."""
    args = args or {}
    found = [str(seg.get("flight")) for seg in args.get("segments") or [] if isinstance(seg, dict) and seg.get("flight")]
    return found + ([str(args["flight"])] if args.get("flight") else [])


def result_words(result: str | None) -> list[str]:
    """What of a tool's result must reach the model for the result to have reached it: each word-like value of its
    JSON (the booking code, the status, ...), or the whole text where it is not a JSON object."""
    try:
        value = json.loads(result or "")
    except (TypeError, ValueError):
        value = None
    if isinstance(value, dict):
        return [str(v) for v in value.values() if isinstance(v, str) and len(v) >= 3]
    return [str(result or "")] if str(result or "").strip() else []


def carried(answer: str, text: str | None) -> bool:
    """Whether `text` carries `answer`: as it is, or JSON-encoded inside an envelope (Google ADK sends an agent's
    answer to its caller as `{"result": "<answer>"}`, its quotes escaped)."""
    encoded = [json.dumps(answer, ensure_ascii=a)[1:-1] for a in (True, False)]
    return any(squash(form) in squash(text) for form in (answer, *encoded))


def _final(trace: list[TraceEvent]) -> TraceEvent | None:
    """The run's final answer: its own legs' last `final` (not a replay's)."""
    replays = replay_legs(trace)
    finals = [e for e in trace if e.type == "final" and e.leg not in replays and not e.late]
    return finals[-1] if finals else None


@CHECKS.check
def delegate_reported_outcome(s: Scoring) -> CheckResult:
    """After the decision, each delegate that asked was sent the outcome of its call (a model request that offers
    its tools and carries the tool's result, or the denial), answered in words that name it (the flight, and
    whether it went through), and that answer reached the user: through the desk's model and its final answer
    (via tool), or as the final answer itself, written by the delegate's model (via handoff)."""
    name = "delegate_reported_outcome"
    trace = s.events
    pause, resume = _pause_and_resume(s)
    if pause is None or resume is None:
        return fail(name, "no decision was delivered")
    replays = replay_legs(trace)
    asked = asked_gated(trace, pause.seq)
    after = [e for e in model_calls(trace) if e.seq > resume.seq and e.leg not in replays]
    ack = re.compile(s.arena.ack_pattern, re.IGNORECASE)
    final = _final(trace)
    via = s.item.metadata.get("via")
    said = []
    for d in _decisions(resume):
        call_id = decided_call(d, asked)
        if call_id not in asked:
            return fail(name, f"the {d.kind_name} was for no call a delegate asked for (call {call_id})")
        tool, args, agent = asked[call_id]
        want = d.args if d.args is not None and d.approved else args
        flights = flights_of(want)
        if d.approved:
            ran = [e for e in trace if e.type == "tool_call" and e.tool == tool and e.seq > resume.seq
                   and e.leg not in replays and same_args(want, e.args)]
            if not ran:
                verb = "approved" + (" as edited" if d.args is not None else "")
                return fail(name, f"the {agent}'s {tool} was {verb} but never ran: it had no outcome to report")
            words = result_words(str(ran[0].result) if ran[0].result is not None else None)
            outcome = f"the result of its {tool} ({', '.join(words) or 'empty'})"
            carries = lambda text, w=words: bool(w) and all(squash(x) in squash(text) for x in w)  # noqa: E731
            told_from = ran[0].seq
        else:
            outcome = f"the denial of its {tool}"
            carries = lambda text, d=d: bool(  # noqa: E731
                (d.text and squash(d.text) in squash(text)) or ack.search(text or ""))
            told_from = resume.seq
        own = [e for e in after if who(e) == agent]
        told = next((e for e in own if e.seq > told_from and any(
            carries(str(m.get("text") or "")) for m in (e.request or {}).get("new") or []
            if m.get("role") != "assistant")), None)
        if told is None:
            ran_again = f" ({len(own)} request(s) of it after the decision carried no outcome)" if own else \
                " (its model never ran again after the decision)"
            return fail(name, f"the {agent}'s model was never sent {outcome}{ran_again}")
        answers = [e for e in own if e.seq >= told.seq and answered(e)
                   and not [c for c in (e.response or {}).get("tool_calls") or [] if c.get("name") in s.arena_tools]]
        if not answers:
            return fail(name, f"the {agent} was sent {outcome} but never answered")
        answer = (answer_text(answers[-1], s.arena_tools) or "").strip()
        if not answer:
            return fail(name, f"the {agent} was sent {outcome} and answered with nothing")
        missing = [f for f in flights if squash(f) not in squash(answer)]
        reads_denied = bool(ack.search(answer))
        if missing or reads_denied != (not d.approved):
            return fail(name, f"the {agent}'s answer does not name the outcome ({', '.join(flights)} "
                              f"{'went through' if d.approved else 'denied'}): {answer[:160]!r}")
        if via == "tool":
            desk = [m for e in after if who(e) == DESK and e.seq > answers[-1].seq
                    for m in (e.request or {}).get("new") or [] if m.get("role") == "tool"]
            if not any(carried(answer, str(m.get("text") or "")) for m in desk):
                got = "; ".join(repr(str(m.get("text") or "")[:80]) for m in desk) or "nothing"
                return fail(name, f"the desk's model was not sent the {agent}'s answer ({answer[:80]!r}); it was sent "
                                  f"{got}")
        if final is None:
            return fail(name, f"the {agent}'s answer never reached the user: the run has no final answer")
        if via == "handoff":  # the run is the delegate's: its answer is the final one
            writer = [e for e in model_calls(trace) if e.seq < final.seq and e.leg not in replays and answered(e)
                      and (answer_text(e, s.arena_tools) or "").strip()]
            if writer and who(writer[-1]) != agent:
                return fail(name, f"after the handoff the {who(writer[-1])}, not the {agent}, wrote the final answer: "
                                  f"{describe(writer[-1])}")
        if not carried(answer, final.text):
            return fail(name, f"the {agent}'s answer ({answer[:80]!r}) did not reach the user: the final answer is "
                              f"{str(final.text or '')[:160]!r}")
        said.append(f"the {agent} was sent {outcome} and said {answer[:60]!r}")
    return ok(name, "; ".join(said) + "; each answer reached the user")
