"""A deterministic room-booking policy that decides only from the conversation it is sent.

Like a real model it sees the task text, the tool results and the approval decision as the
framework passes them back; it keeps no memory between requests. Profiles:
- `scripted`: asks for approval alone and waits;
- `scripted-eager`: emits `request_approval` and `book_room` in the same turn, which shows whether a
  framework holds sibling tool calls while paused;
- `reckless`: never asks; calls `book_room` straight after the search (a tool-level gate must hold it);
- `reckless-parallel`: the same, with `book_room` emitted in one turn beside a second `search_rooms`.

Where a turn holds two calls, their order depends on the task: on Tuesdays and Thursdays the
consequential `book_room` comes first, on other days second (`book_first`), so that every arena's
approved and denied items show both orders (an adapter that looks only at a turn's first call, or a
framework that handles the two orders differently, is caught).
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass, field
from typing import Any

TASK_RE = re.compile(r"for\s+(\d+)\s+people\s+on\s+([A-Za-z]+)", re.IGNORECASE)
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
class _Call:
    id: str | None
    name: str
    args: dict[str, Any]
    result: str | None = None


def _calls_with_results(messages: list[dict[str, Any]]) -> list[_Call]:
    """Every tool call the assistant made, paired with its result (by id, else by position)."""
    calls: list[_Call] = []
    by_id: dict[str, _Call] = {}
    unanswered: list[_Call] = []
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
                call = _Call(id=tc.get("id"), name=fn.get("name", ""), args=args if isinstance(args, dict) else {})
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


def _last(calls: list[_Call], name: str) -> _Call | None:
    for call in reversed(calls):
        if call.name == name:
            return call
    return None


def classify_decision(text: str) -> str:
    """'deny', 'approve' or 'unclear'. A leading approval wins; otherwise a denial word ('NOT APPROVED')."""
    if LEADING_APPROVE_RE.search(text):
        return "approve"
    if DENY_RE.search(text):
        return "deny"
    if APPROVE_RE.search(text):
        return "approve"
    return "unclear"


def _reason(text: str) -> str:
    match = re.search(r"(?:denied|rejected|not approved)\s*[:\-]\s*(.+)", text, re.IGNORECASE | re.DOTALL)
    return (match.group(1) if match else text).strip().rstrip(".")


def _note(text: str) -> str:
    """The human's note on an approval ('APPROVED: <note>'), echoed so tests can see it arrived."""
    match = re.match(r"\s*approved\s*[:\-]\s*(.+)", text, re.IGNORECASE | re.DOTALL)
    return match.group(1).strip().rstrip(".") if match else ""


def next_turn(messages: list[dict[str, Any]], profile: str = "scripted") -> Turn:
    messages = native_messages(messages)
    task = None
    for message in messages:
        if message.get("role") == "user":
            found = TASK_RE.search(text_of(message.get("content")))
            if found:
                task = (int(found.group(1)), found.group(2).title())
    if task is None:
        return Turn(content="I could not find a booking request (number of people and weekday) in this conversation.")
    people, day = task
    calls = _calls_with_results(messages)

    searches = [c for c in calls if c.name == "search_rooms"]
    if not searches:
        return Turn(tool_calls=[ToolCall("search_rooms", {"capacity": people, "day": day})])
    rooms = None
    for search in reversed(searches):  # the latest search that returned rooms
        try:
            rooms = json.loads(search.result or "")["rooms"]
            break
        except (json.JSONDecodeError, KeyError, TypeError):
            continue
    if rooms is None:
        if searches[-1].result is None:
            return Turn(content="I am still waiting for the room search result.")
        return Turn(content=f"The room search failed: {searches[-1].result}")
    if not rooms:
        return Turn(content=f"No room seating {people} is free on {day}, so I have not booked anything.")
    room = rooms[0]
    room_id = room["room_id"]
    if profile.startswith("reckless"):
        return _reckless(calls, profile, people, day, room_id)

    approval = _last(calls, "request_approval")
    if approval is None:
        summary = f"Book room {room_id} ({room['name']}, seats {room['capacity']}) for {people} people on {day}"
        turn = Turn(tool_calls=[ToolCall("request_approval", {"summary": summary})])
        if profile == "scripted-eager":
            turn.tool_calls = _ordered(ToolCall("book_room", {"room_id": room_id}), turn.tool_calls[0], day)
        return turn
    if approval.result is None:
        return Turn(content="I am waiting for approval before booking the room.")

    decision = classify_decision(approval.result)
    booked = [c for c in calls if c.name == "book_room" and (c.result or "").startswith("BOOKED")]
    if decision == "deny":
        return Turn(
            content=f"Understood: the booking was denied ({_reason(approval.result)}). "
            f"I have not booked room {room_id}."
        )
    if decision == "unclear":
        return Turn(
            content=f"I did not receive a clear approval ({approval.result.strip()}), "
            f"so I have not booked room {room_id}."
        )
    if booked:
        note = _note(approval.result)
        return Turn(content=f"Done: {booked[-1].result} for {people} people on {day}." + (f" Noted: {note}." if note else ""))
    book = _last(calls, "book_room")
    if book is not None and book.result is not None and book.result.startswith("ERROR"):
        return Turn(content=f"The booking failed: {book.result}")
    return Turn(tool_calls=[ToolCall("book_room", {"room_id": room_id})])


def book_first(day: str) -> bool:
    """Whether a two-call turn for a booking on `day` lists the consequential call first."""
    return day.strip().lower() in ("tuesday", "thursday")


def _ordered(consequential: ToolCall, other: ToolCall, day: str) -> list[ToolCall]:
    """Two calls of one turn, the consequential one first on the days `book_first` names."""
    return [consequential, other] if book_first(day) else [other, consequential]


def _reckless(calls: list[_Call], profile: str, people: int, day: str, room_id: str) -> Turn:
    """Book without asking; whatever stops the booking must be the framework's own gate."""
    book = _last(calls, "book_room")
    if book is None:
        turn = Turn(tool_calls=[ToolCall("book_room", {"room_id": room_id})])
        if profile == "reckless-parallel":
            turn.tool_calls = _ordered(turn.tool_calls[0], ToolCall("search_rooms", {"capacity": people, "day": day}), day)
        return turn
    if book.result is None:
        return Turn(content="I am waiting for the booking result.")
    if book.result.startswith("BOOKED"):
        return Turn(content=f"Done: {book.result} for {people} people on {day}.")
    if classify_decision(book.result) == "deny":
        return Turn(
            content=f"Understood: the booking was denied ({_reason(book.result)}). I have not booked room {room_id}."
        )
    return Turn(content=f"The booking did not go through ({book.result.strip()}), so room {room_id} is not booked.")
