"""doc_review's scripted model: a document reviewer that does exactly what the request lists, in one turn.

It reads the request (which changes to accept or reject, which suggestions to make, which comments
to answer and resolve), looks at the document once (`list_changes`, `list_comments`), then asks for
every edit in ONE turn, as several tool calls, and finally reports call by call what was applied
and what the reviewer turned down (a result with no line starting "ok:" is read as not applied).
Profiles:
- `reviewer`: the calls in the order the request lists them;
- `reviewer-shuffled`: the same calls in another order (reversed, replies first), so that a decision
  routed by position instead of by call id lands on the wrong call.
"""

from __future__ import annotations

import re
from typing import Any

from arena.for_arenas.script import Call, Policy, ToolCall, Turn, calls_with_results, native_messages, user_texts

ACCEPT_RE = re.compile(r"\bAccept (?:[^:.]*?: )?changes? ([\d ,and]+)", re.IGNORECASE)
REJECT_RE = re.compile(r"\bReject (?:[^:.]*?: )?changes? ([\d ,and]+)", re.IGNORECASE)
PROPOSE_RE = re.compile(r'\bPropose replacing "([^"]+)" with "([^"]+)" in paragraph (\d+)')
REPLY_RE = re.compile(r'\bReply to comment (\d+): "([^"]+)"')
RESOLVE_RE = re.compile(r"\bResolve comment (\d+)")
READS = ("list_changes", "list_comments")


def plan(task: str) -> list[ToolCall]:
    """The calls a request asks for, in the order it lists them."""
    found: list[tuple[int, ToolCall]] = []
    for regex, name in ((ACCEPT_RE, "accept_change"), (REJECT_RE, "reject_change")):
        for match in regex.finditer(task):
            for n, change in enumerate(re.findall(r"\d+", match.group(1))):
                found.append((match.start() + n, ToolCall(name, {"change_id": change})))
    for match in PROPOSE_RE.finditer(task):
        found.append((match.start(), ToolCall("propose_edit", {"paragraph": int(match.group(3)),
                                                               "find": match.group(1), "replace": match.group(2)})))
    for match in REPLY_RE.finditer(task):
        found.append((match.start(), ToolCall("reply_comment", {"comment_id": match.group(1), "text": match.group(2)})))
    for match in RESOLVE_RE.finditer(task):
        found.append((match.start(), ToolCall("resolve_comment", {"comment_id": match.group(1)})))
    return [call for _, call in sorted(found, key=lambda f: f[0])]


def applied_result(result: str | None) -> bool:
    """Whether a call's result says it ran: the tool's own "ok: ..." line, alone or inside a framework's note
    (an edited call's result can come wrapped in the framework's account of the edit)."""
    return re.search(r"(?m)^ok:", result or "") is not None


def label(call: Call | ToolCall) -> str:
    """How the reviewer names a call in its final answer (the checks read the answer with it)."""
    args = call.args
    if call.name == "propose_edit":
        return f"suggestion {args.get('find')!r} -> {args.get('replace')!r}"
    if call.name in ("reply_comment", "resolve_comment"):
        return f"{call.name.split('_')[0]} comment {args.get('comment_id')}"
    return f"{call.name.split('_')[0]} change {args.get('change_id')}"


def _review(messages: list[dict[str, Any]], shuffled: bool) -> Turn:
    messages = native_messages(messages)
    calls = calls_with_results(messages)
    if not any(c.name in READS for c in calls):
        return Turn(tool_calls=[ToolCall(name, {}) for name in READS])
    wanted = plan("\n".join(user_texts(messages)))
    edits = [c for c in calls if c.name not in READS and c.name != "read_paragraph"]
    if not edits:
        if shuffled:
            replies = [c for c in wanted if c.name == "reply_comment"]
            wanted = replies + [c for c in reversed(wanted) if c.name != "reply_comment"]
        return Turn(tool_calls=wanted) if wanted else Turn(content="Nothing to change in this document.")
    applied = [label(c) for c in edits if applied_result(c.result)]
    refused = [f"{label(c)} ({(c.result or 'no result').strip()[:120]})" for c in edits if not applied_result(c.result)]
    text = "Review done. Applied: " + ("; ".join(applied) or "nothing") + "."
    if refused:
        text += " Not applied (denied by the reviewer): " + "; ".join(refused) + "."
    return Turn(content=text)


_POLICIES: dict[str, Policy] = {
    "reviewer": lambda messages: _review(messages, shuffled=False),
    "reviewer-shuffled": lambda messages: _review(messages, shuffled=True),
}


def policies() -> dict[str, Policy]:
    return dict(_POLICIES)


def descriptions() -> dict[str, str]:
    return {name: " ".join(text.split()).rstrip(";.") for name, text in
            re.findall(r"^- `([\w-]+)`: (.+?)(?=^- `|^\S|\Z)", __doc__ or "", re.MULTILINE | re.DOTALL)}
