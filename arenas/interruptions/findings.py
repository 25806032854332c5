"""The findings interruptions states: what each framework did with a new message at a pause (per outcome), with
a late approval of the call it superseded, with a question it had to ask, and at a handoff."""

from __future__ import annotations

from collections import Counter

from arena.for_arenas.report import Fact, Row, Run, check_of, generic_facts, ids, md_quote
from arena_builtins.arenas.interruptions.checks import NOT_DELIVERED, fate
from arena_builtins.arenas.interruptions.columns import group_of


def interruption_facts(row: Row, run: Run) -> list[Fact]:
    facts = generic_facts(row, run)[:1]
    messages = [r for r in run.results if group_of(r.item_id) == "message"]
    if messages:
        fates = [(r, *fate(r.trace)) for r in messages]
        counts = Counter(outcome for _, outcome, _ in fates)
        shown = next((f for f in fates if f[1] != "cancelled"), fates[0])
        said = ", ".join(f"{outcome} in {n}" for outcome, n in counts.most_common())
        facts.append(Fact(f"a new message instead of a decision ({len(messages)} items): what became of the pending "
                          f"call: {said}; "
                          f"{shown[0].item_id}: {md_quote(shown[2][:200])}", run, shown[0].item_id))
    late = [r for r in run.results if check_of(r, "late_approval_refused") is not None]
    missed = [r for r in late if check_of(r, "late_approval_refused").reason == NOT_DELIVERED]
    late = [r for r in late if r not in missed]
    if late:
        bad = [r for r in late if not check_of(r, "late_approval_refused").passed]
        shown = (bad or late)[0]
        verdict = f"ran something in {len(bad)}/{len(late)} ({ids(bad)})" if bad else f"ran nothing in {len(late)}/{len(late)}"
        facts.append(Fact(f"a late approval of the superseded call {verdict}; {shown.item_id}: "
                          f"{md_quote(check_of(shown, 'late_approval_refused').reason[:200])}", run, shown.item_id))
    if missed:
        facts.append(Fact(f"a late approval was never delivered in {ids(missed)}: the run never reached the pause it "
                          "comes at", run, missed[0].item_id))
    for group, title in (("clarify", "a request it had to clarify"), ("handoff", "a handoff at the confirmation"),
                         ("always", "an approve/deny-always (and its control)"),
                         ("input", "input added while paused")):
        results = [r for r in run.results if group_of(r.item_id) == group]
        if not results:
            continue
        bad = [r for r in results if r.status != "passed"]
        shown = (bad or results)[0]
        why = shown.error or "; ".join(f"{c.name}: {c.reason}" for c in shown.checks if not c.passed) or \
            next((c.reason for c in shown.checks if c.name in OWN), "")
        verdict = f"{len(results) - len(bad)}/{len(results)} passed" + (f" (not: {ids(bad)})" if bad else "")
        facts.append(Fact(f"{title}: {verdict}; {shown.item_id}: {md_quote(why[:200])}", run, shown.item_id))
    return facts


OWN = ("clarified_before_acting", "handoff_nothing_committed", "sticky_approval_scoped", "midrun_input_seen")
FACTS = {"careful": interruption_facts}
