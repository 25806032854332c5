"""The delegation channels, as an adapter implements them: `nested`, `handoff` and `multi_nested`, registered here
(by the arena that brings them, not by the core), and the leg context they add, read through `agents_of`/`own_tools`.

- `nested`: the run's agent calls another agent as a tool (`AgentSpec.via == "tool"`), and a gated call of that inner
  agent pauses the whole run; the decision resumes the inner agent where it stopped, and its answer is the tool's
  result the run's agent goes on with (`mechanism`: the framework's agent-as-tool API).
- `handoff`: the run's agent hands control to another agent (`via == "handoff"`), whose gated call pauses the run the
  same way (`mechanism`: the framework's handoff API).
- `deep_nested`: two levels of agents called as tools (desk -> coordinator -> booking agent, `AgentSpec.parent`): the
  innermost agent's gated call pauses the whole run, and the decision must reach that agent's call, not the
  coordinator's (openai-agents-python #4414).
- `shared_name`: the run's own agent takes the name the item gives it (`desk_name`), the name of one of its delegates
  (agents left with a framework's default name, or cloned from one base agent, share names): the pause, its decision
  and a resume from a new process must still find the delegate's call (openai-agents-python #5141).
- `multi_nested`: several delegates called as tools in one turn each reach their own gated call, and one pause holds
  them all, each answered on its own (a DecisionSet); `unsupported` where the framework cannot hold them
  (`mechanism` says what it does instead).

The context travels in `LegContext.extra[AGENTS]` as JSON data, as every arena's own context does (to a worker too).
A pause in a delegate says whose call it is with `held_call(..., agent=<the delegate's name>)`, a `PendingRequest`
with the extra field `agent`: a claim the delegation checks test against the trace.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from arena.for_adapters import LegContext, PendingRequest, ToolSpec
from arena.for_arenas import ChannelSpec, register_channel

AGENTS = "agents"  # the LegContext.extra key of the delegates
DESK = "desk"  # the LegContext.extra key of the name the run's own agent takes, where an item names it
NESTED, HANDOFF, MULTI_NESTED = "nested", "handoff", "multi_nested"  # the channels' names, for an adapter's info
SHARED_NAME, DEEP_NESTED = "shared_name", "deep_nested"


class AgentSpec(BaseModel):
    """An agent the run's own agent delegates to: what the framework's agent is made of, from which the adapter
    builds it in its framework's terms. `via` is how the run's agent reaches it: `tool`, called as a tool (its name
    is the tool's, its one argument `input` the task), or `handoff`, control passes to it with the conversation.
    `tools` names the harness tools it holds (from `LegContext.tools`); the run's own agent holds the others
    (`own_tools`). `parent` is the agent that reaches it (None: the run's own agent)."""

    model_config = ConfigDict(frozen=True)

    name: str
    description: str
    instructions: str
    via: Literal["tool", "handoff"] = "tool"
    tools: tuple[str, ...] = ()
    # the agent that reaches this one: None, the run's own agent; else another delegate's name (a delegate called as a
    # tool by a delegate called as a tool: the `deep_nested` channel)
    parent: str | None = None


def leg_context(agents: list[AgentSpec], desk: str | None = None) -> dict[str, Any]:
    """What a leg of a delegating run carries (the arena's `ArenaSpec.leg_context` returns it): the delegates, and
    the run's own agent's name where the item gives it one."""
    return {AGENTS: [a.model_dump(mode="json") for a in agents], **({DESK: desk} if desk is not None else {})}


def desk_name(ctx: LegContext, default: str) -> str:
    """The name the run's own agent takes: the item's (the `shared_name` channel: a delegate's name too, as agents
    left with a framework's default name or cloned from one base are), else the adapter's own `default`."""
    return str(ctx.extra.get(DESK) or default)


def agents_of(ctx: LegContext) -> list[AgentSpec]:
    """The agents the run's agent delegates to, each holding some of `ctx.tools`; empty: the run is one agent."""
    return [AgentSpec.model_validate(a) for a in ctx.extra.get(AGENTS, ())]


def delegates_of(ctx: LegContext, parent: str | None = None) -> list[AgentSpec]:
    """The agents one agent reaches: the run's own agent's (`parent` None), or a delegate's own delegates."""
    return [a for a in agents_of(ctx) if a.parent == parent]


def held_call(tool: str, args: dict[str, Any], call_id: str | None, agent: str | None) -> PendingRequest:
    """A paused call and the agent whose call it is (None: the run's one agent, or the framework does not say), the
    delegation channels' extra field of `PendingRequest`, which the model keeps as given."""
    return PendingRequest.model_validate({"tool": tool, "args": args, "call_id": call_id, "agent": agent})


def own_tools(ctx: LegContext, agent: str | None = None) -> list[ToolSpec]:
    """The tools one agent holds: a delegate's (`agent`, its name) or the run's own agent's (None: every tool no
    delegate holds)."""
    agents = agents_of(ctx)
    specs: list[ToolSpec] = ctx.tools.specs
    if agent is not None:
        held = next(a.tools for a in agents if a.name == agent)
        return [s for s in specs if s.name in held]
    delegated = {name for a in agents for name in a.tools}
    return [s for s in specs if s.name not in delegated]


for _spec in (
    ChannelSpec(NESTED, "a delegate called as a tool pauses the whole run at its gated call",
                events=("suspended", "resumed"), context=(AGENTS,), provider=__name__),
    ChannelSpec(HANDOFF, "control passes to a delegate whose gated call pauses the run",
                events=("suspended", "resumed"), context=(AGENTS,), provider=__name__),
    ChannelSpec(DEEP_NESTED, "a delegate called as a tool by a delegate called as a tool pauses the whole run at its "
                "gated call", events=("suspended", "resumed"), context=(AGENTS,), provider=__name__),
    ChannelSpec(SHARED_NAME, "the run's own agent has the name of the delegate whose gated call pauses the run",
                events=("suspended", "resumed"), context=(AGENTS, DESK), provider=__name__),
    ChannelSpec(MULTI_NESTED, "one pause holds the gated calls of several delegates called in one turn",
                events=("suspended", "resumed"), context=(AGENTS,), provider=__name__),
):
    register_channel(_spec)
