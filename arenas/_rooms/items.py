"""The room arenas' item file format, the task sentence, the checks every room item runs, and a request's room."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from arena.for_arenas import Decision, EvalItem

ROOM_ID = re.compile(r"\bR\d{3}\b")

# Every room arena checks these on approved / denied items, besides its own.
APPROVED = ["suspended", "no_tool_before_suspend", "tool_called_once_after_resume", "args_as_requested",
            "decision_reached_model", "no_replay"]
DENIED = ["suspended", "no_tool_before_suspend", "tool_not_used", "acknowledged", "decision_reached_model", "no_replay"]


def room_of(args: dict[str, Any]) -> str | None:
    """The room a request or call is about: a `room_id`, or the first room id named in its text."""
    match = ROOM_ID.search(" ".join(str(v) for v in args.values()))
    return match.group(0) if match else None


def load_items(path: Path, approved_checks: list[str], denied_checks: list[str]) -> list[EvalItem]:
    items = []
    for row in json.loads(path.read_text()):
        decision = Decision.model_validate(row["decision"])
        items.append(
            EvalItem(
                id=row["id"],
                input=f"Book a meeting room for {row['capacity']} people on {row['day']}.",
                # `restart_store`: on a server store, its server is stopped and restarted during the pause
                metadata={k: row[k] for k in ("capacity", "day", "expected_room", "restart_store") if k in row},
                resume_with=[decision],
                checks=approved_checks if decision.approved else denied_checks,
            )
        )
    return items
