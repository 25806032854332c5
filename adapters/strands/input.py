"""New input at a pause: a new message instead of a decision (`message`), and input added while paused without
deciding anything (`input`, emulated: a note in the session's agent.state, folded into each later model call by
the agent's `ContextInjector` plugin)."""

from __future__ import annotations

from typing import Any

from arena.for_adapters import Decision, LegContext, LegResult

from .outcome import outcome
from .stream import invoke

NOTES = "arena:notes"  # agent.state key: input added while the run was paused (add_input), folded into model calls


async def new_message(runner: Any, state: dict[str, Any], message: Decision, ctx: LegContext) -> LegResult:
    """A new message instead of a decision (interruptions): strands' one way to give an agent new user input,
    the restored session's agent (`runner`) invoked with it as the prompt (`agent.invoke_async(text)`,
    `stream_async` in a streamed leg). Nothing answers the held interrupt first: at a pause strands takes only a
    list of interruptResponse's and raises on anything else (`_InterruptState.resume`, "must resume from interrupt
    with list of interruptResponse's"); that refusal is the leg's error, the session left as it was."""
    session_id, storage_dir = state["session_id"], state["storage_dir"]
    try:
        result = await invoke(runner, ctx, message.text)
    except Exception as exc:  # strands refused the message: a measured outcome, not the adapter's fault
        return LegResult.errored(f"{type(exc).__name__}: {exc}")
    return outcome(result, session_id, storage_dir)


def add_note(agent: Any, manager: Any, text: str) -> None:
    """Input while paused, by hand: the note added to the restored session's `agent.state` (NOTES), written to
    the session with `FileSessionManager.sync_agent` (`manager`); nothing is invoked and the interrupts stay as
    they were."""
    agent.state.set(NOTES, [*(agent.state.get(NOTES) or []), text])
    manager.sync_agent(agent)


def notes(context: Any) -> str | None:
    """ContextInjector's text: the input added while the run was paused (agent.state), or None (nothing folded)."""
    notes = context.state.get(NOTES) or []
    return "\n".join(str(n) for n in notes) or None
