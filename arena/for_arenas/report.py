"""What an arena adds to the reports: its matrix columns (`Column`, read from each item's checks and trace) and its
findings sentences (`Fact`), over the runs of a matrix (`Run`, `Row`), in the reports' Markdown."""

from __future__ import annotations

from arena.report.columns import (
    Cell,
    Column,
    Evidence,
    check_of,
    count_cell,
    final_text,
    injected,
    model_input_after,
    rule_item_passed,
    rule_pause_enforced,
    suspended_events,
    was_denied,
)
from arena.report.facts import (
    Fact,
    clip,
    declared,
    ids,
    names,
    of,
    other_failures,
    tool_counts,
    tools_of,
    writes_before_pause,
)
from arena.report.findings import generic_facts
from arena.report.matrix import Row, Run
from arena.report.render_md import md_quote, md_text

__all__ = [
    "Cell", "Column", "Evidence", "Fact", "Row", "Run", "check_of", "clip", "count_cell", "declared",
    "final_text", "generic_facts", "ids", "injected", "md_quote", "md_text", "model_input_after", "names", "of",
    "other_failures", "rule_item_passed", "rule_pause_enforced", "suspended_events", "tool_counts", "tools_of",
    "was_denied", "writes_before_pause"
]
