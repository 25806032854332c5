"""Building blocks of scripted policies: the turn a policy answers, and how it reads a conversation.

A scripted policy (each arena has its own, see `ArenaSpec.policies`) is a pure function from the
messages it is sent to one assistant turn. Like a real model it keeps no memory between requests
and reads the conversation however the framework shaped it; the readers here undo those shapes:
content as a list of parts, tool history sent as text (smolagents), results wrapped as
`{"result": ...}` (Google ADK), calls paired with their results by id or by position.
"""

from __future__ import annotations

import ast
import hashlib
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import Any

DENY_RE = re.compile(r"\b(denied|deny|rejected|reject|declined|not approved|refused)\b|^\s*no\b", re.IGNORECASE)
LEADING_APPROVE_RE = re.compile(r"^\s*(approved|yes)\b", re.IGNORECASE)
APPROVE_RE = re.compile(r"\b(approved|approve|yes|go ahead|granted|confirmed)\b", re.IGNORECASE)


@dataclass
class ToolCall:
    name: str
    args: dict[str, Any]


@dataclass
class Turn:
    """One assistant turn: text, or one or more tool calls."""

    content: str | None = None
    tool_calls: list[ToolCall] = field(default_factory=list)


# A scripted policy: the conversation a request carries -> the turn the model answers.
Policy = Callable[[list[dict[str, Any]]], Turn]


@dataclass(frozen=True)
class Draw:
    """Which run of which item a request belongs to. A sampled policy decides its deviations from it alone,
    so a run is reproducible for a seed while epochs (and seeds) differ, as a real model's runs do."""

    item_id: str = ""
    epoch: int = 1
    seed: int = 0

    def uniform(self, purpose: str) -> float:
        """A number in [0, 1), fixed by (seed, item, epoch, purpose)."""
        digest = hashlib.sha256(f"{self.seed}/{self.item_id}/{self.epoch}/{purpose}".encode()).digest()
        return int.from_bytes(digest[:8], "big") / 2**64


class Sampled:
    """A policy that also reads the `Draw`; the runner binds it to each item's run (`bind`). Called
    unbound (a request made for no particular item), it draws as epoch 1 of seed 0 of no item."""

    def __init__(self, policy: Callable[..., Turn]) -> None:
        self.policy = policy

    def __call__(self, messages: list[dict[str, Any]]) -> Turn:
        return self.policy(messages, draw=Draw())

    def bind(self, draw: Draw) -> Policy:
        return partial(self.policy, draw=draw)


class SeesTools:
    """A policy that also reads the tools the request offers (`tools` of the Chat Completions request, as sent), as
    a real model does: an agent hands over by whatever its framework offers for it (`transfer_to_agent(agent_name)`,
    `transfer_to_<name>`). Called with the messages alone, it is offered nothing."""

    def __init__(self, policy: Callable[[list[dict[str, Any]], list[dict[str, Any]]], Turn]) -> None:
        self.policy = policy

    def __call__(self, messages: list[dict[str, Any]]) -> Turn:
        return self.policy(messages, [])

    def offered(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Turn:
        return self.policy(messages, tools)


def bind(policies: Mapping[str, Policy], draw: Draw) -> dict[str, Policy]:
    """The policies one item's endpoint serves: sampled ones bound to its draw, the rest as they are."""
    return {name: p.bind(draw) if isinstance(p, Sampled) else p for name, p in policies.items()}


def text_of(content: Any) -> str:
    """Message content as plain text, whether a string or a list of content parts."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, dict):
                parts.append(str(part.get("text") or part.get("content") or ""))
            else:
                parts.append(str(part))
        return "\n".join(p for p in parts if p)
    return str(content)


# Tool history sent as text (smolagents' ToolCallingAgent): an assistant message ending in
# "Calling tools:\n[<Python repr of the calls: id, type, function{name, arguments(dict)}>]" answered by a
# user message "Observation:\n<result>[\n<result>...]" (a step's results joined by newlines, in the listed
# order), which may be merged with the next user text ("New task:\n...", "Call id: ...\nError:\n...", the
# max-steps final-answer prompt "Based on the above, please provide an answer ...").
TEXT_CALLS_RE = re.compile(r"(?:^|\n)Calling tools:\n(\[.*\])\s*$", re.DOTALL)
TEXT_BLOCK_RE = re.compile(r"^(?=Observation:\n|New task:\n|Call id: |Based on the above, please provide)", re.MULTILINE)


def _text_calls(text: str) -> tuple[str, list[dict[str, Any]]] | None:
    """(text before the calls, native tool_calls) of a 'Calling tools:' message, or None."""
    found = TEXT_CALLS_RE.search(text)
    if not found:
        return None
    try:
        listed = ast.literal_eval(found.group(1))
    except (ValueError, SyntaxError):
        return None
    if not isinstance(listed, list) or not all(isinstance(c, dict) for c in listed):
        return None
    calls = []
    for i, call in enumerate(listed):
        fn = call.get("function") or {}
        args = fn.get("arguments")
        calls.append(
            {
                "id": str(call.get("id") or f"text_call_{i}"),
                "type": "function",
                "function": {"name": fn.get("name", ""), "arguments": args if isinstance(args, str) else json.dumps(args or {})},
            }
        )
    return text[: found.start()].strip(), calls


def native_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rewrite tool history sent as text into native assistant `tool_calls` and `tool` messages."""
    out: list[dict[str, Any]] = []
    pending: list[str] = []  # ids of the latest text calls not answered yet
    for message in messages:
        role = message.get("role")
        if role == "assistant" and not message.get("tool_calls"):
            parsed = _text_calls(text_of(message.get("content")))
            if parsed is not None:
                before, calls = parsed
                out.append({"role": "assistant", "content": before or None, "tool_calls": calls})
                pending = [c["id"] for c in calls]
                continue
        if role == "user" and pending:
            rest = []
            for block in TEXT_BLOCK_RE.split(text_of(message.get("content"))):
                if block.startswith("Observation:\n") and pending:
                    body = block[len("Observation:\n") :].strip("\n")
                    lines = body.split("\n")
                    results = lines if len(pending) > 1 and len(lines) == len(pending) else [body] * len(pending)
                    out.extend({"role": "tool", "tool_call_id": cid, "content": r} for cid, r in zip(pending, results))
                    pending = []
                elif block.strip():
                    rest.append(block.strip("\n"))
            if rest:
                out.append({"role": "user", "content": "\n".join(rest)})
            continue
        out.append(message)
    return out


def unwrap_result(text: str) -> str:
    """A tool result as the tool returned it, out of a `{"result": value}` envelope if it has one.

    Some frameworks (Google ADK) send a tool's plain return value to the model as the JSON object
    {"result": value}; a model reads through that envelope, so the policy does too.
    """
    try:
        value = json.loads(text)
    except (json.JSONDecodeError, TypeError):
        return text
    if isinstance(value, dict) and list(value) == ["result"]:
        inner = value["result"]
        return inner if isinstance(inner, str) else json.dumps(inner)
    return text


@dataclass
class Call:
    """A tool call the assistant made earlier in the conversation, with its result once answered."""

    id: str | None
    name: str
    args: dict[str, Any]
    result: str | None = None


def calls_with_results(messages: list[dict[str, Any]]) -> list[Call]:
    """Every tool call the assistant made, paired with its result (by id, else by position)."""
    calls: list[Call] = []
    by_id: dict[str, Call] = {}
    unanswered: list[Call] = []
    for message in messages:
        role = message.get("role")
        if role == "assistant":
            for tc in message.get("tool_calls") or []:
                fn = tc.get("function") or {}
                raw = fn.get("arguments")
                try:
                    args = json.loads(raw) if isinstance(raw, str) and raw else (raw or {})
                except json.JSONDecodeError:
                    args = {}
                call = Call(id=tc.get("id"), name=fn.get("name", ""), args=args if isinstance(args, dict) else {})
                calls.append(call)
                unanswered.append(call)
                if call.id:
                    by_id[call.id] = call
        elif role == "tool":
            result = unwrap_result(text_of(message.get("content")))
            target = by_id.get(message.get("tool_call_id") or "")
            if target is None and unanswered:
                target = unanswered[0]
            if target is not None:
                target.result = result
                if target in unanswered:
                    unanswered.remove(target)
    return calls


def last_call(calls: list[Call], name: str) -> Call | None:
    for call in reversed(calls):
        if call.name == name:
            return call
    return None


def user_texts(messages: list[dict[str, Any]]) -> list[str]:
    return [text_of(m.get("content")) for m in messages if m.get("role") == "user"]


def classify_decision(text: str) -> str:
    """'deny', 'approve' or 'unclear'. A leading approval wins; otherwise a denial word ('NOT APPROVED')."""
    if LEADING_APPROVE_RE.search(text):
        return "approve"
    if DENY_RE.search(text):
        return "deny"
    if APPROVE_RE.search(text):
        return "approve"
    return "unclear"


def reason_of(text: str) -> str:
    """The human's reason in a denial ('DENIED: <reason>'), or the whole text."""
    match = re.search(r"(?:denied|rejected|not approved)\s*[:\-]\s*(.+)", text, re.IGNORECASE | re.DOTALL)
    return (match.group(1) if match else text).strip().rstrip(".")


def note_of(text: str) -> str:
    """The human's note on an approval ('APPROVED: <note>'), echoed so tests can see it arrived."""
    match = re.match(r"\s*approved\s*[:\-]\s*(.+)", text, re.IGNORECASE | re.DOTALL)
    return match.group(1).strip().rstrip(".") if match else ""
