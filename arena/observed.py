"""The model side of a trace, as the harness's gateway recorded it: what the model was sent and answered.

Checks and reports read a run's words from here, never from what an adapter says the run said.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

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
    return event.response is not None and bool(event.response) and event.response.get("status") == 200


RECOVER = "recover"  # the `replay` of a resume a director makes to recover a run whose process was killed


def answers_pause(event: TraceEvent) -> bool:
    """Whether this event is the human's decision reaching the run: a resume of its own (`replay` None), or a
    recovery's resume that gives the decision again after the run asked again (`replay` "recover", with a
    decision). A hostile replay's resume, or a recovery that continues without a decision, answers nothing."""
    if event.type != "resumed":
        return False
    return event.replay is None or (event.replay == RECOVER and (event.decision is not None
                                                                 or event.decisions is not None))


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


def new_input(calls: Iterable[TraceEvent]) -> list[dict[str, Any]]:
    """Messages the model was sent for the first time in these requests, except its own (assistant) ones."""
    return [m for e in calls for m in (e.request or {}).get("new") or [] if m.get("role") != "assistant"]


def instructions_sent(trace: list[TraceEvent]) -> list[tuple[TraceEvent, list[str]]]:
    """Each model request with the text of every system (or developer) message it carried, in order: the gateway
    records a repeated message only by its digest (`system`), resolved here to the text first recorded under it
    (`new`). A request recorded without `system` (a trace of an older harness) carries an empty list."""
    texts: dict[str, str] = {}
    out = []
    for e in model_calls(trace):
        request = e.request or {}
        for m in request.get("new") or []:
            if m.get("digest"):
                texts[str(m["digest"])] = str(m.get("text") or "")
        out.append((e, [texts.get(str(d), "") for d in request.get("system") or []]))
    return out


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


def replay_legs(trace: list[TraceEvent]) -> set[int]:
    """Legs the harness started itself to resume a saved state again (`arena.runner.replay` in a leg of its own,
    after the run or at its next pause): what runs there answers the replay, not the run."""
    return {e.leg for e in trace if e.type == "resumed" and e.replay in ("after_run", "at_next_pause")}


def raced(trace: list[TraceEvent]) -> bool:
    """Whether the item resumed one paused state twice at the same moment (a `concurrent` replay): which of the
    two ends how is a race the framework settles, so its checks may differ from one run of it to the next."""
    return any(e.type == "resumed" and e.replay == "concurrent" for e in trace)


def calls_after_resume(trace: list[TraceEvent], resumed: TraceEvent) -> list[TraceEvent]:
    """Model requests of the leg a resume started, up to the next resume of the same kind (a hostile replay
    of a saved state, recorded as a resume of its own, does not end the leg it interrupts)."""
    out = []
    for e in trace:
        if e.seq <= resumed.seq or e.late:
            continue
        if e.type == "resumed" and (e.replay is None) == (resumed.replay is None):
            break
        if e.type == "model_call":
            out.append(e)
    return out


# A rejection that puts the decision off rather than making it ("not approved yet, try again later") is no denial.
DEFERRAL_RE = re.compile(r"\b(yet|later|try again|retry|pending|for now|until)\b", re.IGNORECASE)
# The human's word for a denial as the harness injects it (`Decision.as_text()` of a bare denial: "DENIED").
DENIED_WORD = Decision(kind=DecisionKind.deny).as_text()
_DENIED_WORD_RE = re.compile(rf"\b{re.escape(DENIED_WORD)}\b", re.IGNORECASE)

DenialCarried = Literal["words", "framework"]


def denial_in(messages: list[dict[str, Any]], decision: Decision) -> DenialCarried | None:
    """How a denial reached these messages: `words`, in the human's words (its reason, or for a bare denial the
    harness's decision text as injected, "DENIED"); `framework`, only in other words that still deny (a
    framework's fixed rejection text, "rejected by user") and do not put the decision off ("not approved yet,
    try again later" is none); None, not at all."""
    texts = [squash(str(m.get("text") or "")) for m in messages]
    if decision.text.strip() and squash(decision.text) in " ".join(texts):
        return "words"
    if any(_DENIED_WORD_RE.search(t) for t in texts):
        return "words"
    if any(DENIAL_RE.search(t) and not DEFERRAL_RE.search(t) for t in texts):
        return "framework"
    return None


def deferral_in(messages: list[dict[str, Any]]) -> str | None:
    """The text of a message that words a denial as a deferral ("not approved yet, try again later"), if any."""
    return next((str(m.get("text")) for m in messages if DENIAL_RE.search(str(m.get("text") or ""))
                 and DEFERRAL_RE.search(str(m.get("text") or ""))), None)


def decision_in(messages: list[dict[str, Any]], decision: Decision) -> tuple[bool, bool]:
    """(the decision's kind shows in these messages, its text does), as a model reading them would see. A denial
    shows in the human's words or in a framework's own words that deny (see `denial_in`)."""
    text = squash(" ".join(str(m.get("text") or "") for m in messages))
    has_text = bool(decision.text.strip()) and squash(decision.text) in text
    if decision.kind is DecisionKind.deny:
        kind = denial_in(messages, decision) is not None
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


def asked_calls(trace: Iterable[TraceEvent]) -> dict[str, tuple[str, dict[str, Any]]]:
    """call id -> (tool, arguments) of every call the model asked for, as the gateway recorded it."""
    return {str(c.get("id")): (str(c.get("name")), c.get("args") or {})
            for e in model_calls(trace) for c in (e.response or {}).get("tool_calls") or []}


def _tool_results(event: TraceEvent) -> set[str]:
    """Ids of the calls whose results the model was sent for the first time in this request."""
    return {str(m["tool_call_id"]) for m in (event.request or {}).get("new") or []
            if m.get("role") == "tool" and m.get("tool_call_id")}


def prepared_amount(trace: list[TraceEvent], tool: str, args: dict[str, Any] | None, before: int,
                    after: int = -1) -> Any:
    """What the prepare step of a body-pausing `tool` called with `args` computed (its `amount`), as the
    harness's tool log recorded it, latest between `after` and `before`; None when it never ran there."""
    for e in reversed(trace):
        if after < e.seq < before and e.type == "tool_call" and e.tool == f"{tool}.prepare" \
                and (e.args or {}) == (args or {}):
            try:
                value = json.loads(e.result or "")
            except ValueError:
                return None
            return value.get("amount") if isinstance(value, dict) else None
    return None


def shown_requests(pause: TraceEvent) -> list[dict[str, Any]]:
    """What the adapter surfaced to the human at a pause: every pending call it reported."""
    if pause.pending:
        return [dict(p) for p in pause.pending]
    return [{"tool": pause.tool, "args": pause.args or {}}] if pause.tool is not None else []


def show_call(tool: Any, args: Any) -> str:
    return f"{tool}{json.dumps(args or {}, sort_keys=True)}"


@dataclass
class Shown:
    """What the adapter showed the human at each pause, read against what the model asked."""

    calls: dict[int, list[dict[str, Any]]] = field(default_factory=dict)  # pause seq -> the model's calls it showed
    mismatch: str | None = None  # the first pause that showed something else, said in a sentence


def read_pauses(trace: list[TraceEvent], pause_tools: set[str], body_tools: set[str]) -> Shown:
    """Match every request shown at a pause with the model's own call, as far as the first mismatch.

    The harness knows which calls the model asked for (the gateway's record, with the model's ids) and
    which are still open at each pause: asked, not yet sent a result, and not settled by a decision at an
    earlier pause (a malformed or null decision settles nothing, so the same call may be shown again; a crash
    before the settled call's result reached the model reopens it, as the recovered run may ask again).
    Every request shown at a pause must be one of those calls, with its tool, its arguments and its id
    (where the adapter gives one); a body-pausing tool adds the `amount` its prepare step computed, and
    that amount must be the one the tool log shows. A pause inside such a tool's body (its prepare step
    ran for that call, after the model asked for it) that shows the model's arguments without the amount
    is a mismatch: a pause before a payment shows what will be paid.
    """
    shown = Shown()
    open_calls: list[dict[str, Any]] = []
    decided: list[dict[str, Any]] = []  # settled by a decision, their results not yet sent: a crash may undo that
    asked_at: dict[int, int] = {}  # id() of an open call -> seq of the model answer that asked for it
    pauses = 0
    last_pause: TraceEvent | None = None
    for e in trace:
        if e.late:
            continue
        if e.type == "model_call":
            answered_ids = _tool_results(e)
            open_calls = [c for c in open_calls if str(c.get("id")) not in answered_ids]
            decided = [c for c in decided if str(c.get("id")) not in answered_ids]
            if answered(e):
                new_calls = [c for c in (e.response or {}).get("tool_calls") or [] if c.get("name") in pause_tools]
                asked_at.update({id(c): e.seq for c in new_calls})
                open_calls += new_calls
        elif answers_pause(e) and last_pause is not None:
            settled = _settled(e, shown.calls.get(last_pause.seq, []))
            decided += [c for c in open_calls if str(c.get("id")) in settled]
            open_calls = [c for c in open_calls if str(c.get("id")) not in settled]
        elif e.type == "crashed" and decided:  # the process died before the decision's call answered the model:
            open_calls, decided = open_calls + decided, []  # a recovery may ask about it again (the same call)
        elif e.type == "suspended":
            pauses, last_pause = pauses + 1, e
            matched: list[dict[str, Any]] = []
            for request in shown_requests(e):
                call = next((c for c in open_calls if c not in matched and _same(request, c, trace, e.seq, body_tools)),
                            None)
                unpriced = _without_amount(request, call, trace, e.seq, asked_at.get(id(call), -1), body_tools) \
                    if call is not None else None
                if unpriced is not None:
                    shown.mismatch = f"at pause {pauses} the human was shown {unpriced}"
                    return shown
                if call is None:
                    shown.mismatch = f"at pause {pauses} the human was shown {_unmatched(request, open_calls)}"
                    return shown
                matched.append(call)
            shown.calls[e.seq] = matched
    return shown


def _without_amount(request: dict[str, Any], call: dict[str, Any], trace: list[TraceEvent], before: int, after: int,
                    body_tools: set[str]) -> str | None:
    """A body-pausing call shown inside its body without the amount its prepare step computed, said in words;
    None when the amount was shown or no prepare ran for the call before the pause (a gate before the call)."""
    if call.get("name") not in body_tools or "amount" in (request.get("args") or {}):
        return None
    amount = prepared_amount(trace, str(call.get("name")), call.get("args") or {}, before, after)
    if amount is None:
        return None
    return (f"{show_call(request.get('tool'), request.get('args'))} without the amount its prepare step computed "
            f"({amount}): a pause before a payment must show what will be paid")


def _unmatched(request: dict[str, Any], open_calls: list[dict[str, Any]]) -> str:
    """A shown request that is none of the open calls, beside what the model asked for."""
    said = show_call(request.get("tool"), request.get("args"))
    same_id = next((c for c in open_calls if request.get("call_id") is not None
                    and str(c.get("id")) == str(request["call_id"])), None)
    if same_id is not None:
        return f"{said} as call {request['call_id']}; the model asked for {show_call(same_id.get('name'), same_id.get('args'))} under that id"
    asked = ", ".join(show_call(c.get("name"), c.get("args")) for c in open_calls) or "nothing still open"
    return f"{said}; the model asked for {asked}"


def _settled(resumed: TraceEvent, shown: list[dict[str, Any]]) -> set[str]:
    """Ids of the shown calls a resume decided (approve, edit, deny, answer): they are no longer pending."""
    if resumed.decisions is not None:
        return {str(d.call_id) for d in resumed.decisions if d.call_id is not None and d.kind is not DecisionKind.null}
    if resumed.decision is not None and resumed.decision.kind is not DecisionKind.null:
        return {str(c.get("id")) for c in shown}
    return set()


def _same(shown: dict[str, Any], call: dict[str, Any], trace: list[TraceEvent], before: int, body_tools: set[str]) -> bool:
    """Whether a shown request is this call of the model's: tool, arguments (and id, where shown)."""
    if shown.get("tool") != call.get("name"):
        return False
    if shown.get("call_id") is not None and str(shown["call_id"]) != str(call.get("id")):
        return False
    args, asked = dict(shown.get("args") or {}), call.get("args") or {}
    if args == asked:
        return True
    if call.get("name") in body_tools and "amount" in args and "amount" not in asked:
        amount = args.pop("amount")
        return args == asked and amount == prepared_amount(trace, str(call.get("name")), asked, before)
    return False


def foreign_turn(trace: list[TraceEvent], resumed: TraceEvent, own_input: str, other_inputs: Iterable[str],
                 injected: Iterable[str] = (), tools: set[str] | frozenset[str] = frozenset(),
                 edits: Iterable[dict[str, Any]] = ()) -> str | None:
    """What the model was sent after a resume that is not this item's run, said in words; None if nothing.

    Read from the messages new to the item in the requests of the resumed leg (the gateway's record): a user
    message that is another item's task (`other_inputs`, never this item's own input or a text the harness
    injected); an earlier model turn calling one of the arena's `tools` with arguments the model never answered
    in this item; a tool result for a call id the model never gave this item, where the item's earlier tool
    results carried the model's own ids (a framework that mints its own ids is not read this way). A model turn
    whose call carries a human's edit (`edits`: the replacement arguments, whole or merged into the model's own)
    is the item's own: a framework may write the edited call into its transcript.
    """
    edited = list(edits)
    own = squash(own_input)
    foreign = {squash(t) for t in other_inputs} - {own} - {squash(t) for t in injected} - {""}
    before = [e for e in model_calls(trace) if e.seq < resumed.seq]
    ids_before = {str(c.get("id")) for e in before for c in (e.response or {}).get("tool_calls") or []}
    uses_model_ids = any(m.get("role") == "tool" and str(m.get("tool_call_id")) in ids_before
                         for e in before for m in (e.request or {}).get("new") or [])
    for call in calls_after_resume(trace, resumed):
        earlier = [e for e in model_calls(trace) if e.seq < call.seq and answered(e)]
        asked = [(c.get("name"), c.get("args") or {}) for e in earlier for c in (e.response or {}).get("tool_calls") or []]
        ids = {str(c.get("id")) for e in earlier for c in (e.response or {}).get("tool_calls") or []}
        for m in (call.request or {}).get("new") or []:
            role = m.get("role")
            if role == "user" and squash(str(m.get("text") or "")) in foreign:
                return f"another item's task, {str(m.get('text'))[:70]!r}"
            if role == "assistant":
                for c in m.get("tool_calls") or []:
                    args = c.get("args") or {}
                    if any(args == e or any(n == c.get("name") and args == {**a, **e} for n, a in asked) for e in edited):
                        continue
                    if c.get("name") in tools and (c.get("name"), args) not in asked:
                        return f"a model turn this item never had, {show_call(c.get('name'), c.get('args'))}"
            if role == "tool" and uses_model_ids and m.get("tool_call_id") and str(m["tool_call_id"]) not in ids:
                return f"the result of call {m['tool_call_id']}, which the model never made in this item"
    return None
