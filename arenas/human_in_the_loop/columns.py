"""The matrix columns human_in_the_loop contributes: the pause itself, a held sibling, and the decision.

Each is an item rule over one item's result and merged trace (see `arena.report.columns`).
"""

from __future__ import annotations

from arena.for_arenas.trace import DENIAL_RE, decision_in
from arena.for_arenas.report import Column, check_of, model_input_after, rule_pause_enforced, was_denied
from arena.for_arenas import DecisionKind, ItemResult

ARENA = "human_in_the_loop"


def rule_sibling_held(r: ItemResult) -> tuple[bool, str] | None:
    c = check_of(r, "no_tool_before_suspend")
    if c is None:
        return None
    if not c.passed:
        return False, c.reason
    if was_denied(r):
        unused = check_of(r, "tool_not_used")
        if unused is not None and not unused.passed:
            return False, f"held until the pause, but after the denial: {unused.reason}"
        return True, f"{c.reason}; denied, and {unused.reason if unused else 'no tool_not_used check'}"
    return True, c.reason


def _snippet(messages: list[dict], needle: str) -> str:
    for m in messages:
        text = " ".join(str(m.get("text") or "").split())
        if needle.casefold() in text.casefold():
            return text if len(text) <= 80 else text[:79] + "…"
    return ""


def rule_denial_reaches(r: ItemResult) -> tuple[bool, str] | None:
    """Denied items: the model's input after the resume carries the denial (its reason, or a denial word)."""
    denials = [(d, m) for d, m in model_input_after(r) if d.kind is DecisionKind.deny]
    if not denials:
        return None
    for decision, messages in denials:
        if messages is None:
            return False, "no model request followed the denial"
        if not decision_in(messages, decision)[0]:
            return False, "the model's input after the resume holds no denial"
    messages = denials[0][1] or []
    found = DENIAL_RE.search(" ".join(str(m.get("text") or "") for m in messages))
    shown = _snippet(messages, denials[0][0].text) if denials[0][0].text.strip() else ""
    shown = shown or (_snippet(messages, found.group(0)) if found else "")
    return True, f"the model's input after the resume: {shown!r}"


def rule_free_text(r: ItemResult) -> tuple[bool, str] | None:
    """Items whose decisions have text: every such text is in the model's input after its resume."""
    texts = [(d, m) for d, m in model_input_after(r) if d.text.strip()]
    if not texts:
        return None
    for decision, messages in texts:
        if messages is None:
            return False, f"no model request followed the resume, so {decision.text!r} never reached the model"
        if not decision_in(messages, decision)[1]:
            return False, f"the model's input after the resume lacks {decision.text!r}"
    first = texts[0][0].text
    return True, f"the model's input after the resume contains {first!r}" + (f" (+{len(texts) - 1})" if len(texts) > 1 else "")


COLUMNS = (
    Column("declared_kind", "declared kind", ARENA, ("scripted",),
           "pause kind the adapter declares (meta.json pause_kind)", kind="declared"),
    Column("measured_kind", "measured kind", ARENA, ("scripted",),
           "enforced if every item's `suspended` check passed; none if no item has a `suspended` event; "
           "else partial n/N", kind="measured", family="pause"),
    Column("pause_enforced", "pause enforced", ARENA, ("scripted",),
           "items whose `suspended` check passed", rule=rule_pause_enforced, family="pause"),
    Column("sibling_held", "sibling tool held", ARENA, ("scripted-eager",),
           "items whose `no_tool_before_suspend` passed and, if denied, `tool_not_used` passed",
           rule=rule_sibling_held, family="pause"),
    Column("denial_reaches", "denial reaches model", ARENA, ("scripted",),
           "denied items (a `resumed` event with a deny decision) whose model input after the resume (the "
           "messages new in the `model_call` events of that leg) carries the denial: its reason or a denial word",
           rule=rule_denial_reaches,
           empty_note="no deny decision was injected (the run never resumed with a denial)", family="decision"),
    Column("free_text", "free text carried", ARENA, ("scripted",),
           "items whose injected decisions have text, and whose model input after each resume contains that "
           "text (case- and whitespace-insensitive)",
           rule=rule_free_text, empty_note="no decision with text was injected (the run never resumed with one)", family="decision"),
)
