"""delegation's scripted model: one endpoint serving every agent of the run, which it tells apart by the tools each
request offers, as the agents' own instructions and tools tell a real model what it is.

- The travel desk (the run's own agent, offered no airline tool): splits the request into its tasks, a flight to
  book (the booking agent's) and a flight to cancel (the changes agent's), and delegates each in one turn by
  whatever the framework offers for that agent: a tool named after it (its task as the tool's one argument), a
  `transfer_to_<name>` / `handoff_to_<name>` handoff, `transfer_to_agent(agent_name=...)` (Google ADK),
  `handoff_to_agent(agent_name=..., message=...)` (strands' Swarm),
  `handoff(to_agent=..., reason=...)` (LlamaIndex) or `delegate_task_to_member(member_id=..., task=...)` (agno).
  Once every delegate answered it tells the user what each said; after a handoff it has nothing left to do.
- The travel coordinator (two levels deep: offered the delegates as tools, not the desk's way to them): the desk
  gives it the task (a tool named `travel_coordinator`), and it delegates that task as the desk would.
- The booking agent (offered `book_flight`) and the changes agent (offered `cancel_flight`): the airline's scripted
  requests (`interruptions/airline.py`, catalog `shared/seeds/004`): search and book the flight asked for, or read
  the booking and cancel the one flight asked for; the framework's gate holds the consequential call, and the
  final answer says what the airline did or that the human denied it.
"""

from __future__ import annotations

import re
from typing import Any

from arena.for_arenas.script import (
    Policy,
    SeesTools,
    ToolCall,
    Turn,
    calls_with_results,
    native_messages,
    unwrap_result,
    user_texts,
)
from arena_builtins.arenas.interruptions.airline import BOOKING_RE, FLIGHT_RE, SEGMENT_RE, next_turn

BOOKING, CHANGES = "booking_agent", "changes_agent"
COORDINATOR = "travel_coordinator"  # two levels deep: the desk reaches the delegates through it, as a tool
GATED_TOOL = {BOOKING: "book_flight", CHANGES: "cancel_flight"}  # how the endpoint knows which agent it serves
# what a desk's call reaches a delegate by, besides `transfer_to_*` / `handoff_to_*`: the agent as a tool, LlamaIndex's
# `handoff(to_agent)`, agno's `delegate_task_to_member(member_id, task)`
DELEGATING = (BOOKING, CHANGES, COORDINATOR, "handoff", "delegate_task_to_member")  # (and `handoff_to_agent`, strands' Swarm)
SENTENCE_RE = re.compile(r"(?<=\.)\s+(?=[A-Z])")


def tasks(request: str) -> list[tuple[str, str]]:
    """(agent, task) for each sentence of the user's request that one of the delegates handles, in order."""
    found = []
    for sentence in SENTENCE_RE.split(request.strip()):
        if BOOKING_RE.search(sentence) and SEGMENT_RE.search(sentence):
            found.append((CHANGES, sentence))
        elif FLIGHT_RE.search(sentence):
            found.append((BOOKING, sentence))
    return found


def agent_of(tools: list[str]) -> str | None:
    """Which delegate a request is for, by the gated tool it offers (None: the desk, which holds neither)."""
    return next((agent for agent, tool in GATED_TOOL.items() if tool in tools), None)


def _names(tools: list[dict[str, Any]]) -> list[str]:
    return [str((t.get("function") or t).get("name")) for t in tools if isinstance(t, dict)]


def _reach(agent: str, task: str, tools: list[dict[str, Any]]) -> ToolCall | None:
    """The call that reaches a delegate by what the framework offers: the agent as a tool, or a handoff to it."""
    for tool in tools:
        fn = tool.get("function") or tool
        name, params = str(fn.get("name")), fn.get("parameters") or {}
        props = list((params.get("properties") or {}))
        if name == agent:
            required = list(params.get("required") or props or ["input"])
            return ToolCall(name, {required[0]: task})
        if name in (f"transfer_to_{agent}", f"handoff_to_{agent}"):
            return ToolCall(name, {})
        if name == "transfer_to_agent" and "agent_name" in props:  # Google ADK
            return ToolCall(name, {"agent_name": agent})
        if name == "handoff_to_agent" and "agent_name" in props:  # strands' Swarm
            return ToolCall(name, {"agent_name": agent, "message": task})
        if name == "handoff" and "to_agent" in props:  # LlamaIndex AgentWorkflow
            return ToolCall(name, {"to_agent": agent, "reason": f"the {agent.replace('_', ' ')} handles this"})
        if name == "delegate_task_to_member" and "member_id" in props:  # agno Team
            return ToolCall(name, {"member_id": agent, "task": task})
    for tool in tools:  # no way to the agent itself: the coordinator that reaches it, called as a tool with the task
        fn = tool.get("function") or tool
        if str(fn.get("name")) == COORDINATOR:
            params = fn.get("parameters") or {}
            required = list(params.get("required") or list(params.get("properties") or {}) or ["input"])
            return ToolCall(COORDINATOR, {required[0]: task})
    return None


def desk(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Turn:
    users = user_texts(messages)
    wanted = tasks(users[0]) if users else []
    if not wanted:
        return Turn(content="I can book a flight or cancel one flight of a booking; what would you like?")
    calls = calls_with_results(messages)
    offered = _names(tools)
    reached = [c for c in calls if c.name in DELEGATING or c.name.startswith(("transfer_to_", "handoff_to_"))]
    if not reached:
        turn = [call for agent, task in wanted if (call := _reach(agent, task, tools)) is not None]
        if not turn:
            return Turn(content=f"I cannot reach the {' or the '.join(a for a, _ in wanted)} (offered: {offered}).")
        handoffs = [c for c in turn if c.name not in (BOOKING, CHANGES, COORDINATOR, "delegate_task_to_member")]
        return Turn(tool_calls=handoffs[:1] if handoffs else turn)  # one handoff: the run is then that agent's
    if any(c.result is None for c in reached):
        return Turn(content="I am waiting for the agents to answer.")
    said = [f"{c.name.replace('_', ' ')}: {unwrap_result(str(c.result)).strip()}" for c in reached]
    return Turn(content="; ".join(said))


def delegate(agent: str, messages: list[dict[str, Any]]) -> Turn:
    """A delegate's turn on its own task: the latest thing it was asked that is its kind of task."""
    own = [task for text in user_texts(messages) for a, task in tasks(text) if a == agent]
    if not own:
        return Turn(content=f"I am the {agent.replace('_', ' ')} and was not given a task I handle.")
    return next_turn(messages, own[-1])


# LangChain's HumanInTheLoopMiddleware sends an edited call's result after a note on the edit ("Note: a human reviewer
# replaced this tool call ... Executed instead: ...\n\nTool response:\n<result>"): a model reads the result in it
EDITED_RE = re.compile(r"\n\s*Tool response:\s*\n(?P<result>.*)\Z", re.DOTALL)


def _read_through(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The messages with each tool result as the tool returned it, out of a note that wraps it."""
    out = []
    for m in messages:
        found = EDITED_RE.search(m["content"]) if m.get("role") == "tool" and isinstance(m.get("content"), str) else None
        out.append({**m, "content": found.group("result")} if found else m)
    return out


def careful(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Turn:
    messages = _read_through(native_messages(messages))
    agent = agent_of(_names(tools))
    return desk(messages, tools) if agent is None else delegate(agent, messages)


def policies() -> dict[str, Policy]:
    return {"careful": SeesTools(careful)}


def descriptions() -> dict[str, str]:
    return {"careful": "the desk delegates each task in one turn; each delegate reaches its own gated airline call and "
                       "reports what the airline did or that it was denied"}

