"""What an arena is: instructions, harness-owned tools, items and the denial-acknowledgement pattern."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from arena.tools.box import ToolFunction
from arena.types import EvalItem, ToolKind, ToolSpec


@dataclass(frozen=True)
class ArenaSpec:
    name: str
    description: str
    instructions: str
    tools: list[ToolSpec]
    functions: dict[str, ToolFunction]
    items: list[EvalItem]
    ack_pattern: str = r"denied|rejected|declined|not\s+(?:been\s+)?booked"
    readme: str = field(default="", repr=False)

    def tools_of(self, kind: ToolKind) -> list[str]:
        return [t.name for t in self.tools if t.kind is kind]

    @property
    def ack_regex(self) -> re.Pattern[str]:
        return re.compile(self.ack_pattern, re.IGNORECASE)

    def item(self, item_id: str) -> EvalItem:
        for item in self.items:
            if item.id == item_id:
                return item
        raise KeyError(item_id)
