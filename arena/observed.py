"""The model side of a trace, as the harness's gateway recorded it: what the model was sent and answered.

Checks and reports read a run's words from here, never from what an adapter says the run said.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from arena.types import Decision, DecisionKind, TraceEvent

# Words that carry a denial to a model, whoever phrased it (the human, the harness or a framework's
# fixed rejection text).
DENIAL_RE = re.compile(r"\b(denied|deny|rejected|reject|declined|refused|not approved|not executed)\b", re.IGNORECASE)


def squash(text: str | None) -> str:
    """Case- and whitespace-insensitive form for 'does this text appear there'."""
    return " ".join((text or "").split()).casefold()


def model_calls(trace: Iterable[TraceEvent], *, late: bool = False) -> list[TraceEvent]:
    return [e for e in trace if e.type == "model_call" and bool(e.late) == late]


def answered(event: TraceEvent) -> bool:
    return bool(event.response) and event.response.get("status") == 200


def answer_text(event: TraceEvent, tools: set[str] | frozenset[str] = frozenset()) -> str | None:
    """What an answer says in words: its text, or the text it hands to a final-answer tool.

    Some frameworks make the model finish through a tool (smolagents' `final_answer`); a call to a
    tool that is not one of the arena's own is read as such an answer.
    """
    response = event.response or {}
    text = response.get("text")
    if text:
        return str(text)
    words = [str(v) for c in response.get("tool_calls") or [] if c.get("name") not in tools
             for v in (c.get("args") or {}).values() if isinstance(v, str)]
    return "\n".join(words) if words else None


def last_answer(trace: list[TraceEvent]) -> TraceEvent | None:
    """The model's last answer in the item (not late), if it has one."""
    calls = [e for e in model_calls(trace) if answered(e)]
    return calls[-1] if calls else None


def new_input(calls: Iterable[TraceEvent]) -> list[dict]:
    """Messages the model was sent for the first time in these requests, except its own (assistant) ones."""
    return [m for e in calls for m in (e.request or {}).get("new") or [] if m.get("role") != "assistant"]


def window(trace: list[TraceEvent], start: TraceEvent, stop_types: tuple[str, ...]) -> list[TraceEvent]:
    """Events after `start` up to (not including) the next event of one of `stop_types`."""
    out = []
    for e in trace:
        if e.seq <= start.seq or e.late:
            continue
        if e.type in stop_types:
            break
        out.append(e)
    return out


def calls_after_resume(trace: list[TraceEvent], resumed: TraceEvent) -> list[TraceEvent]:
    """Model requests of the leg a resume started."""
    return [e for e in window(trace, resumed, ("resumed",)) if e.type == "model_call"]


def decision_in(messages: list[dict], decision: Decision) -> tuple[bool, bool]:
    """(the decision's kind shows in these messages, its text does), as a model reading them would see."""
    text = squash(" ".join(str(m.get("text") or "") for m in messages))
    has_text = bool(decision.text.strip()) and squash(decision.text) in text
    if decision.kind is DecisionKind.deny:
        kind = has_text or bool(DENIAL_RE.search(text))
    else:
        kind = bool(messages)
    return kind, has_text


def requesting_call(trace: list[TraceEvent], pause: TraceEvent) -> TraceEvent | None:
    """The model answer, in the paused leg, that asked for the pending call."""
    found = None
    for e in model_calls(trace):
        if e.seq >= pause.seq:
            break
        if e.leg == pause.leg and any(c.get("name") == pause.tool for c in (e.response or {}).get("tool_calls") or []):
            found = e
    return found


def describe(event: TraceEvent) -> str:
    """One short phrase for an activity event, for check reasons."""
    if event.type == "tool_call":
        return f"{event.tool}{event.args or {}}"
    if event.type == "model_call":
        response = event.response or {}
        calls = [c.get("name") for c in response.get("tool_calls") or []]
        said = f"answered {', '.join(map(str, calls))}" if calls else (
            f"answered {str(response.get('text') or '')[:40]!r}" if response.get("status") == 200
            else f"HTTP {response.get('status')}")
        return f"a model request ({said})"
    return event.type
