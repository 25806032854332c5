"""What an arena is: a self-contained task class, from its items to what it contributes to the report.

An arena package (`arenas/<name>/`) exposes one `ArenaSpec`: instructions, harness-owned tools and
their functions, items, its scripted-model policies (profiles), the checks its items name, the
matrix columns and findings sentences it contributes, and its director (what happens at each pause and
after the run, `arena/runner/director.py`). The core runs and reports any arena through this spec
alone, so adding an arena never edits the core.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from arena.errors import NotFound
from arena.model.script import Policy
from arena.tools.box import ToolFunction
from arena.types import AdapterInfo, Capabilities, ChannelName, EvalItem, ToolKind, ToolSpec

if TYPE_CHECKING:
    from arena.report.columns import Column
    from arena.report.facts import Fact
    from arena.report.matrix import Row, Run
    from arena.checks import Check
    from arena.runner.director import Director, Stage

    FactsOf = Callable[[Row, Run], list[Fact]]

# The subject of a request or call (e.g. the room it is about), so that checks can tell whether the
# call executed after a pause is the one the human was asked about.
SubjectOf = Callable[[dict[str, Any]], "str | None"]


class Backend(Protocol):
    """An item's own tool backend: tools run against its state, in harness code, and are logged there.
    What changes it besides the tools (the world moving on during a pause) is the arena's director's.
    A backend whose `call` also takes `call_id` is handed the framework's id for the call where the adapter
    passed one (`ToolBox.call`): what a tool can de-duplicate by."""

    def call(self, name: str, args: dict[str, Any]) -> str: ...

    def dump(self) -> dict[str, Any]:
        """The state after the run, as JSON data: recorded in the trace for the checks."""

    def close(self) -> None: ...


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
    # its scripted model: profile name -> policy, in run order; the first is the default profile
    policies: Mapping[str, Policy] = field(default_factory=dict, repr=False)
    profile_notes: Mapping[str, str] = field(default_factory=dict, repr=False)  # what each profile does
    # profiles `--model` accepts that `arena matrix` does not run: runs of them would change the committed
    # reports (e.g. `sampled`, which deviates like a real model, for `arena run --epochs`)
    extra_policies: Mapping[str, Policy] = field(default_factory=dict, repr=False)
    restart_between_legs: bool = False  # each leg in a new process, resuming from persisted state only
    # the matrix also runs it with the paused state on each server store it is asked for (`--store postgres|redis`),
    # as the cells of its `<name>@<store>` columns
    stores: bool = False
    # the matrix also runs it, for every framework with several releases, paused by one release and resumed by the
    # next (`arena run --resume-on`), as the cells of its `<name>@upgrade` columns (needs restart_between_legs)
    upgrades: bool = False
    subject_of: SubjectOf | None = field(default=None, repr=False)
    # a per-item tool backend with state (a database): made fresh for each item, dumped after the run; None for an
    # item that has none (its tools are the arena's `functions`)
    backend: Callable[[EvalItem, Path], Backend | None] | None = field(default=None, repr=False)
    columns: tuple[Column, ...] = field(default=(), repr=False)  # what it adds to the feature matrix
    facts: Mapping[str, FactsOf] = field(default_factory=dict, repr=False)  # findings sentences, per profile
    order: int = 100  # where it stands in reports (lower first)
    # why an adapter is not run on this arena (None: it is): for an adapter that lacks what the arena
    # needs from the ADAPTER (not from its framework), so nothing would be measured
    declines: Callable[[AdapterInfo], str | None] | None = field(default=None, repr=False)
    # the pause channels its items need beyond the one they pause through (e.g. `multi_call`: several pending
    # calls in one pause); an adapter that pauses here without one of them is not run (`declined`)
    needs: tuple[ChannelName, ...] = ()
    # the checks every item gets besides its own (None: the core's `UNIVERSAL`); an arena whose items end
    # in errors by design (hostile resumes) judges how its runs end with checks of its own
    universal: tuple[str, ...] | None = None
    # its own checks, in its namespace (an `arena.checks.CheckSet`): what its items name besides the core's
    checks: Mapping[str, Check] = field(default_factory=dict, repr=False)
    # its scenario around each item's pauses (None: the core's, which only runs the legs), made per item:
    # hostile resumes of a saved state, the world changing while the human decides (arena/runner/director.py)
    director: Callable[[Stage], Director] | None = field(default=None, repr=False)
    # which items resume one paused state a second time at once (a concurrent replay): for those the harness
    # gives the director a second adapter in a worker process of its own (`Stage.spare_factory`)
    second_process: Callable[[EvalItem], bool] | None = field(default=None, repr=False)
    # why an adapter is not measured on an item (None: it is): the item needs a way its framework does not
    # document (crash_recovery's `continue` recovery); such items are left out of its run and named in meta.json
    unmeasured: Callable[[EvalItem, AdapterInfo], str | None] | None = field(default=None, repr=False)
    # what the arena's own channels add to an item's legs (`LegContext.extra`: JSON data by key; None: nothing), so a
    # channel an arena registers carries its context without a field of the core's
    leg_context: Callable[[EvalItem], dict[str, Any]] | None = field(default=None, repr=False)

    def items_for(self, info: AdapterInfo, items: list[EvalItem]) -> tuple[list[EvalItem], dict[str, str]]:
        """The items this adapter is measured on, and why each other one is not (`unmeasured`)."""
        if self.unmeasured is None:
            return list(items), {}
        why = {i.id: self.unmeasured(i, info) for i in items}
        return [i for i in items if why[i.id] is None], {k: v for k, v in why.items() if v is not None}

    def declined(self, info: AdapterInfo) -> str | None:
        """Why this adapter is not run here (None: it is). The one rule for every arena: a channel it needs
        that the adapter does not handle means nothing would be measured; then the arena's own `declines`."""
        missing = self.missing_channels(info)
        if missing:
            return (f"{info.name} does not handle the {', '.join(missing)} channel{'s' * (len(missing) > 1)} "
                    f"this arena needs (not in its AdapterInfo.channels): nothing would be measured")
        return self.declines(info) if self.declines is not None else None

    @property
    def profiles(self) -> tuple[str, ...]:
        """The scripted-model profiles that exercise it; the first is the default."""
        return tuple(self.policies)

    @property
    def all_policies(self) -> dict[str, Policy]:
        """What the arena's items' endpoints serve: its profiles and its extra ones."""
        return {**self.policies, **self.extra_policies}

    @property
    def accepted_profiles(self) -> tuple[str, ...]:
        """The scripted profiles `arena run --model` accepts: `profiles`, then the extra ones."""
        return tuple(self.all_policies)

    def tools_of(self, kind: ToolKind) -> list[str]:
        return [t.name for t in self.tools if t.kind is kind]

    @property
    def pause_tools(self) -> list[str]:
        """Where a correct run suspends: the approval tool, a tool the framework must gate, or one whose body pauses."""
        return self.tools_of(ToolKind.approval) + [t.name for t in self.tools if t.requires_approval or t.body_pause]

    def tools_for(self, info: AdapterInfo) -> list[ToolSpec]:
        """The tools as this adapter gets them: a body-pausing tool is gated before the call instead when the
        adapter's framework cannot pause inside a tool's body (it then runs prepare and commit in one call)."""
        if info.kind("body_pause") != "unsupported":
            return list(self.tools)
        return [t.model_copy(update={"body_pause": False, "requires_approval": True}) if t.body_pause else t
                for t in self.tools]

    @property
    def gated(self) -> bool:
        return any(t.requires_approval for t in self.tools)

    @property
    def pausing_channel(self) -> ChannelName:
        """The channel its items pause through: the tool gate where it gates tools, else the approval tool."""
        return "tool_gate" if self.gated else "ask"

    def pause_kind_of(self, info: AdapterInfo) -> str:
        return info.kind(self.pausing_channel)

    def pause_mechanism_of(self, info: AdapterInfo) -> str:
        return (info.mechanism("tool_gate") or "none") if self.gated else info.mechanism("ask")

    def capabilities_of(self, info: AdapterInfo) -> Capabilities:
        """What the adapter declares its pause channel carries in this arena (a claim the checks test)."""
        return info.carries(self.pausing_channel)

    def __post_init__(self) -> None:
        """A channel this arena needs is a registered one (arena/channels.py): a typo, or a channel whose arena did not
        register it, is one error at load naming both, never an arena no adapter can ever run."""
        from arena import channels

        for name in self.needs:
            channels.require(name, f"arena {self.name!r}")

    def missing_channels(self, info: AdapterInfo) -> list[ChannelName]:
        """The channels this arena needs that the adapter does not list. They matter only where the adapter
        pauses at all here: one whose framework has no such pause runs, and the checks show what happens."""
        if info.kind(self.pausing_channel) == "unsupported":
            return []
        return [name for name in self.needs if info.channel(name) is None]

    @property
    def ack_regex(self) -> re.Pattern[str]:
        return re.compile(self.ack_pattern, re.IGNORECASE)

    def item(self, item_id: str) -> EvalItem:
        for item in self.items:
            if item.id == item_id:
                return item
        raise NotFound(f"{self.name} has no item {item_id!r}")
