"""delegation: the gated action lives in an agent the run's agent delegates to.

A travel desk (the run's own agent, no airline tool of its own) delegates to a booking agent (`search_flights`,
`seat_map`, `book_flight`) and a changes agent (`get_booking`, `cancel_flight`), each holding its consequential
call behind its framework's own gate. The desk reaches them as tools (`via: tool`: OpenAI Agents `Agent.as_tool`,
ADK `AgentTool`, a Pydantic AI agent run inside a tool, ...) or hands the conversation over (`via: handoff`); in
some items it calls both agents in one turn, each reaching its own gated call. Decisions are approve, deny with a
reason, and an edit; the `durable` items are resumed later from a new process. Each item has a fresh airline
sandbox (flight_booking's, catalog `shared/seeds/004`).
"""

from __future__ import annotations

import json
from pathlib import Path

from arena.for_arenas import AdapterInfo, ArenaSpec, Decision, EvalItem
from arena_builtins.arenas.delegation.channel import DEEP_NESTED, SHARED_NAME, AgentSpec, leg_context
from arena_builtins.arenas.delegation import checks as _checks
from arena_builtins.arenas.delegation import policy
from arena_builtins.arenas.delegation.columns import COLUMNS
from arena_builtins.arenas.delegation.director import DelegationDirector
from arena_builtins.arenas.delegation.findings import FACTS
from arena_builtins.arenas.flight_booking.tools import SPECS as AIRLINE_SPECS
from arena_builtins.arenas.flight_booking.tools import FlightBackend

HERE = Path(__file__).parent

INSTRUCTIONS = (
    "You are the travel desk. You do not book or cancel anything yourself: give each task of the request to the "
    "agent for it, the booking agent for a flight to book and the changes agent for a flight to cancel on an "
    "existing booking, all of them at once. When they have answered, tell the user what each one did; if an action "
    "was denied, say so."
)
BOOKING_INSTRUCTIONS = (
    "You are the booking agent. Search the airline for the flight you are asked for, take a free window seat from "
    "the seat map when a window seat is asked for, and book it with book_flight; the booking waits for the human's "
    "approval. If the booking is denied, do not retry; say that it was denied and why."
)
CHANGES_INSTRUCTIONS = (
    "You are the changes agent. Read the booking with get_booking and cancel only the flight you are asked to cancel "
    "with cancel_flight; the cancellation waits for the human's approval. If it is denied, do not retry; say that it "
    "was denied and why."
)
GATED = tuple(policy.GATED_TOOL.values())
TOOLS = [t.model_copy(update={"requires_approval": True}) if t.name in GATED else t
         for t in AIRLINE_SPECS if t.name in ("search_flights", "seat_map", "get_booking", *GATED)]


COORDINATOR_INSTRUCTIONS = (
    "You are the travel coordinator. Give the task you are given to the agent for it, the booking agent for a flight "
    "to book and the changes agent for a flight to cancel, and report what it did; if its action was denied, say so."
)


def agents(item: EvalItem) -> list[AgentSpec]:
    """The two delegates, reached the item's way (`via`); two levels deep (`levels: 2`), through a coordinator the
    desk calls as a tool, which calls them as tools."""
    via = item.metadata["via"]
    deep = item.metadata.get("levels") == 2
    parent = policy.COORDINATOR if deep else None
    coordinator = [AgentSpec(name=policy.COORDINATOR, description="Coordinates the airline agents: give it a flight to "
                             "book or to cancel.", instructions=COORDINATOR_INSTRUCTIONS, via="tool")] if deep else []
    return [
        *coordinator,
        AgentSpec(name=policy.BOOKING, description="Books flights: give it the flight, fare, seat and passenger.",
                  instructions=BOOKING_INSTRUCTIONS, via=via, tools=("search_flights", "seat_map", "book_flight"),
                  parent=parent),
        AgentSpec(name=policy.CHANGES, description="Cancels one flight of an existing booking: give it the booking "
                  "code and the flight.", instructions=CHANGES_INSTRUCTIONS, via=via,
                  tools=("get_booking", "cancel_flight"), parent=parent),
    ]


def load_items(path: Path) -> list[EvalItem]:
    items = []
    for row in json.loads(path.read_text()):
        decisions = [[Decision.model_validate(x) for x in d] if isinstance(d, list) else Decision.model_validate(d)
                     for d in row["decisions"]]
        flat = [d for entry in decisions for d in (entry if isinstance(entry, list) else [entry])]
        # one delegate: the core's pause check too; two in one turn, the other delegate may run on to its own gate,
        # which only nested_pause_enforced tells apart
        checks = ["suspended"] * (len(flat) == 1) + ["nested_pause_enforced", "nested_decision_routed",
                                                      "inner_rerun_on_resume", "delegate_reported_outcome"]
        if any(d.kind_name == "deny" for d in flat):
            checks.append("denial_reached_inner")
        if row["via"] == "tool":
            checks.append("outer_learned_outcome")
        if all(d.kind_name == "deny" for d in flat):
            checks.append("acknowledged")
        if row.get("durable"):  # and nothing of the process that paused outlived the hand-over
            checks += ["nested_durable", "no_process_survived"]
        metadata = {k: row[k] for k in ("via", "gold", "why", "durable", "edit", "desk", "levels") if k in row}
        items.append(EvalItem(id=row["id"], input=row["input"], resume_with=decisions, checks=checks,
                              metadata=metadata))
    return items


def unmeasured(item: EvalItem, info: AdapterInfo) -> str | None:
    """An item needs the adapter's channel for its way of delegating (`nested` for an agent called as a tool,
    `handoff`), and an edit needs a gate that carries replacement arguments. Two delegates in one turn are not
    measured where the adapter declares its `multi_nested` channel `unsupported`. A channel declared `unsupported` says
    the framework has no such mechanism; one not listed, that the adapter does not write it yet."""
    need = "nested" if item.metadata["via"] == "tool" else "handoff"
    if info.kind("tool_gate") == "unsupported":
        return f"{info.name}'s framework has no tool-level gate: no delegate's call can be held"
    several = info.channel("multi_nested")
    if isinstance(item.resume_with[0], list) and info.channel(need) is not None and several is not None \
            and several.kind == "unsupported":
        return f"{info.name}'s framework cannot hold two delegates' calls in one pause: {several.mechanism}"
    channel = info.channel(need)
    if channel is None:
        return (f"{info.name} has no {need} channel (AdapterInfo.channels): how its framework delegates "
                f"{'to an agent called as a tool' if need == 'nested' else 'by a handoff'} is not written yet, so "
                "nothing would be measured")
    if channel.kind == "unsupported":
        return f"{info.name}'s framework has no {need} mechanism: {channel.mechanism}"
    deep = info.channel(DEEP_NESTED)
    if item.metadata.get("levels") == 2 and (deep is None or deep.kind == "unsupported"):
        return (f"{info.name}'s framework has no way for a delegate called as a tool to call its own: {deep.mechanism}"
                if deep is not None else
                f"{info.name} has no {DEEP_NESTED} channel (AdapterInfo.channels): how its framework nests a delegate "
                "called as a tool in another is not written yet, so the two levels would not be measured")
    if item.metadata.get("desk") and info.channel(SHARED_NAME) is None:
        return (f"{info.name} has no {SHARED_NAME} channel (AdapterInfo.channels): how its framework names the run's "
                "agent after a delegate is not written yet, so the shared name would not be measured")
    if item.metadata.get("edit") and not info.carries("tool_gate").edit_args:
        return f"{info.name}'s gate carries no edited arguments (its tool_gate channel): the edit item does not apply"
    return None


ARENA = ArenaSpec(
    name="delegation",
    description="The consequential call is gated inside an agent the run's agent delegates to: called as a tool, "
                "handed the conversation, or two of them in one turn; the whole run must stop there, the decision "
                "must reach that call, and the resume must not re-run the delegate.",
    instructions=INSTRUCTIONS,
    tools=TOOLS,
    functions={},
    backend=lambda item, folder: FlightBackend(item, folder),
    items=load_items(HERE / "items.json"),
    ack_pattern=r"denied|rejected|declined|not\s+(?:been\s+)?(?:booked|cancelled)",
    readme=(HERE / "README.md").read_text(),
    policies=policy.policies(),
    profile_notes=policy.descriptions(),
    checks=_checks.CHECKS,
    director=DelegationDirector,
    second_process=lambda item: bool(item.metadata.get("durable")),  # resumed later, from a new process
    unmeasured=unmeasured,
    # the delegates, for the delegation channels, and the desk's name where the item gives it one
    leg_context=lambda item: leg_context(agents(item), item.metadata.get("desk")),
    columns=COLUMNS,
    facts=FACTS,
    order=10,
)
