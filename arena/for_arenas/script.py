"""The scripted model, for an arena's policies: what a request holds (the user's texts, the calls and their results,
the decision a human gave as the framework put it) and what a policy answers (`Turn`, `ToolCall`), drawn per item
and epoch (`Draw`, `Sampled`)."""

from __future__ import annotations

from arena.model.script import (
    Call,
    Draw,
    Policy,
    Sampled,
    SeesTools,
    ToolCall,
    Turn,
    calls_with_results,
    classify_decision,
    last_call,
    native_messages,
    note_of,
    reason_of,
    text_of,
    unwrap_result,
    user_texts,
)

__all__ = [
    "Call", "Draw", "Policy", "Sampled", "SeesTools", "ToolCall", "Turn", "calls_with_results",
    "classify_decision", "last_call", "native_messages", "note_of", "reason_of", "text_of", "unwrap_result",
    "user_texts"
]
