"""The reference adapter: a plain tool-calling loop over the official `openai` client.

Its pause is emulated: the leg returns, carrying the transcript and the turn's held tool calls back
out as its state, and the next leg carries them back in. Nothing from the turn that asked for
approval executes before the decision; on deny, the held calls are never executed and the model is
told so; the decision reaches the model as the approval tool's result. A call to a gated tool
(approval_gate) pauses the same way: approved, it executes; denied, the decision is its result.
Several gated calls in one turn pause together, and each runs (as asked or as edited) or gets its
denial by its own decision, matched by call id.

It is the reference for resume_safety, so a resume is checked before anything runs: a decision set
that leaves a held call undecided, names a call that is not held, or holds a `null` decision is
refused whole (ValueError, the paused state stays resumable), and each pause is resumed at most once
(a process-wide record of resumed pauses, kept outside the state: a replayed copy of the state, a
concurrent second resume or an older pause's state is refused).
A new message instead of a decision (interruptions) cancels what the pause held: each held call is answered
`CANCELLED` without running, the message becomes the user's next turn, and the pause counts as resumed (a late
approval of it is refused).
Delegates (delegation, `agents_of(ctx)`): the run's agent is offered one tool per delegate called as a tool (named
after it, its task as `input`) and a `transfer_to_<name>` per delegate it hands off to. A delegate called as a tool
runs its own loop, with its own tools, on its own transcript; a pause in it pauses the whole run, holding every
waiting delegate's calls (each named with its agent), and the decisions resume each delegate where it stopped; its
answer is then the tool's result. A handoff replaces the run's instructions with the delegate's and the rest of the
run is its loop, on the same transcript.
Nothing of this survives a process restart, which is what makes it `emulated`.
"""

from __future__ import annotations

from .adapter import VanillaAdapter
from .client import create
from .decision import check_decisions
from .input import CANCELLED
from .outcome import Paused
from .tools import pause_names

__all__ = ["CANCELLED", "Paused", "VanillaAdapter", "check_decisions", "create", "pause_names"]
