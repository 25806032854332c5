"""What the room-booking arenas share: the item file format and the task sentence."""

from __future__ import annotations

import json
from pathlib import Path

from arena.types import Decision, EvalItem


def load_items(path: Path, approved_checks: list[str], denied_checks: list[str]) -> list[EvalItem]:
    items = []
    for row in json.loads(path.read_text()):
        decision = Decision.model_validate(row["decision"])
        items.append(
            EvalItem(
                id=row["id"],
                input=f"Book a meeting room for {row['capacity']} people on {row['day']}.",
                metadata={k: row[k] for k in ("capacity", "day", "expected_room")},
                resume_with=[decision],
                checks=approved_checks if decision.approved else denied_checks,
            )
        )
    return items
