"""The findings doc_review states, per profile: items passed, how mixed and edited decisions were applied,
and each document check that failed."""

from __future__ import annotations

from arena.for_arenas.report import Fact, Row, Run, generic_facts, ids, other_failures
from arena_builtins.arenas.doc_review.columns import rule_edited, rule_partial, rule_routed


def review_facts(row: Row, run: Run) -> list[Fact]:
    facts = generic_facts(row, run)
    profile = f"`{run.model}`"
    for rule, what in ((rule_partial, "pauses mixing approvals and denials were applied call by call"),
                       (rule_edited, "edited calls ran with the human's arguments only"),
                       (rule_routed, "every decision reached the model under its own call's id")):
        judged = [(r, rule(r)) for r in run.results]
        judged = [(r, v) for r, v in judged if v is not None]
        if not judged:
            continue
        good = [r for r, v in judged if v[0]]
        bad = [(r, v) for r, v in judged if not v[0]]
        text = f"with {profile}, {what} in {len(good)}/{len(judged)} items"
        if bad:
            text += f"; not in {ids([r for r, _ in bad])} (first: {bad[0][1][1]})"
        facts.append(Fact(text, run, (bad[0][0] if bad else good[0]).item_id))
    return facts + other_failures(run.results, profile, run)


FACTS = {"reviewer": review_facts, "reviewer-shuffled": review_facts}
