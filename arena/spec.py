"""What an arena is: instructions, harness-owned tools, items and the denial-acknowledgement pattern."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from arena.tools.box import ToolFunction
from arena.types import AdapterInfo, EvalItem, ToolKind, ToolSpec


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
    profiles: tuple[str, ...] = ("scripted",)  # scripted-model profiles that exercise it; the first is the default
    restart_between_legs: bool = False  # each leg in a new process, resuming from persisted state only

    def tools_of(self, kind: ToolKind) -> list[str]:
        return [t.name for t in self.tools if t.kind is kind]

    @property
    def pause_tools(self) -> list[str]:
        """Where a correct run suspends: the approval tool, or a tool the framework must gate."""
        return self.tools_of(ToolKind.approval) + [t.name for t in self.tools if t.requires_approval]

    @property
    def gated(self) -> bool:
        return any(t.requires_approval for t in self.tools)

    def pause_kind_of(self, info: AdapterInfo) -> str:
        return info.tool_gate if self.gated else info.pause_kind

    def pause_mechanism_of(self, info: AdapterInfo) -> str:
        return (info.tool_gate_mechanism or "none") if self.gated else info.pause_mechanism

    @property
    def ack_regex(self) -> re.Pattern[str]:
        return re.compile(self.ack_pattern, re.IGNORECASE)

    def item(self, item_id: str) -> EvalItem:
        for item in self.items:
            if item.id == item_id:
                return item
        raise KeyError(item_id)
