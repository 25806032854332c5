"""The findings delegation states per framework: where its delegate's pause held, where a decision went, whether the
resume re-ran the delegate, and whether the pause outlived its process, each with an item as evidence."""

from __future__ import annotations

from arena.for_arenas.report import Fact, Row, Run, check_of, generic_facts, ids, md_quote

SAID = (("nested_pause_enforced", "the whole run stopped at the delegate's gated call"),
        ("nested_decision_routed", "each decision reached its own delegate's call"),
        ("inner_rerun_on_resume", "resuming did not re-run the delegate"),
        ("delegate_reported_outcome", "each delegate reported its call's outcome, and its answer reached the user"),
        ("nested_durable", "the nested pause survived a new process"))


def delegation_facts(row: Row, run: Run) -> list[Fact]:
    facts = generic_facts(row, run)[:1]
    for check, title in SAID:
        results = [r for r in run.results if check_of(r, check) is not None]
        if not results:
            continue
        bad = [r for r in results if not check_of(r, check).passed]
        shown = (bad or results)[0]
        verdict = f"{len(results) - len(bad)}/{len(results)}" + (f" (not: {ids(bad)})" if bad else "")
        facts.append(Fact(f"{title}: {verdict}; {shown.item_id}: {md_quote(check_of(shown, check).reason[:200])}",
                          run, shown.item_id))
    others: dict[str, list] = {}
    for r in run.results:  # every other check that failed somewhere, with its first item as evidence
        for c in r.checks:
            if not c.passed and c.name not in dict(SAID):
                others.setdefault(c.name, []).append(r)
    for check, bad in others.items():
        shown = bad[0]
        facts.append(Fact(f"{check} failed in {ids(bad)}; {shown.item_id}: "
                          f"{md_quote(check_of(shown, check).reason[:200])}", run, shown.item_id))
    return facts


FACTS = {"careful": delegation_facts}
