"""The channel registry: every way an adapter's framework can pause for a human, as a registered object.

A channel names one way of pausing or resuming (the run stops at an approval tool, a gated tool call is held, a
paused run takes new input, ...). It is not a word of a closed vocabulary: an arena that brings a channel of its
own registers it from its own package (`register(ChannelSpec(...))` at import), and adapters declare it in their
`AdapterInfo` like any built-in one. The registry says, for each channel, what a reader needs to know to implement
it: which adapter hooks implement it (checked when an adapter loads, arena.adapter.check_adapter), which decision
kinds and trace events it uses, and which part of the leg context it reads.

The built-in channels are registered here; their meaning is documented on `arena.types.Channel`. An arena's own
are registered and documented in its package (the delegation arena's: arenas/delegation/channel.py).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from arena.errors import ArenaError


class ChannelError(ArenaError, ValueError):
    """A channel registered twice with another meaning, or a name that is not one."""


@dataclass(frozen=True)
class ChannelSpec:
    """One channel: its name, what it is (one line), the adapter hooks that implement it beyond `start`/`resume`,
    the decision kinds and trace events it uses, and the leg-context fields it reads (`LegContext`, or an arena's
    own `LegContext.extra` key)."""

    name: str
    summary: str
    hooks: tuple[str, ...] = ()
    decisions: tuple[str, ...] = ()
    events: tuple[str, ...] = ()
    context: tuple[str, ...] = ()
    provider: str = "arena"  # who registered it: "arena" for a built-in, else the registering module


_REGISTRY: dict[str, ChannelSpec] = {}
_EVENTS: frozenset[str] = frozenset()  # the events the registered channels list (read for every trace event)
_DECISIONS: frozenset[str] = frozenset()  # the decision kinds they use (read for every recorded decision)
_LOCK = threading.Lock()


def register(spec: ChannelSpec) -> ChannelSpec:
    """Add a channel; registering the same spec again is harmless (a module imported twice), another spec under a
    registered name is an error."""
    if not spec.name.isidentifier():
        raise ChannelError(f"channel name {spec.name!r} is not an identifier")
    with _LOCK:
        known = _REGISTRY.get(spec.name)
        if known is not None and known != spec:
            raise ChannelError(f"channel {spec.name!r} is already registered by {known.provider}")
        _REGISTRY[spec.name] = spec
        global _EVENTS, _DECISIONS
        _EVENTS = _EVENTS | set(spec.events)
        _DECISIONS = _DECISIONS | set(spec.decisions)
    return spec


def get(name: str) -> ChannelSpec | None:
    return _REGISTRY.get(name)


def events() -> frozenset[str]:
    """Every trace event type a registered channel lists."""
    return _EVENTS


def decisions() -> frozenset[str]:
    """Every decision kind a registered channel uses: the kinds a decision may have (`Decision.kind`)."""
    return _DECISIONS


def require_decision(kind: str, needed_by: str) -> None:
    """Nothing, or one error naming who decides an unknown kind and the kinds known."""
    if kind not in _DECISIONS:
        raise ChannelError(f"{needed_by} decides {kind!r}, a kind no registered channel uses "
                           f"(ChannelSpec.decisions; known: {', '.join(sorted(_DECISIONS))})")


def names() -> list[str]:
    """Every registered channel, built-ins first, in the order they were registered."""
    return list(_REGISTRY)


def require(name: str, needed_by: str) -> ChannelSpec:
    """The channel, or one error naming who needs it and what is known."""
    spec = _REGISTRY.get(name)
    if spec is None:
        raise ChannelError(f"{needed_by} needs channel {name!r}, which is not registered "
                           f"(known channels: {', '.join(_REGISTRY)})")
    return spec


_APPROVE = ("approve", "deny", "answer", "edit")
for _spec in (
    ChannelSpec("ask", "the run stops at the arena's approval tool, an interrupt point the model calls",
                decisions=(*_APPROVE, "null"), events=("suspended", "resumed")),
    ChannelSpec("tool_gate", "the framework holds a consequential tool call before running it",
                decisions=_APPROVE, events=("suspended", "resumed")),
    ChannelSpec("body_pause", "a tool pauses inside its body, between its prepare and commit steps",
                decisions=_APPROVE, events=("suspended", "resumed")),
    ChannelSpec("multi_call", "one pause holds several gated calls of one turn, each answered on its own",
                decisions=_APPROVE, events=("suspended", "resumed")),
    ChannelSpec("recover", "a new process continues a run whose process died in a resumed leg",
                events=("crashed", "resumed")),
    ChannelSpec("stream", "every leg drives the framework's streaming API to its end",
                events=("streamed",), context=("stream", "stream_log")),
    ChannelSpec("message", "at a pause the human sends a new message instead of a decision",
                decisions=("message",), events=("resumed",)),
    ChannelSpec("always", "an approve or deny that also decides the later calls of the same tool",
                decisions=("approve", "deny")),
    ChannelSpec("input", "new input is added to a paused run without deciding anything",
                hooks=("add_input",), events=("input",)),
    ChannelSpec("postgres", "the paused state is kept in the framework's own PostgreSQL store",
                events=("store", "store_seen"), context=("store",)),
    ChannelSpec("redis", "the paused state is kept in the framework's own Redis store",
                events=("store", "store_seen"), context=("store",)),
):
    register(_spec)
