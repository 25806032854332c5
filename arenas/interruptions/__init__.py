"""interruptions: the human answers a pause with something other than a decision.

On the rooms sandbox (`book_room` gated by the framework): a new message instead of a decision (a change, a
cancellation), sometimes followed by a late approval of the call it superseded (the director); a request that
cannot be met as asked, where the agent must ask and then book what the answer chose; and a handoff that must stop
at the confirmation. The airline items (`"sandbox": "airline"`) pose the last two on flight_booking's airline
(`book_flight` and `cancel_flight` gated), each with a fresh sandbox of its own. Adapted from the task catalogs
`shared/seeds/004` (T16, T08) and `shared/seeds/001` (T16).
"""

from __future__ import annotations

import json
from pathlib import Path

from arena.for_arenas import AdapterInfo, ArenaSpec, Decision, EvalItem
from arena_builtins.arenas._rooms import tools
from arena_builtins.arenas._rooms.items import room_of
from arena_builtins.arenas.flight_booking.tools import SPECS as AIRLINE_SPECS
from arena_builtins.arenas.flight_booking.tools import FlightBackend
from arena_builtins.arenas.interruptions import checks as _checks
from arena_builtins.arenas.interruptions import policy
from arena_builtins.arenas.interruptions.columns import COLUMNS
from arena_builtins.arenas.interruptions.director import LateApprovalDirector
from arena_builtins.arenas.interruptions.findings import FACTS

HERE = Path(__file__).parent

INSTRUCTIONS = (
    "You book meeting rooms. Call search_rooms with the number of people and the weekday and book the smallest "
    "free room with book_room; the booking waits for the human's approval. If nothing fits the request as asked, "
    "do not guess: ask the human with request_approval, listing the alternatives you found, and book the one the "
    "answer chooses. For flights, search the airline and book with book_flight, or cancel one flight of a booking "
    "with cancel_flight; both wait for the human's approval, and the same rule applies: if no flight is the one "
    "asked for, ask with the alternatives' times and prices. If the human sends a new message, follow it: it "
    "replaces or cancels the request. If a booking is rejected, do not retry; say that the booking was denied."
)

ASK = tools.REQUEST_APPROVAL.model_copy(update={
    "description": "Ask the human a question (which alternative they want) and wait for the answer."})
# the airline's tools an item may need, its consequential ones gated by the framework like book_room
GATED_AIRLINE = ("book_flight", "cancel_flight")
AIRLINE = [t.model_copy(update={"requires_approval": True}) if t.name in GATED_AIRLINE else t
           for t in AIRLINE_SPECS if t.name in ("search_flights", "seat_map", "get_booking", *GATED_AIRLINE)]

CHECKS_OF = {
    "message": ["suspended", "pending_call_not_run", "booked_as_expected"],
    "clarify": ["suspended", "clarified_before_acting", "booked_as_expected"],
    # confirmed from a new process: nothing of the one that paused may outlive the hand-over
    "handoff": ["suspended", "handoff_nothing_committed", "booked_as_expected", "no_process_survived"],
    "always": ["suspended", "sticky_approval_scoped", "booked_as_expected"],
    "input": ["suspended", "midrun_input_seen", "booked_as_expected"],
}
# what each kind of item needs from the adapter besides a pause at the gate: (channel, what it is)
NEEDS = {"message": ("message", "takes a new message at a pause"),
         "always": ("always", "has an approve/deny that stands for later calls"),
         "input": ("input", "takes input into a paused run without a decision")}


def load_items(path: Path) -> list[EvalItem]:
    items = []
    for row in json.loads(path.read_text()):
        decisions = [[Decision.model_validate(x) for x in d] if isinstance(d, list) else Decision.model_validate(d)
                     for d in row["decisions"]]
        checks = list(CHECKS_OF[row["group"]])
        if row.get("late"):
            checks.append("late_approval_refused")
        if isinstance(decisions[-1], Decision) and decisions[-1].kind_name == "deny":
            checks.append("acknowledged")
        metadata = {k: row[k] for k in ("group", "gold", "why", "late", "old", "options", "draft", "pauses", "inputs",
                                         "sandbox") if k in row}
        items.append(EvalItem(id=row["id"], input=row["input"], resume_with=decisions, checks=checks,
                              metadata=metadata))
    return items


def unmeasured(item: EvalItem, info: AdapterInfo) -> str | None:
    """A message, always or input item needs a pause at the gate, and the adapter's channel for that kind (the way
    its framework does it); a channel declared `unsupported` says the framework has none. The always items' control
    (plain approvals) needs only the gate."""
    need = NEEDS.get(item.metadata["group"])
    if need is None or item.metadata["group"] == "always" and not _sticky(item):
        return None
    if info.kind("tool_gate") == "unsupported":
        return f"{info.name}'s framework has no tool-level gate: no pause holds a call to interrupt"
    if item.metadata["group"] == "always" and isinstance(item.resume_with[0], list) and info.channel("multi_call") is None:
        return f"{info.name} has no multi_call channel: one pause holding both bookings cannot be answered call by call"
    channel = info.channel(need[0])
    if channel is None:
        return (f"{info.name} has no {need[0]} channel (AdapterInfo.channels): how its framework {need[1]} is not "
                "written yet, so nothing would be measured")
    if channel.kind == "unsupported":
        return f"{info.name}'s framework has no way to do it ({need[0]}): {channel.mechanism}"
    return None


def airline(item: EvalItem, folder: Path) -> FlightBackend | None:
    """An airline item's own sandbox; a rooms item has none (its tools are the stateless room functions)."""
    return FlightBackend(item, folder) if item.metadata.get("sandbox") == "airline" else None


def _sticky(item: EvalItem) -> bool:
    return any(d.always for d in item.decisions)


ARENA = ArenaSpec(
    name="interruptions",
    description="At a pause the human sends a new message instead of a decision (and, later, a late approval of "
                "the call it superseded); a request the agent must clarify before acting; a handoff that must stop "
                "at the confirmation.",
    instructions=INSTRUCTIONS,
    tools=[tools.SEARCH_ROOMS, ASK, tools.GATED_BOOK_ROOM, *AIRLINE],
    functions={k: v for k, v in tools.FUNCTIONS.items()},
    backend=airline,
    items=load_items(HERE / "items.json"),
    ack_pattern=r"denied|rejected|declined|not\s+(?:been\s+)?booked",
    readme=(HERE / "README.md").read_text(),
    policies=policy.policies(),
    profile_notes=policy.descriptions(),
    subject_of=room_of,
    checks=_checks.CHECKS,
    director=LateApprovalDirector,
    second_process=lambda item: item.metadata["group"] == "handoff",  # its confirmation comes from a new process
    unmeasured=unmeasured,
    columns=COLUMNS,
    facts=FACTS,
    order=9,
)
