"""findings.md: what was run, versions, the model, and per-framework coverage, stated from observed facts.

Every sentence below the summary is generated from counts over the traces, and each points at one
trace that shows it. The tables are the ones in matrix.md, byte for byte (`render_md`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from arena.report.matrix import (
    COLUMNS, HITL, Matrix, Row, Run, check_of, declared_profiles, final_text, injected, model_input_after,
    suspended_events,
)
from arena.observed import decision_in
from arena.report.render_md import adapters_table, legend, matrix_table, md_link, md_quote, md_text
from arena.results import ItemResult
from arena.types import DecisionKind

DEFAULT_COMMAND = "arena matrix --out reports --findings findings.md"


@dataclass
class Fact:
    text: str
    run: Run | None = None
    item: str | None = None  # the item whose trace shows it

    def render(self, doc_dir: Path | None) -> str:
        if self.run is None or self.item is None:
            return f"- {self.text}"
        trace = self.run.trace_path(self.item)
        shown = f"{self.run.path.name}/traces/{self.item}.jsonl"
        return f"- {self.text} (evidence: {md_link(shown, trace, doc_dir)})"


def _tools(arena: str) -> tuple[list[str], list[str]]:
    """(approval tools, consequential tools) of an arena, from its spec; empty if it cannot be loaded."""
    import arenas
    from arena.types import ToolKind

    try:
        spec = arenas.load(arena)
    except (KeyError, ImportError):
        return [], []
    return spec.tools_of(ToolKind.approval), spec.tools_of(ToolKind.write)


def _names(tools: list[str]) -> str:
    return "/".join(f"`{t}`" for t in tools) or "a consequential tool"


def _of(results: list[ItemResult], pred) -> list[ItemResult]:
    return [r for r in results if pred(r)]


def _ids(results: list[ItemResult]) -> str:
    return ", ".join(r.item_id for r in results)


def _tool_counts(results: list[ItemResult]) -> str:
    counts: dict[str, int] = {}
    for r in results:
        for e in r.trace:
            if e.type == "tool_call":
                counts[str(e.tool)] = counts.get(str(e.tool), 0) + 1
    return ", ".join(f"`{md_text(t)}` ×{c}" for t, c in counts.items()) or "none"


def _clip(text: str, limit: int = 100) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _first_pause_seq(r: ItemResult) -> int | None:
    pauses = suspended_events(r)
    return pauses[0].seq if pauses else None


def _writes_before_pause(r: ItemResult, writes: list[str]) -> list:
    """Consequential tool calls that executed before the first suspension (or at all, if it never paused)."""
    pause = _first_pause_seq(r)
    return [e for e in r.trace if e.type == "tool_call" and e.tool in writes and (pause is None or e.seq < pause)]


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


def _other_failures(results: list[ItemResult], profile: str, run: Run) -> list[Fact]:
    facts = []
    names = dict.fromkeys(c.name for r in results for c in r.checks if c.name not in _DESCRIBED)
    for name in names:
        failed = [r for r in results if (c := check_of(r, name)) is not None and not c.passed]
        if failed:
            total = sum(check_of(r, name) is not None for r in results)
            facts.append(Fact(f"with {profile}, `{name}` failed in {len(failed)}/{total} items: "
                              f"{md_quote(_clip(check_of(failed[0], name).reason, 160))}", run, failed[0].item_id))
    return facts


def _declared(row: Row, capability: str) -> str:
    caps = row.capabilities
    if capability not in caps:
        return ""
    return f" (declared {capability}={'true' if caps[capability] else 'false'})"


def declared_line(row: Row) -> str:
    """What the adapter says about itself (meta.json), kept apart from what was observed."""
    caps = row.capabilities
    flags = ", ".join(f"{k}={'true' if v else 'false'}" for k, v in caps.items() if isinstance(v, bool))
    notes = md_text(caps.get("notes") or "").rstrip(".")
    notes = f" {notes}." if notes else ""
    other: dict[tuple[str, str, str], list[str]] = {}
    for run in row.runs:
        kind, mechanism = str(run.meta.get("pause_kind")), str(run.meta.get("pause_mechanism"))
        if (kind, mechanism) != (row.pause_kind, row.mechanism):
            other.setdefault((run.arena, kind, mechanism), []).append(run.model)
    extra = "".join(f" In {md_text(arena)} ({', '.join(f'`{md_text(p)}`' for p in models)}): declared "
                    f"{md_text(kind)} ({md_text(mechanism)})." for (arena, kind, mechanism), models in other.items())
    return (f"Declared (meta.json, not evidence): pause kind {md_text(row.pause_kind)}; capabilities "
            f"{flags or 'not given'}.{notes}{extra}\n")


def scripted_facts(row: Row, run: Run) -> list[Fact]:
    approval, writes = _tools(run.arena)
    results, n = run.results, len(run.results)
    profile = f"`{run.model}`"
    facts: list[Fact] = []

    paused_ok = _of(results, lambda r: bool(check_of(r, "suspended") and check_of(r, "suspended").passed))
    never = _of(results, lambda r: not suspended_events(r))
    if n and len(paused_ok) == n:
        tool = suspended_events(results[0])[0].tool
        facts.append(Fact(f"with {profile}, the harness observed the run suspended on `{tool}` before any "
                          f"consequential call in {n}/{n} items", run, results[0].item_id))
    else:
        if never:
            finished = _of(never, lambda r: r.legs == 1 and final_text(r) is not None)
            facts.append(Fact(f"with {profile}, no suspended state was observed in {len(never)}/{n} items"
                              + (f" ({len(finished)} ran to a final answer in one leg)" if finished else "")
                              + f"; tools executed: {_tool_counts(never)}", run, never[0].item_id))
            if finished:
                text = " ".join((final_text(finished[0]) or "").split())
                facts.append(Fact(f"with {profile}, first such final answer ({finished[0].item_id}): "
                                  f"“{md_quote(_clip(text))}”", run, finished[0].item_id))
        other = _of(results, lambda r: r not in never and r not in paused_ok and check_of(r, "suspended") is not None)
        if other:
            reason = check_of(other[0], "suspended").reason
            facts.append(Fact(f"with {profile}, the run suspended but the `suspended` check failed in "
                              f"{len(other)}/{n} items: {md_quote(reason)}", run, other[0].item_id))

    if approval:
        executed = _of(results, lambda r: any(e.type == "tool_call" and e.tool in approval for e in r.trace))
        if executed:
            facts.append(Fact(f"with {profile}, {_names(approval)} was executed as an ordinary tool instead of being "
                              f"intercepted in {len(executed)}/{n} items", run, executed[0].item_id))
    if writes:
        early = _of(results, lambda r: bool(_writes_before_pause(r, writes)))
        if early:
            facts.append(Fact(f"with {profile}, {_names(writes)} executed before any pause in {len(early)}/{n} items: "
                              f"{_ids(early)}", run, early[0].item_id))

    errored = _of(results, lambda r: r.status == "errored")
    if errored:
        facts.append(Fact(f"with {profile}, {len(errored)}/{n} items errored; first: {md_quote(errored[0].error or '')}",
                          run, errored[0].item_id))

    denied = _of(results, lambda r: any(d.kind is DecisionKind.deny for d in injected(r)))
    if not denied:
        if n:
            facts.append(Fact(f"with {profile}, no denial was ever injected (the run never resumed with one), so "
                              "whether a denial reaches the model is not measured", run, results[0].item_id))
    else:
        acked = _of(denied, lambda r: bool(check_of(r, "acknowledged") and check_of(r, "acknowledged").passed))
        unacked = [r for r in denied if r not in acked and check_of(r, "acknowledged") is not None]
        if unacked:
            facts.append(Fact(f"with {profile}, the model's last answer does not acknowledge the denial in "
                              f"{len(unacked)}/{len(denied)} denied items: {_ids(unacked)}", run, unacked[0].item_id))
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
                              f"{_declared(row, capability)}", run, lost[0].item_id))
        elif carried:
            facts.append(Fact(f"{what} carried: with {profile}, the model's input after the resume contains the "
                              f"human's text in {len(carried)}/{total} {label} items that had one"
                              f"{_declared(row, capability)}", run, carried[0].item_id))

    approved = _of(results, lambda r: any(d.kind is DecisionKind.approve for d in injected(r)))
    wrong = _of(approved, lambda r: bool(check_of(r, "tool_called_once_after_resume"))
                and not check_of(r, "tool_called_once_after_resume").passed)
    if wrong:
        reason = check_of(wrong[0], "tool_called_once_after_resume").reason
        facts.append(Fact(f"with {profile}, the approved action did not execute exactly once after the resume in "
                          f"{len(wrong)}/{len(approved)} approved items: {md_quote(reason)}", run, wrong[0].item_id))
    return facts + _other_failures(results, profile, run)


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
    approval, writes = _tools(run.arena)
    results, n = run.results, len(run.results)
    profile = f"`{run.model}`"
    facts: list[Fact] = []
    paused = _of(results, lambda r: bool(suspended_events(r)))
    early = _of(results, lambda r: bool(_writes_before_pause(r, writes))) if writes else []
    if early:
        with_pause = [r for r in early if r in paused]
        facts.append(Fact(f"with {profile}, the sibling {_names(writes)} call executed before the pause in "
                          f"{len(early)}/{n} items" + (f" ({len(early) - len(with_pause)} never paused)"
                                                        if len(with_pause) != len(early) else "")
                          + _order_note(early, writes, approval),
                          run, early[0].item_id))
    held = [r for r in paused if r not in early]
    if held:
        facts.append(Fact(f"with {profile}, the sibling {_names(writes)} call was held until the decision in "
                          f"{len(held)}/{n} items" + _order_note(held, writes, approval), run, held[0].item_id))
    denied_held = [r for r in held if any(d.kind is DecisionKind.deny for d in injected(r))]
    leaked = _of(denied_held, lambda r: bool(check_of(r, "tool_not_used")) and not check_of(r, "tool_not_used").passed)
    if leaked:
        facts.append(Fact(f"with {profile}, the held {_names(writes)} call executed anyway after the human denied it "
                          f"in {len(leaked)}/{len(denied_held)} denied items: {_ids(leaked)}", run, leaked[0].item_id))
    elif denied_held:
        facts.append(Fact(f"with {profile}, the held {_names(writes)} call was dropped on denial in "
                          f"{len(denied_held)}/{len(denied_held)} denied items", run, denied_held[0].item_id))
    missing = [r for r in results if r not in paused]
    if missing and not early:
        facts.append(Fact(f"with {profile}, no suspended state was observed in {len(missing)}/{n} items",
                          run, missing[0].item_id))
    errored = _of(results, lambda r: r.status == "errored")
    if errored:
        facts.append(Fact(f"with {profile}, {len(errored)}/{n} items errored; first: {md_quote(errored[0].error or '')}",
                          run, errored[0].item_id))
    return facts + _other_failures(results, profile, run)


def generic_facts(row: Row, run: Run) -> list[Fact]:
    results, n = run.results, len(run.results)
    passed = _of(results, lambda r: r.status == "passed")
    facts = [Fact(f"{run.arena} × `{run.model}`: {len(passed)}/{n} items passed",
                  run, (passed or results)[0].item_id if results else None)]
    failed = [r for r in results if r.status != "passed"]
    if failed:
        first = failed[0]
        why = first.error or "; ".join(f"{c.name}: {c.reason}" for c in first.checks if not c.passed)
        facts.append(Fact(f"{run.arena} × `{run.model}`: not passed: {_ids(failed)}; first ({first.item_id}): "
                          f"{md_quote(_clip(why, 200))}",
                          run, first.item_id))
    return facts


def adapter_facts(row: Row) -> list[Fact]:
    facts: list[Fact] = []
    for run in row.runs:
        if run.arena == HITL and run.model == "scripted":
            facts += scripted_facts(row, run)
        elif run.arena == HITL and run.model == "scripted-eager":
            facts += eager_facts(row, run)
        else:
            facts += generic_facts(row, run)
    return facts


def _evidence_of(row: Row, key: str, ok: bool, doc_dir: Path | None) -> str:
    ev = next((e for e in row.cells[key].evidence if e.ok == ok), None)
    if ev is None:
        return ""
    return f" (evidence: {md_link(f'{Path(ev.run).name}/traces/{ev.item}.jsonl', ev.trace, doc_dir)})"


def coverage_summary(m: Matrix, doc_dir: Path | None = None) -> str:
    enforced = [r for r in m.rows if r.cells["measured_kind"].text == "enforced"]
    runs = [r for r in m.rows if r.cells["measured_kind"].status != "notrun"]
    lines = []
    if runs:
        totals = {r.cells["pause_enforced"].text for r in enforced}
        mechanisms = {r.mechanism for r in enforced}
        lines.append(f"{len(enforced)} of {len(runs)} adapters pause {', '.join(sorted(totals)) or 'in every item'} "
                     f"on {HITL} × `scripted`"
                     + (f", by {len(mechanisms)} different mechanism{'s' if len(mechanisms) != 1 else ''}:" if enforced else "."))
        lines += [f"- `{md_text(r.adapter)}` ({md_text(r.pause_kind)}): {md_text(r.mechanism)}"
                  f"{_evidence_of(r, 'pause_enforced', True, doc_dir)}" for r in enforced]
        others = [r for r in runs if r not in enforced]
        if others:
            lines.append("")
            lines.append("Not enforced:")
            lines += [f"- `{md_text(r.adapter)}` (declared {md_text(r.pause_kind)}, measured "
                      f"{r.cells['measured_kind'].text}, pause enforced {r.cells['pause_enforced'].text}): "
                      f"{md_text(r.mechanism)}{_evidence_of(r, 'pause_enforced', False, doc_dir)}" for r in others]
    return "\n".join(lines) + "\n"


def _not_run(m: Matrix) -> list[str]:
    import arenas
    from arena.model import PROFILES

    ran = {(r.arena, r.model) for r in m.runs}
    out = []
    for arena in dict.fromkeys(c.arena for c in COLUMNS):
        profiles = declared_profiles(arena, arenas.load(arena) if arena in arenas.names() else None)
        missing = [p for p in profiles if (arena, p) not in ran]
        if not missing:
            continue
        if arena not in arenas.names():
            why = "the arena does not exist yet"
        elif [p for p in missing if p not in PROFILES]:
            why = "profile(s) not in the scripted model: " + ", ".join(p for p in missing if p not in PROFILES)
        else:
            why = "not in these run directories"
        out.append(f"- not run: {arena} × {', '.join(missing)} ({why})")
    return out


def profile_descriptions() -> dict[str, str]:
    """The scripted model's profiles as documented in its module docstring ("- `name`: what it does")."""
    import re

    from arena.model import policy

    doc = policy.__doc__ or ""
    return {name: " ".join(text.split()).rstrip(";.") for name, text in
            re.findall(r"^- `([\w-]+)`: (.+?)(?=^- `|^\S|\Z)", doc, re.MULTILINE | re.DOTALL)}


def render_findings(m: Matrix, doc_dir: Path | None = None, command: str = DEFAULT_COMMAND) -> str:
    keys = m.run_keys
    arenas_run: dict[str, list[str]] = {}
    for arena, model in keys:
        arenas_run.setdefault(arena, []).append(model)
    what = []
    for arena, models in arenas_run.items():
        adapters = sorted({r.adapter for r in m.runs if r.arena == arena}, key=[row.adapter for row in m.rows].index)
        items = sorted({len(r.results) for r in m.runs if r.arena == arena})
        what.append(f"- {arena} ({'/'.join(map(str, items))} items) × {', '.join(f'`{p}`' for p in models)} on "
                    f"{len(adapters)} adapters: {', '.join(f'`{a}`' for a in adapters)}")
    what += _not_run(m)
    incomplete = [r for r in m.runs if not r.complete]
    if incomplete:
        what.append(f"- incomplete run directories (interrupted): {', '.join(r.path.name for r in incomplete)}")
    from arena.model import PROFILES

    endpoints = sorted({"loopback (scripted)" if r.model in PROFILES else str(r.meta.get("base_url", "?")) for r in m.runs})
    models = list(dict.fromkeys(model for _, model in keys))
    described = profile_descriptions()

    parts = [
        "# Findings\n",
        f"Generated; do not edit by hand. Regenerate (runs every arena × adapter × model profile, writes "
        f"the run directories, matrix.md/.html/.json and this file) with one command:\n\n"
        f"```bash\nuv run {command}\n```\n",
        "## 1. What was run\n",
        "\n".join(what) + "\n",
        f"{len(m.runs)} run directories; each claim below links to the trace that shows it.\n",
        "## 2. Versions\n",
        adapters_table(m),
        "## 3. Model\n",
        f"Model profiles: {', '.join(f'`{p}`' for p in models)}; endpoint: {', '.join(md_text(e) for e in endpoints)}. "
        "The scripted model (`arena/model/policy.py`) is a deterministic policy that decides only from the "
        "conversation it is sent; it echoes a deny reason or an approve note in its final answer when the "
        "framework passes it back. Whether a decision reached the model is not read from that echo but from "
        "what the harness's model gateway recorded the model being sent after the resume; the final answer "
        "is the model's own last answer as the gateway served it. Its profiles, as its docstring describes them:\n",
        "\n".join(f"- `{p}`: {described[p]}" for p in models if p in described) + "\n",
        "## 4. Adapter coverage\n",
        coverage_summary(m, doc_dir),
        matrix_table(m),
        legend(m),
    ]
    for row in m.rows:
        parts.append(f"### `{md_text(row.adapter)}` ({md_text(row.framework)} {md_text(row.version or '-')})\n")
        parts.append(declared_line(row))
        parts.append("\n".join(f.render(doc_dir) for f in adapter_facts(row)) + "\n")
    return "\n".join(parts)
