"""The findings crash_recovery states: whether a recovered run asked the human again, whether it paid once against a
tool without an idempotency key, and each check that failed (with its first reason: where the money went twice, or
what the recovery did instead)."""

from __future__ import annotations

from arena.for_arenas.report import Fact, Row, Run, generic_facts, ids, other_failures
from arena_builtins.arenas.crash_recovery.columns import rule_paid_once_no_key, rule_ran_again, rule_reasked


def crash_facts(row: Row, run: Run) -> list[Fact]:
    facts = generic_facts(row, run)
    profile = f"`{run.model}`"
    crashed = [r for r in run.results if rule_reasked(r) is not None]
    reasked = [r for r in crashed if (rule_reasked(r) or (False, ""))[0]]
    if crashed:
        facts.append(Fact(f"with {profile}, the recovered run asked the human again in {len(reasked)}/{len(crashed)} "
                          "items crashed inside the approved action" + (f": {ids(reasked)}" if reasked else ""),
                          run, (reasked or crashed)[0].item_id))
    effect = [r for r in run.results if rule_ran_again(r) is not None]
    again = [r for r in effect if (rule_ran_again(r) or (False, ""))[0]]
    if effect:
        facts.append(Fact(f"with {profile}, the recovery called the approved call again in {len(again)}/{len(effect)} "
                          "items killed right after its side effect (the airline's tools de-duplicate by the call id "
                          "the adapter hands them; a tool without an idempotency key pays twice each time)"
                          + (f": {ids(again)}" if again else ""), run, (again or effect)[0].item_id))
    naive = [r for r in run.results if rule_paid_once_no_key(r) is not None]
    twice = [r for r in naive if not (rule_paid_once_no_key(r) or (True, ""))[0]]
    if naive:
        facts.append(Fact(f"with {profile}, against a tool without an idempotency key, the recovery paid exactly once "
                          f"in {len(naive) - len(twice)}/{len(naive)} items killed right after the payment"
                          + (f"; not in {ids(twice)} ({(rule_paid_once_no_key(twice[0]) or (False, ''))[1]})"
                             if twice else ""), run, (twice or naive)[0].item_id))
    return facts + other_failures(run.results, profile, run)


FACTS = {"careful": crash_facts}
