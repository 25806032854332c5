"""What vanilla declares: its framework (the `openai` client) and each pause channel, in its terms."""

from __future__ import annotations

from arena.for_adapters import AdapterInfo, Capabilities, Channel
from arena_builtins.arenas.delegation.channel import DEEP_NESTED, HANDOFF, NESTED, SHARED_NAME
from arena_builtins.arenas.follow_up.channel import FOLLOW_UP
from arena_builtins.arenas.resume_safety.channel import LIVE_TWIN
from arena_builtins.arenas.run_context.channel import RUN_CONTEXT

INFO = AdapterInfo(
    name="vanilla",
    framework="openai",
    channels=(
        Channel(
            name="ask",
            kind="emulated",
            mechanism="transcript carried across legs (no framework)",
        ),
        Channel(
            name="tool_gate",
            kind="emulated",
            mechanism="calls to gated tools held by the loop; transcript carried across legs",
            carries=Capabilities(
                deny_reason=True, approve_note=False, free_text=False, edit_args=True,
                notes="a denial's text is the held call's result; an approved call's result is the tool's own; "
                      "an edited call runs with the human's arguments",
            ),
        ),
        Channel(
            name="body_pause",
            kind="emulated",
            mechanism="the loop runs a body-pausing tool's prepare step, returns suspended with it, and "
                      "on resume runs commit (approved) or abort (denied); nothing runs twice",
        ),
        Channel(
            name="multi_call",
            kind="emulated",
            mechanism="every gated call of the turn held by the loop; each decided by its call id",
        ),
        Channel(
            name="message",
            kind="emulated",
            mechanism="every held call answered 'CANCELLED' (it never runs), then the message appended as the "
                      "user's next turn; the pause counts as resumed, so a late decision on it is refused",
        ),
        Channel(
            name="always",
            kind="emulated",
            mechanism="an approve or deny marked always stands for every later call of that tool in the run; a "
                      "call's own decision at a pause holding several still decides that call",
        ),
        Channel(
            name="input",
            kind="emulated",
            mechanism="add_input keeps the text with the paused state; on resume it is the user's next turn, after "
                      "the held calls' results",
        ),
        Channel(
            name=NESTED,
            kind="emulated",
            mechanism="a delegate called as a tool runs its own loop on its task; its gated call pauses the whole "
                      "run, the decision resumes that loop, and its answer is the tool's result",
        ),
        Channel(
            name=HANDOFF,
            kind="emulated",
            mechanism="transfer_to_<name>: the delegate's instructions replace the run's and its loop goes on with "
                      "the transcript",
        ),
        Channel(
            name=LIVE_TWIN,
            kind="emulated",
            mechanism="live_twin: a deep copy of the paused turn (vanilla hands out no live state of its own); both "
                      "copies are the same pause, which resumes once",
        ),
        Channel(
            name=RUN_CONTEXT,
            kind="emulated",
            mechanism="the system message of every request is written from the leg's run context (the paused "
                      "transcript keeps the plain instructions), so a resume's context is the one the model sees",
        ),
        Channel(
            name=DEEP_NESTED,
            kind="emulated",
            mechanism="a delegate's loop calls its own delegates as the run's loop does; the innermost pause is kept "
                      "inside each caller's paused turn, and the decision resumes that innermost loop, then each caller",
        ),
        Channel(
            name=SHARED_NAME,
            kind="emulated",
            mechanism="the loop names no agent of its own: a delegate is found by the tool that reaches it and a held "
                      "call by its id, so the desk sharing a delegate's name changes nothing it does",
        ),
        Channel(
            name="stream",
            kind="native",
            mechanism="chat.completions.create(stream=True) read to its end, tool calls assembled from their "
                      "deltas; the loop tells each call, each result and the pause",
        ),
        Channel(
            name=FOLLOW_UP,
            kind="native",
            mechanism="the loop's transcript, kept after every step, with the user's next message appended, and the "
                      "loop run on it (chat.completions.create with the whole message list)",
        ),
        # the paused turn lives in the process's memory: no store holds it (vanilla_durable journals it to one)
        Channel(name="postgres", kind="unsupported",
                mechanism="vanilla keeps the paused turn in memory; it is kept in no store (vanilla_durable is "
                          "the reference that keeps it in PostgreSQL)"),
        Channel(name="redis", kind="unsupported",
                mechanism="vanilla keeps the paused turn in memory; it is kept in no store (vanilla_durable is "
                          "the reference that keeps it in Redis)"),
    ),
)
