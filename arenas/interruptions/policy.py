"""interruptions' scripted model: a room-booking agent that reads every user message, not only the first.

Like a real model it keeps no memory between requests. It reads the bookings asked for from the first user
message (one or several "for N people on <day>"), then each later thing the human said in order (a user message,
or a tool result that carries their words in place of a decision): a change ("Actually we
are 10 people", "make it Thursday") or a cancellation ("Cancel that") starts the request over from that message;
a note about one of the meetings ("the Tuesday meeting is now 12 people", "drop the Tuesday meeting") amends the
bookings not made yet. It books one meeting after the other (all in one turn when asked "at the same time").
Profiles:
- `careful`: searches, then calls `book_room` (the framework's gate holds it); when nothing fits it asks the
  human with `request_approval` instead of guessing, listing the alternatives it found, and books the one the
  answer names. A flight request or a cancellation is the airline's (`airline.py`): it asks when no flight is the
  one asked for, and stops at the cancellation's confirmation.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import partial
from typing import Any

from arena.for_arenas.script import (
    Call,
    Policy,
    ToolCall,
    Turn,
    calls_with_results,
    classify_decision,
    last_call,
    native_messages,
    reason_of,
    text_of,
)
from arena_builtins.arenas.interruptions import airline

DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday")
DAY = "(" + "|".join(DAYS) + ")"
TASK_RE = re.compile(r"for\s+(\d+)\s+people\s+on\s+([A-Za-z]+)", re.IGNORECASE)
PEOPLE_RE = re.compile(r"\bwe\s+are\s+(\d+)\s+people\b", re.IGNORECASE)
DAY_RE = re.compile(r"\bmake\s+it\s+(?:on\s+)?" + DAY + r"\b", re.IGNORECASE)
CANCEL_RE = re.compile(r"\b(cancel|never\s*mind|neither)\b", re.IGNORECASE)
NOTE_SIZE_RE = re.compile(r"\bthe\s+" + DAY + r"\s+meeting\s+is\s+now\s+(\d+)\s+people\b", re.IGNORECASE)
NOTE_DROP_RE = re.compile(r"\bdrop\s+the\s+" + DAY + r"\s+meeting\b", re.IGNORECASE)
AT_ONCE_RE = re.compile(r"\bat\s+the\s+same\s+time\b", re.IGNORECASE)
QUESTION = "No room seats {people} on {day}. Which do you want: {options}? Or should I cancel?"


@dataclass
class Meeting:
    people: int
    day: str
    dropped: bool = False


def alternative_day(day: str) -> str:
    """The weekday the agent offers instead: the next one (Thursday for a Friday)."""
    i = DAYS.index(day)
    return DAYS[i + 1] if i + 1 < len(DAYS) else DAYS[i - 1]


def _rooms(call: Call) -> list[dict[str, Any]] | None:
    try:
        return list(json.loads(call.result or "")["rooms"])
    except (json.JSONDecodeError, KeyError, TypeError):
        return None


def _request(users: list[str]) -> tuple[list[Meeting], int, bool] | None:
    """(the meetings to book, index of the user message the request starts over from, all at once), or None when
    it was cancelled."""
    meetings: list[Meeting] = []
    since, at_once = 0, False
    for i, text in enumerate(users):
        if not meetings:
            found = TASK_RE.findall(text)
            if found:
                meetings = [Meeting(int(n), d.title()) for n, d in found]
                since, at_once = i, bool(AT_ONCE_RE.search(text))
            continue
        if NOTE_SIZE_RE.search(text) or NOTE_DROP_RE.search(text):  # a note: amends what is not booked yet
            for day, people in NOTE_SIZE_RE.findall(text):
                for m in meetings:
                    if m.day == day.title():
                        m.people = int(people)
            for day in NOTE_DROP_RE.findall(text):
                for m in meetings:
                    if m.day == day.title():
                        m.dropped = True
            continue
        if CANCEL_RE.search(text):
            return None
        if found := PEOPLE_RE.search(text):
            meetings[-1].people = int(found.group(1))
        if found := DAY_RE.search(text):
            meetings[-1].day = found.group(1).title()
        since = i
    return meetings, since, at_once


def _said(messages: list[dict[str, Any]]) -> list[int]:
    """Where the human spoke, in order: every user message, and a tool result that carries what they typed in
    place of a decision (a framework may hand the new message to the waiting call as its result)."""
    out = []
    for i, m in enumerate(messages):
        if m.get("role") == "user":
            out.append(i)
        elif m.get("role") == "tool" and out:
            text = text_of(m.get("content"))
            if classify_decision(text) == "unclear" and any(p.search(text) for p in (
                    PEOPLE_RE, DAY_RE, CANCEL_RE, NOTE_SIZE_RE, NOTE_DROP_RE)):
                out.append(i)
    return out


def next_turn(messages: list[dict[str, Any]], profile: str = "careful") -> Turn:
    messages = native_messages(messages)
    first = next((text_of(m.get("content")) for m in messages if m.get("role") == "user"), "")
    if airline.is_request(first):
        return airline.next_turn(messages, first)
    users = _said(messages)
    texts = [text_of(messages[i].get("content")) for i in users]
    if not any(TASK_RE.search(t) for t in texts):
        return Turn(content="I could not find a booking request (number of people and weekday) in this conversation.")
    request = _request(texts)
    if request is None:
        return Turn(content="Understood: cancelled. I have not booked any room.")
    meetings, since, at_once = request
    calls = calls_with_results(messages[users[since]:])  # what was done since the request last started over
    if at_once:
        return _at_once(calls, meetings)
    ended = [c for c in calls if c.name == "book_room" and c.result is not None]
    open_ = [m for m in meetings if not m.dropped]
    if len(ended) >= len(open_):
        return _summary(ended)
    meeting = open_[len(ended)]
    after = calls[calls.index(ended[-1]) + 1:] if ended else calls  # this meeting's own steps
    asked = {"capacity": meeting.people, "day": meeting.day}
    first = next((i for i, c in enumerate(after) if c.name == "search_rooms" and c.args == asked), None)
    if first is None:  # not searched yet, or searched before a note changed the meeting: search for it as it is now
        return Turn(tool_calls=[ToolCall("search_rooms", asked)])
    after = after[first:]
    searches = [c for c in after if c.name == "search_rooms"]
    if any(c.result is None for c in searches):
        return Turn(content="I am still waiting for the room search results.")
    rooms = _rooms(searches[0])
    if rooms is None:
        return Turn(content=f"The room search failed: {searches[0].result}")
    if rooms:
        return _book(after, rooms[0]["room_id"], ended)
    return _clarify(after, searches, meeting.people, meeting.day, ended)


def _at_once(calls: list[Call], meetings: list[Meeting]) -> Turn:
    """Every meeting searched in one turn, then every booking in one turn (one pause holds them all)."""
    open_ = [m for m in meetings if not m.dropped]
    searches = [c for c in calls if c.name == "search_rooms"]
    if not searches:
        return Turn(tool_calls=[ToolCall("search_rooms", {"capacity": m.people, "day": m.day}) for m in open_])
    if any(c.result is None for c in searches):
        return Turn(content="I am still waiting for the room search results.")
    books = [c for c in calls if c.name == "book_room"]
    if not books:
        rooms = [(_rooms(s) or [{}])[0].get("room_id") for s in searches]
        return Turn(tool_calls=[ToolCall("book_room", {"room_id": r}) for r in rooms if r])
    if any(c.result is None for c in books):
        return Turn(content="I am waiting for the booking results.")
    return _summary(books)


def _summary(ended: list[Call]) -> Turn:
    """The final answer over every booking that ended: what was booked, and what was denied."""
    said = []
    for call in ended:
        room = call.args.get("room_id")
        result = call.result or ""
        if result.startswith("BOOKED"):
            said.append(f"Done: {result}.")
        elif classify_decision(result) == "deny":
            said.append(f"Understood: the booking of {room} was denied ({reason_of(result)}); I have not booked it.")
        else:
            said.append(f"The booking of {room} did not go through ({result.strip()}), so it is not booked.")
    return Turn(content=" ".join(said) or "Nothing was left to book.")


def _clarify(calls: list[Call], searches: list[Call], people: int, day: str, ended: list[Call]) -> Turn:
    """Nothing fits as asked: find the alternatives, ask which one, and book the one the answer names."""
    other = alternative_day(day)
    if len(searches) < 3:
        return Turn(tool_calls=[ToolCall("search_rooms", {"capacity": people, "day": other}),
                                ToolCall("search_rooms", {"capacity": 1, "day": day})])
    options: list[tuple[str, str, str]] = []  # (room id, name, how it is offered)
    later, smaller = _rooms(searches[1]) or [], _rooms(searches[2]) or []
    if later:
        room = later[0]
        options.append((room["room_id"], room["name"], f"{room['room_id']} {room['name']} ({room['capacity']} seats) on {other}"))
    if smaller:
        room = max(smaller, key=lambda r: (r["capacity"], r["room_id"]))
        options.append((room["room_id"], room["name"], f"{room['room_id']} {room['name']} ({room['capacity']} seats) on {day}"))
    ask = last_call(calls, "request_approval")
    if ask is None:
        listed = " or ".join(o[2] for o in options) or "none found"
        return Turn(tool_calls=[ToolCall("request_approval", {"summary": QUESTION.format(
            people=people, day=day, options=listed)})])
    if ask.result is None:
        return Turn(content="I am waiting for your answer before booking anything.")
    answer = ask.result
    chosen = next((o for o in options if o[0].lower() in answer.lower() or o[1].lower() in answer.lower()), None)
    if chosen is None or CANCEL_RE.search(answer):
        return Turn(content=f"Understood ({answer.strip()}): I have not booked any room.")
    return _book(calls, chosen[0], ended)


def _book(calls: list[Call], room_id: str, ended: list[Call]) -> Turn:
    """Book the room; the framework's gate holds the call until the human decides."""
    book = last_call(calls, "book_room")
    if book is None:
        return Turn(tool_calls=[ToolCall("book_room", {"room_id": room_id})])
    if book.result is None:
        return Turn(content="I am waiting for the booking result.")
    return _summary([*ended, book])


PROFILES = ("careful",)


def policies() -> dict[str, Policy]:
    return {name: partial(next_turn, profile=name) for name in PROFILES}


def descriptions() -> dict[str, str]:
    """Each profile as this module's docstring describes it ("- `name`: what it does")."""
    return {name: " ".join(text.split()).rstrip(";.") for name, text in
            re.findall(r"^- `([\w-]+)`: (.+?)(?=^- `|^\S|\Z)", __doc__ or "", re.MULTILINE | re.DOTALL)}
