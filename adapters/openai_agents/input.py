"""Input while a run is paused, the SDK's `RunState.add_input(text)`: staged as a user message, admitted
immediately before the run's next model call (SDK docs, results: add input before resuming). Both the `input`
channel (text staged, the decision then given as for any pause) and the `message` channel (a new message instead of
a decision: nothing decided on the held calls)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .adapter import OpenAIAgentsAdapter


async def staged_input(agent: Any, state: str, text: str) -> str:
    """The serialised RunState with `text` staged. A refusal (UserError: a state the SDK takes no input on)
    propagates."""
    from agents import RunState

    run_state = await RunState.from_string(agent, state)
    run_state.add_input(text)
    return run_state.to_string()


def stage_message(adapter: OpenAIAgentsAdapter, run_state: Any, text: str) -> None:
    # A new message instead of a decision: the SDK's documented way to give a paused run new user input
    # is RunState.add_input (admitted before the next model call). The held calls get no decision here,
    # and an approval tool body that ran anyway would raise (no approval in this leg). A refusal of
    # add_input (UserError) propagates: that is the measured outcome.
    adapter._decision = None
    run_state.add_input(text)
