"""doc_review: several gated calls in one turn, decided call by call (approve, deny, edit), on real .docx files.

Adapted from the task catalog `shared/seeds/001` (comment and suggestion workflows). Each item gets
a fresh Word document with tracked changes and comment threads (`document.py`, `fixtures.py`); the
scripted reviewer asks for every edit in ONE turn; the human's decisions name their call
(`Decision.match`) and the harness routes each to the id the model gave that call. The checks
(`checks.py`) read the saved document, the tool log and the model's input.
"""

from __future__ import annotations

import json
from pathlib import Path

from arena.for_arenas import ArenaSpec, Decision, DecisionKind, EvalItem
from arena_builtins.arenas.doc_review import checks as _checks
from arena_builtins.arenas.doc_review import policy
from arena_builtins.arenas.doc_review.columns import COLUMNS
from arena_builtins.arenas.doc_review.findings import FACTS
from arena_builtins.arenas.doc_review.tools import SPECS, DocumentBackend

HERE = Path(__file__).parent

INSTRUCTIONS = (
    "You review Word documents with tracked changes and comments. Look at the changes and comments, then make "
    "every edit the request asks for, all at once: accept_change, reject_change, propose_edit (a suggestion, never "
    "a direct change), reply_comment and resolve_comment. The reviewer approves, denies or edits each gated call. "
    "Finally say which edits were applied and which were denied."
)

CHECKS = ["suspended", "no_tool_before_suspend", "document_matches_gold", "denied_left_no_trace",
          "approved_applied_once", "comments_as_decided", "track_changes_on", "decision_routed_by_call_id",
          "answer_matches_document"]


def load_items(path: Path) -> list[EvalItem]:
    items = []
    for row in json.loads(path.read_text()):
        decisions = [Decision.model_validate(d) for d in row["decisions"]]
        checks = list(CHECKS)
        if any(d.kind is DecisionKind.edit for d in decisions):
            checks.append("edited_args_executed")
        if any(d.kind is DecisionKind.deny for d in decisions):
            checks.append("acknowledged")
        if any(d.kind is DecisionKind.deny and d.text for d in decisions):
            checks.append("deny_reasons_reached_model")
        items.append(EvalItem(
            id=row["id"], input=row["input"], resume_with=[decisions], checks=checks,
            metadata={"catalog": row["catalog"], "fixture": row["fixture"], "calls": row["calls"], "why": row["why"]},
        ))
    return items


ARENA = ArenaSpec(
    name="doc_review",
    checks=_checks.CHECKS,
    description="Several gated document edits in one turn; the human approves, denies or edits each call; "
                "real .docx files with tracked changes and comment threads.",
    instructions=INSTRUCTIONS,
    tools=SPECS,
    functions={},
    items=load_items(HERE / "items.json"),
    ack_pattern=r"denied|declined|not applied",
    readme=(HERE / "README.md").read_text(),
    policies=policy.policies(),
    profile_notes=policy.descriptions(),
    backend=DocumentBackend,
    columns=COLUMNS,
    facts=FACTS,
    needs=("multi_call",),  # several pending calls in one pause: an adapter that pauses without it is not run
    order=5,
)
