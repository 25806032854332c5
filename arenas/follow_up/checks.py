"""follow_up's own checks: what became of the follow-up leg (its `replayed` event) and what the model could say of
the booking from the request it was sent (the gateway's record of its answer: the scripted model keeps no memory
between requests, so its answer says what the request carried)."""

from __future__ import annotations

from arena.for_arenas import CheckResult, CheckSet, Scoring, TraceEvent, fail, ok
from arena.for_arenas.trace import answer_text, answered
from arena_builtins.arenas.follow_up.channel import FOLLOW_UP, FOLLOW_UP_TEXT
from arena_builtins.arenas.follow_up.policy import BOOKED_ANSWER, NO_RECORD

CHECKS = CheckSet("follow_up")  # this arena's own checks (ArenaSpec.checks)


def follow_up_leg(trace: list[TraceEvent]) -> tuple[TraceEvent, TraceEvent | None] | None:
    """(the follow-up's `resumed` event, its `replayed` event once it ended), or None where none was sent."""
    start = next((e for e in trace if e.type == "resumed" and (e.text or "").startswith(f"{FOLLOW_UP}:")), None)
    if start is None:
        return None
    end = next((e for e in trace if e.type == "replayed" and e.leg == start.leg), None)
    return start, end


def _not_sent(trace: list[TraceEvent]) -> str:
    last = next((e for e in reversed(trace) if e.type in ("final", "error")), None)
    why = "the run never ended" if last is None else f"the run ended in an error ({(last.text or '')[:120]})" \
        if last.type == "error" else "the run never paused, so there was no approval to follow up on"
    return f"no follow-up was sent: {why}"


@CHECKS.check
def follow_up_answered(s: Scoring) -> CheckResult:
    """The user's follow-up after the run, sent the framework's way, ended with an answer (not an error, a refused
    request, a pause)."""
    name = "follow_up_answered"
    leg = follow_up_leg(s.events)
    if leg is None:
        return fail(name, _not_sent(s.events))
    start, end = leg
    if end is None:
        return fail(name, f"the follow-up (leg {start.leg}) never ended")
    if end.result != "finished":
        return fail(name, f"the follow-up (leg {start.leg}) ended {end.result}: {(end.text or '')[:300]}")
    return ok(name, f"the follow-up (leg {start.leg}) was answered")


@CHECKS.check
def history_kept(s: Scoring) -> CheckResult:
    """The follow-up's model request carried the question and the run's booking with its result: the model's answer
    (the gateway's record) names the room booked after an approval, or that nothing was booked after a denial."""
    name = "history_kept"
    leg = follow_up_leg(s.events)
    if leg is None:
        return fail(name, _not_sent(s.events))
    start = leg[0]
    calls = [e for e in s.events if e.type == "model_call" and e.leg == start.leg and not e.late]
    if not calls:
        return fail(name, f"the follow-up (leg {start.leg}) sent the model no request")
    asked = any(FOLLOW_UP_TEXT in (m.get("text") or "") for e in calls for m in (e.request or {}).get("new") or []
                if m.get("role") == "user")
    if not asked:
        return fail(name, "no request of the follow-up carried the user's question")
    first = calls[0]
    if not answered(first):
        return fail(name, f"the follow-up's first request was refused: {(first.response or {}).get('error', '')!s:.300}")
    said = answer_text(first) or ""
    room = s.item.metadata["expected_room"]
    if said.startswith(NO_RECORD):
        return fail(name, "the follow-up's request carried no result of the run's book_room call: the model, which "
                          "keeps no memory between requests, could not say what became of the booking")
    if not said.startswith(BOOKED_ANSWER):
        return fail(name, f"the follow-up was answered {said[:160]!r}, not from the conversation's booking")
    approved = s.item.resume_with[0].approved
    if approved and f"BOOKED {room}" not in said:
        return fail(name, f"after the approval of {room} the follow-up's request carried {said[len(BOOKED_ANSWER):][:160]!r}")
    if not approved and "nothing was booked" not in said:
        return fail(name, f"after the denial the follow-up's request carried {said[len(BOOKED_ANSWER):][:160]!r}")
    what = f"room {room} booked" if approved else "the denied booking"
    return ok(name, f"the follow-up's request carried the question and {what}, with its result")
