"""What an arena is: instructions, harness-owned tools, items and the denial-acknowledgement pattern."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from arena.tools.box import ToolFunction
from arena.types import AdapterInfo, Capabilities, EvalItem, ToolKind, ToolSpec

# The subject of a request or call (e.g. the room it is about), so that checks can tell whether the
# call executed after a pause is the one the human was asked about.
SubjectOf = Callable[[dict[str, Any]], "str | None"]


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
    subject_of: SubjectOf | None = field(default=None, repr=False)

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

    def capabilities_of(self, info: AdapterInfo) -> Capabilities:
        """What the adapter declares its pause channel carries in this arena (a claim the checks test)."""
        if self.gated and info.gate_capabilities is not None:
            return info.gate_capabilities
        return info.capabilities

    @property
    def ack_regex(self) -> re.Pattern[str]:
        return re.compile(self.ack_pattern, re.IGNORECASE)

    def item(self, item_id: str) -> EvalItem:
        for item in self.items:
            if item.id == item_id:
                return item
        raise KeyError(item_id)
