"""Reading a merged trace, for an arena's checks: the model's calls and answers, what the human was shown and asked,
the decision in a request, the legs a replay made."""

from __future__ import annotations

from arena.observed import (
    DENIAL_RE,
    answer_text,
    answered,
    answers_pause,
    asked_calls,
    calls_after_resume,
    decision_in,
    describe,
    instructions_sent,
    model_calls,
    replay_legs,
    requesting_call,
    show_call,
    shown_requests,
    squash,
)

__all__ = [
    "DENIAL_RE", "answer_text", "answered", "answers_pause", "asked_calls", "calls_after_resume", "decision_in",
    "describe", "instructions_sent", "model_calls", "replay_legs", "requesting_call", "show_call", "shown_requests",
    "squash"
]
