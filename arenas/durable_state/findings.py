"""The findings durable_state states beside the pass counts: on a server store, which store and what the restart
during the pause did; across an upgrade, which releases, and how each failing item failed (the state unreadable by
the new release, the pause lost, or the decision misapplied)."""

from __future__ import annotations

from arena.for_arenas.report import Fact, Row, Run, check_of, generic_facts, ids, md_text
from arena.for_arenas import ItemResult

DECISION_CHECKS = ("decision_reached_model", "tool_called_once_after_resume", "args_as_requested",
                   "denied_not_executed", "tool_not_used", "acknowledged")


def how_it_failed(r: ItemResult) -> str:
    """An item that did not survive, in the upgrade's terms (read from its checks and trace)."""
    resumed = [e for e in r.trace if e.type == "resumed" and not e.late]
    if resumed and any(e.type == "error" and e.seq > resumed[0].seq for e in r.trace):
        return "state unreadable"
    lost = check_of(r, "state_survived")
    if lost is not None and not lost.passed:
        return "pause lost"
    if any((c := check_of(r, name)) is not None and not c.passed for name in DECISION_CHECKS):
        return "decision misapplied"
    return "failed"


def durable_facts(row: Row, run: Run) -> list[Fact]:
    facts = generic_facts(row, run)
    results = run.results
    failed = [r for r in results if r.status != "passed"]
    upgrade = run.meta.get("upgrade")
    if upgrade:
        kinds: dict[str, list[ItemResult]] = {}
        for r in failed:
            kinds.setdefault(how_it_failed(r), []).append(r)
        how = "; ".join(f"{kind}: {ids(rs)}" for kind, rs in kinds.items())
        facts.append(Fact(
            f"paused under `{md_text(upgrade['from'])}` ({md_text(str(upgrade['from_version']))}), resumed under "
            f"`{md_text(upgrade['to'])}` ({md_text(str(upgrade['to_version']))}): "
            f"{len(results) - len(failed)}/{len(results)} items survived the upgrade" + (f" ({how})" if how else ""),
            run, (failed or results)[0].item_id if results else None))
    store = run.meta.get("store")
    if store:
        restarted = [r for r in results if any(e.type == "store" for e in r.trace)]
        if restarted:
            r = restarted[0]
            outcome = "passed" if r.status == "passed" else f"did not pass ({how_it_failed(r)})"
            facts.append(Fact(f"on {md_text(str(store.get('version')))}, {md_text(r.item_id)} had its server stopped "
                              f"and restarted during the pause, and {outcome}", run, r.item_id))
    return facts


FACTS = {"scripted": durable_facts}
