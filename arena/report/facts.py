"""The vocabulary of findings.md sentences, for the core and for arenas: a fact, and how facts are counted.

A fact is one sentence stated from counts over the traces, with one trace that shows it. Arenas
contribute their own per-profile facts (`ArenaSpec.facts`) with these helpers; the core renders them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Set
from dataclasses import dataclass
from pathlib import Path

from arena import catalog
from arena.report.columns import check_of, suspended_events
from arena.report.matrix import Row, Run
from arena.report.render_md import md_link, md_quote, md_text
from arena.results import ItemResult
from arena.types import TraceEvent


@dataclass
class Fact:
    text: str
    run: Run | None = None
    item: str | None = None  # the item whose trace shows it

    def render(self, doc_dir: Path | None) -> str:
        if self.run is None or self.item is None:
            return f"- {self.text}"
        trace = self.run.trace_path(self.item)
        shown = f"{self.run.path.name}/traces/{self.item}.jsonl"
        return f"- {self.text} (evidence: {md_link(shown, trace, doc_dir)})"


def tools_of(arena: str) -> tuple[list[str], list[str]]:
    """(approval tools, consequential tools) of an arena, from its spec; empty if it cannot be loaded."""
    from arena.types import ToolKind

    try:
        spec = catalog.load_arena(arena)
    except (LookupError, ImportError, ValueError):  # not in this installation, or it cannot be loaded
        return [], []
    return spec.tools_of(ToolKind.approval), spec.tools_of(ToolKind.write)


def names(tools: list[str]) -> str:
    return "/".join(f"`{t}`" for t in tools) or "a consequential tool"


def of(results: list[ItemResult], pred: Callable[[ItemResult], object]) -> list[ItemResult]:
    return [r for r in results if pred(r)]


def ids(results: list[ItemResult]) -> str:
    from arena.report.render_md import md_text

    return ", ".join(md_text(r.item_id) for r in results)


def tool_counts(results: list[ItemResult]) -> str:
    counts: dict[str, int] = {}
    for r in results:
        for e in r.trace:
            if e.type == "tool_call":
                counts[str(e.tool)] = counts.get(str(e.tool), 0) + 1
    return ", ".join(f"`{md_text(t)}` ×{c}" for t, c in counts.items()) or "none"


# ids a framework or the model makes anew in every run (a UUID, a model's call id): a sentence quoting a reason
# states them as <id>, so that findings.md is the same for every run of the same behaviour
RUN_IDS = re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b|\bcall_[0-9a-f]{8,}(?:_\d+)?\b")


def clip(text: str, limit: int = 100) -> str:
    text = RUN_IDS.sub("<id>", text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def first_pause_seq(r: ItemResult) -> int | None:
    pauses = suspended_events(r)
    return pauses[0].seq if pauses else None


def writes_before_pause(r: ItemResult, writes: list[str]) -> list[TraceEvent]:
    """Consequential tool calls that executed before the first suspension (or at all, if it never paused)."""
    pause = first_pause_seq(r)
    return [e for e in r.trace if e.type == "tool_call" and e.tool in writes and (pause is None or e.seq < pause)]


def other_failures(results: list[ItemResult], profile: str, run: Run, described: Set[str] = frozenset()) -> list[Fact]:
    """A fact for each check that failed somewhere and that the caller has not stated in its own words."""
    facts = []
    names = dict.fromkeys(c.name for r in results for c in r.checks if c.name not in described)
    for name in names:
        failed = [r for r in results if (c := check_of(r, name)) is not None and not c.passed]
        if failed:
            total = sum(check_of(r, name) is not None for r in results)
            first = check_of(failed[0], name)
            assert first is not None  # each of `failed` has that check
            facts.append(Fact(f"with {profile}, `{name}` failed in {len(failed)}/{total} items: "
                              f"{md_quote(clip(first.reason, 160))}", run, failed[0].item_id))
    return facts


def declared(row: Row, capability: str) -> str:
    caps = row.capabilities
    if capability not in caps:
        return ""
    return f" (declared {capability}={'true' if caps[capability] else 'false'})"
