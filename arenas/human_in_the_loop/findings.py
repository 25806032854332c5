"""The findings human_in_the_loop states, per profile: the pause, the decision, and the sibling call.

Counted from the traces with the core's fact vocabulary (`arena.report.facts`); each fact points at
one trace that shows it.
"""

from __future__ import annotations

from arena.for_arenas.trace import decision_in
from arena.for_arenas.report import (
    Fact,
    Row,
    Run,
    check_of,
    clip,
    declared,
    final_text,
    ids,
    injected,
    md_quote,
    model_input_after,
    names,
    of,
    other_failures,
    suspended_events,
    tool_counts,
    tools_of,
    writes_before_pause,
)
from arena.for_arenas import DecisionKind, ItemResult


def _carried(results: list[ItemResult], kind: DecisionKind) -> tuple[list[ItemResult], list[ItemResult]]:
    """Items with an injected decision of this kind that has text: (the model's input after the resume
    contains it, lacks it)."""
    carried, lost = [], []
    for r in results:
        pairs = [(d, m) for d, m in model_input_after(r) if d.kind is kind and d.text.strip()]
        if pairs:
            ok = all(m is not None and decision_in(m, d)[1] for d, m in pairs)
            (carried if ok else lost).append(r)
    return carried, lost


# Checks whose failures scripted_facts/eager_facts state in their own words; others are listed as they are.
_DESCRIBED = {"suspended", "no_tool_before_suspend", "tool_called_once_after_resume", "acknowledged", "tool_not_used"}


def scripted_facts(row: Row, run: Run) -> list[Fact]:
    approval, writes = tools_of(run.arena)
    results, n = run.results, len(run.results)
    profile = f"`{run.model}`"
    facts: list[Fact] = []

    paused_ok = of(results, lambda r: bool(check_of(r, "suspended") and check_of(r, "suspended").passed))
    never = of(results, lambda r: not suspended_events(r))
    if n and len(paused_ok) == n:
        # the first item whose trace shows the pause (a damaged run directory may have lost a trace)
        tool = next((e.tool for r in results for e in suspended_events(r)), None)
        facts.append(Fact(f"with {profile}, the harness observed the run suspended on `{tool}` before any "
                          f"consequential call in {n}/{n} items", run, results[0].item_id))
    else:
        if never:
            finished = of(never, lambda r: r.legs == 1 and final_text(r) is not None)
            facts.append(Fact(f"with {profile}, no suspended state was observed in {len(never)}/{n} items"
                              + (f" ({len(finished)} ran to a final answer in one leg)" if finished else "")
                              + f"; tools executed: {tool_counts(never)}", run, never[0].item_id))
            if finished:
                text = " ".join((final_text(finished[0]) or "").split())
                facts.append(Fact(f"with {profile}, first such final answer ({finished[0].item_id}): "
                                  f"“{md_quote(clip(text))}”", run, finished[0].item_id))
        other = of(results, lambda r: r not in never and r not in paused_ok and check_of(r, "suspended") is not None)
        if other:
            reason = check_of(other[0], "suspended").reason
            facts.append(Fact(f"with {profile}, the run suspended but the `suspended` check failed in "
                              f"{len(other)}/{n} items: {md_quote(reason)}", run, other[0].item_id))

    if approval:
        executed = of(results, lambda r: any(e.type == "tool_call" and e.tool in approval for e in r.trace))
        if executed:
            facts.append(Fact(f"with {profile}, {names(approval)} was executed as an ordinary tool instead of being "
                              f"intercepted in {len(executed)}/{n} items", run, executed[0].item_id))
    if writes:
        early = of(results, lambda r: bool(writes_before_pause(r, writes)))
        if early:
            facts.append(Fact(f"with {profile}, {names(writes)} executed before any pause in {len(early)}/{n} items: "
                              f"{ids(early)}", run, early[0].item_id))

    errored = of(results, lambda r: r.status == "errored")
    if errored:
        facts.append(Fact(f"with {profile}, {len(errored)}/{n} items errored; first: {md_quote(errored[0].error or '')}",
                          run, errored[0].item_id))

    denied = of(results, lambda r: any(d.kind is DecisionKind.deny for d in injected(r)))
    if not denied:
        if n:
            facts.append(Fact(f"with {profile}, no denial was ever injected (the run never resumed with one), so "
                              "whether a denial reaches the model is not measured", run, results[0].item_id))
    else:
        acked = of(denied, lambda r: bool(check_of(r, "acknowledged") and check_of(r, "acknowledged").passed))
        unacked = [r for r in denied if r not in acked and check_of(r, "acknowledged") is not None]
        if unacked:
            facts.append(Fact(f"with {profile}, the model's last answer does not acknowledge the denial in "
                              f"{len(unacked)}/{len(denied)} denied items: {ids(unacked)}", run, unacked[0].item_id))
        elif acked:
            facts.append(Fact(f"with {profile}, the model's last answer acknowledges the denial in "
                              f"{len(acked)}/{len(denied)} denied items", run, acked[0].item_id))

    for kind, what, capability in ((DecisionKind.deny, "deny reason", "deny_reason"),
                                   (DecisionKind.approve, "approve note", "approve_note")):
        carried, lost = _carried(results, kind)
        total = len(carried) + len(lost)
        label = "denied" if kind is DecisionKind.deny else "approved"
        if lost:
            facts.append(Fact(f"{what} not carried: with {profile}, the model's input after the resume lacks the "
                              f"human's text in {len(lost)}/{total} {label} items that had one"
                              f"{declared(row, capability)}", run, lost[0].item_id))
        elif carried:
            facts.append(Fact(f"{what} carried: with {profile}, the model's input after the resume contains the "
                              f"human's text in {len(carried)}/{total} {label} items that had one"
                              f"{declared(row, capability)}", run, carried[0].item_id))

    approved = of(results, lambda r: any(d.kind is DecisionKind.approve for d in injected(r)))
    wrong = of(approved, lambda r: bool(check_of(r, "tool_called_once_after_resume"))
                and not check_of(r, "tool_called_once_after_resume").passed)
    if wrong:
        reason = check_of(wrong[0], "tool_called_once_after_resume").reason
        facts.append(Fact(f"with {profile}, the approved action did not execute exactly once after the resume in "
                          f"{len(wrong)}/{len(approved)} approved items: {md_quote(reason)}", run, wrong[0].item_id))
    return facts + other_failures(results, profile, run, _DESCRIBED)


def _listed_first(r: ItemResult, writes: list[str], approval: list[str]) -> bool | None:
    """Whether the model's turn that asked for approval listed a consequential call before it (None: no such turn)."""
    for e in r.trace:
        if e.type == "model_call" and not e.late:
            names = [c.get("name") for c in (e.response or {}).get("tool_calls") or []]
            asked = [i for i, name in enumerate(names) if name in approval]
            wrote = [i for i, name in enumerate(names) if name in writes]
            if asked and wrote:
                return wrote[0] < asked[0]
    return None


def _order_note(items: list[ItemResult], writes: list[str], approval: list[str]) -> str:
    firsts = [_listed_first(r, writes, approval) for r in items]
    known = [f for f in firsts if f is not None]
    if not known:
        return ""
    return f"; the model listed it before the approval call in {sum(known)}/{len(known)} of them"


def eager_facts(row: Row, run: Run) -> list[Fact]:
    """What a model that emits the approval request and the consequential call in one turn reveals."""
    approval, writes = tools_of(run.arena)
    results, n = run.results, len(run.results)
    profile = f"`{run.model}`"
    facts: list[Fact] = []
    paused = of(results, lambda r: bool(suspended_events(r)))
    early = of(results, lambda r: bool(writes_before_pause(r, writes))) if writes else []
    if early:
        with_pause = [r for r in early if r in paused]
        facts.append(Fact(f"with {profile}, the sibling {names(writes)} call executed before the pause in "
                          f"{len(early)}/{n} items" + (f" ({len(early) - len(with_pause)} never paused)"
                                                        if len(with_pause) != len(early) else "")
                          + _order_note(early, writes, approval),
                          run, early[0].item_id))
    held = [r for r in paused if r not in early]
    if held:
        facts.append(Fact(f"with {profile}, the sibling {names(writes)} call was held until the decision in "
                          f"{len(held)}/{n} items" + _order_note(held, writes, approval), run, held[0].item_id))
    denied_held = [r for r in held if any(d.kind is DecisionKind.deny for d in injected(r))]
    leaked = of(denied_held, lambda r: bool(check_of(r, "tool_not_used")) and not check_of(r, "tool_not_used").passed)
    if leaked:
        facts.append(Fact(f"with {profile}, the held {names(writes)} call executed anyway after the human denied it "
                          f"in {len(leaked)}/{len(denied_held)} denied items: {ids(leaked)}", run, leaked[0].item_id))
    elif denied_held:
        facts.append(Fact(f"with {profile}, the held {names(writes)} call was dropped on denial in "
                          f"{len(denied_held)}/{len(denied_held)} denied items", run, denied_held[0].item_id))
    missing = [r for r in results if r not in paused]
    if missing and not early:
        facts.append(Fact(f"with {profile}, no suspended state was observed in {len(missing)}/{n} items",
                          run, missing[0].item_id))
    errored = of(results, lambda r: r.status == "errored")
    if errored:
        facts.append(Fact(f"with {profile}, {len(errored)}/{n} items errored; first: {md_quote(errored[0].error or '')}",
                          run, errored[0].item_id))
    return facts + other_failures(results, profile, run, _DESCRIBED)


FACTS = {"scripted": scripted_facts, "scripted-eager": eager_facts}
