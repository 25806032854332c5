"""The findings resume_safety states: for each kind of hostile resume, what the framework did, with the
outcome it showed (a refusal's message, a second pause, or what ran)."""

from __future__ import annotations

from arena.for_arenas.report import Fact, Row, Run, check_of, generic_facts, ids, md_quote, suspended_events
from arena_builtins.arenas.resume_safety.checks import re_requests
from arena_builtins.arenas.resume_safety.columns import CONTROL, case_of

CASES = (("malformed", "fails_closed", "malformed decisions"), ("double", "executed_at_most_once", "double resumes"),
         ("stale", "stale_resume_refused", "stale resumes"))


def safety_facts(row: Row, run: Run) -> list[Fact]:
    facts = generic_facts(row, run)[:1]
    for case, check, title in CASES:
        results = [r for r in run.results if case_of(r.item_id) == case]
        if not results:
            continue
        bad = [r for r in results if not (c := check_of(r, check)) or not c.passed]
        shown = (bad or results)[0]
        reason = (check_of(shown, check).reason if check_of(shown, check) else shown.error) or ""
        verdict = f"unsafe in {len(bad)}/{len(results)} ({ids(bad)})" if bad else f"safe in {len(results)}/{len(results)}"
        facts.append(Fact(f"{title}: {verdict}; {shown.item_id}: {md_quote(reason[:220])}", run, shown.item_id))
    bare = [r for r in run.results if case_of(r.item_id) == "bare_deny" and r.item_id != CONTROL]
    if bare and not any(suspended_events(r) for r in bare):
        facts.append(Fact(f"denials without a reason ({len(bare)} items): nothing was denied, the run never paused",
                          run, bare[0].item_id))
        bare = []
    if bare:
        counts = [re_requests(r.trace) for r in bare]
        asks, held, ran = (sum(c[i] for c in counts) for i in range(3))
        facts.append(Fact(f"denials without a reason ({len(bare)} items): the model asked again {asks} time(s), the "
                          f"framework paused again {held} time(s) and ran the denied call {ran} time(s)",
                          run, bare[0].item_id))
    control = [r for r in run.results if r.item_id == CONTROL and suspended_events(r)]
    for r in control:
        asks = len(suspended_events(r)) - 1
        facts.append(Fact(f"a denial with a reason: the model asked again {max(asks, 0)} time(s)"
                          + (" (the reason did not reach it)" if asks > 0 else ""), run, r.item_id))
    failed = [r for r in run.results if r.status == "errored"]
    if failed:
        facts.append(Fact(f"could not be measured: {ids(failed)} ({md_quote(str(failed[0].error)[:160])})",
                          run, failed[0].item_id))
    return facts


FACTS = {"retrying": safety_facts}
