"""The findings flight_booking states, per profile: items passed, what purchase_hold's body did, and
each ledger check that failed."""

from __future__ import annotations

from arena.for_arenas.report import Fact, Row, Run, generic_facts, ids, other_failures
from arena_builtins.arenas.flight_booking.columns import rule_body_reexecuted


def flight_facts(row: Row, run: Run) -> list[Fact]:
    facts = generic_facts(row, run)
    profile = f"`{run.model}`"
    paused = [r for r in run.results if rule_body_reexecuted(r) is not None]
    again = [r for r in paused if rule_body_reexecuted(r)[0]]  # type: ignore[index]
    whole = [r for r in run.results if any(e.type == "tool_call" and e.tool == "purchase_hold" for e in r.trace)]
    if paused:
        facts.append(Fact(f"with {profile}, purchase_hold paused inside its body in {len(paused)} items; its prepare "
                          f"step ran again on resume in {len(again)}/{len(paused)}" + (f": {ids(again)}" if again else ""),
                          run, (again or paused)[0].item_id))
    if whole:
        facts.append(Fact(f"with {profile}, purchase_hold ran as one call (prepare and commit together, no pause in "
                          f"its body) in {len(whole)} items: {ids(whole)}", run, whole[0].item_id))
    return facts + other_failures(run.results, profile, run)


FACTS = {"careful": flight_facts, "reckless": flight_facts}
