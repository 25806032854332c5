"""The `follow_up` and `output_guard` channels: the conversation goes on after an approved (or denied) run.

An application keeps a conversation going after the agent finished: the user's next message is sent with what came
before (the framework's session, thread or message history). A run that paused for an approval must leave that
history whole: the approved call paired with its result, the denial paired with its call. A framework that keeps a
tool result without its call sends the model a request the real API refuses (HTTP 400), and every later turn of the
conversation fails (openai-agents-python #4827, after an approved resume with an output guardrail and a tool whose
result is the run's answer; fixed in 0.24.0).

- `follow_up(state, text, ctx)`: after the run's last leg finished, the user's next message `text` in the same
  conversation, the framework's way; returns the leg's `LegResult`. `state` is the run's last paused state (the
  conversation it belongs to), kept by the adapter's process: the hook runs where the run ran.
  `LegContext.extra[FOLLOW_UP]` is true on every leg of the arena's items (`follows_up`): an adapter keeps the
  conversation the framework's way (a session) from the first leg.
- `output_guard`: the application's agent checks its answer with the framework's output validation (an output
  guardrail that lets a good answer through) and has a rule of its own for when a tool's result is the run's answer
  (a room search that found no free room; the booking's result goes back to the model, as by default):
  `LegContext.extra[OUTPUT_GUARD]` is true on the items that ask for it.
"""

from __future__ import annotations

from arena.for_adapters import LegContext
from arena.for_arenas import ChannelSpec, register_channel

FOLLOW_UP = "follow_up"  # the channel's name and its hook's
OUTPUT_GUARD = "output_guard"  # the channel's name and its LegContext.extra key
FOLLOW_UP_TEXT = "Thanks. Which room did you book for us, if any?"
# under `output_guard`, a tool result that is the run's answer: a room search that found no free room
NO_ROOM_TOOL, NO_ROOM = "search_rooms", '"rooms": []'


def follows_up(ctx: LegContext) -> bool:
    """Whether this leg's run is one the user follows up on: its conversation must be kept the framework's way (a
    session) from the first leg on. `LegContext.extra[FOLLOW_UP]` is true on every leg of the arena's items."""
    return bool(ctx.extra.get(FOLLOW_UP))


def output_guarded(ctx: LegContext) -> bool:
    """Whether this leg's agent checks its answer and has its own rule for a tool's result as the answer (`output_guard`)."""
    return bool(ctx.extra.get(OUTPUT_GUARD))


register_channel(ChannelSpec(FOLLOW_UP, "after the run finished, the user's next message in the same conversation, "
                             "sent with the history the framework kept", hooks=(FOLLOW_UP,), context=(FOLLOW_UP,),
                             events=("resumed", "replayed"), provider=__name__))
register_channel(ChannelSpec(OUTPUT_GUARD, "the agent checks its answer with the framework's output validation and "
                             "has its own rule for a tool's result as the run's answer", context=(OUTPUT_GUARD,),
                             provider=__name__))
