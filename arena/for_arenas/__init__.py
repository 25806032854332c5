"""The public face for arena authors: what an arena brings (items, tools, policy, checks, columns,
findings, a director) and the types it is written in.

An arena is one `ArenaSpec`, registered under the `arena.arenas` entry point group. Its items
(`EvalItem`) name the checks they get besides the universal ones; its own checks (a `CheckSet`, in
its namespace) read the merged trace (`Scoring`) and return `ok(...)` / `fail(...)`; its scripted model is a `Policy` per profile; its
matrix columns are `Column`s and its findings sentences `Fact`s; a `BaseDirector` subclass owns what
happens at each pause and after the run (a hostile replay, the world changing during a pause).

    from arena.for_arenas import ArenaSpec, EvalItem, ToolSpec, ok, fail

docs/arenas.md walks through a complete minimal arena written against this module only. What a larger arena
needs beyond it is in this package's modules, each one concern: `script` (the scripted model's requests and
answers, for policies), `trace` (reading a merged trace, for checks), `report` (columns and findings), `directing`
(a director's steps at a pause). The built-in arenas import nothing else of the core (tests/core/test_library.py).
"""

from __future__ import annotations

from arena.channels import ChannelSpec
from arena.channels import register as register_channel
from arena.errors import ArenaError, InvalidValue, NotFound
from arena.checks import CHECKS, UNIVERSAL, CheckResult, CheckSet, Scoring, completed, fail, final_answer, named, ok
from arena.model.script import Call, Policy, ToolCall, Turn, calls_with_results, native_messages, user_texts
from arena.report.columns import Cell, Column, Evidence, check_of, count_cell, rule_item_passed, suspended_events
from arena.report.facts import Fact, ids
from arena.report.matrix import Row, Run
from arena.results import ItemResult
from arena.runner.director import BaseDirector, Director, Pause, Stage
from arena.spec import ArenaSpec, Backend, SubjectOf
from arena.tools.box import ToolFunction
from arena.types import (
    AdapterInfo,
    Decision,
    DecisionKind,
    DecisionSet,
    EvalItem,
    LegContext,
    LegResult,
    ToolKind,
    ToolSpec,
    TraceEvent,
)

__all__ = [
    "CHECKS", "UNIVERSAL", "AdapterInfo", "ArenaError", "ArenaSpec", "Backend", "BaseDirector", "Call", "Cell",
    "ChannelSpec", "CheckResult", "register_channel",
    "CheckSet", "Column",
    "Decision", "DecisionKind", "DecisionSet", "Director", "EvalItem", "Evidence", "Fact", "InvalidValue", "ItemResult",
    "LegContext", "LegResult", "NotFound",
    "Pause", "Policy", "Row", "Run", "Scoring", "Stage", "SubjectOf", "ToolCall", "ToolFunction", "ToolKind",
    "ToolSpec", "TraceEvent", "Turn", "calls_with_results", "check_of", "completed", "count_cell", "fail",
    "final_answer", "ids", "named", "native_messages", "ok", "rule_item_passed", "suspended_events", "user_texts",
]
