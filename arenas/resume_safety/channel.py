"""The `live_twin` channel: a second live paused state taken from the framework's same paused run, the framework's
own way, while the run itself resumes the first.

resume_safety's other double resumes replay a copy of the state the run handed back (data: a serialised state read
twice). A framework may also hand an application two live states of one paused run (the OpenAI Agents SDK's
`result.to_state()` called twice on the paused result; two copies of a live checkpoint): approving one must leave the
other pending, with nothing run (openai-agents-python #4413: in 0.19.4 and 0.20.0 the two shared one approval record,
so resuming the other, never approved, ran the tool again).

The hook, `live_twin(state, ctx)`: take the second live state from the paused run `state` was handed back for, and
return it as a state the adapter resumes (kept in the adapter's process: a worker holds it by its handle). The run's
own resume then resumes the first live state of the pair; the arena's director resumes the twin after the run, with
nothing decided (`Replay.live`). An adapter declares the channel only where its framework hands out live states;
resume_safety does not measure the item elsewhere, with the reason.
"""

from __future__ import annotations

from arena.for_arenas import ChannelSpec, register_channel

LIVE_TWIN = "live_twin"  # the channel's name and its hook's

register_channel(ChannelSpec(LIVE_TWIN, "a second live paused state of the same run, taken the framework's way, "
                             "resumed with nothing decided after the run resumed the first",
                             hooks=(LIVE_TWIN,), events=("resumed", "replayed"), provider=__name__))
