"""The verdict record: every run × item × check of a matrix with its verdict and its one-line reason.

It is the part of a matrix's results that goes into git (`reports/verdicts/<arena>.json`, one file per arena
and scope), so its diff is the review of a result change: one line per check, ordered by the report's order,
and nothing that changes from one run of the same code to the next (no time, no run directory name, no process
id, port or scratch path: `stable` takes those out of the reasons). The run directories it was made from are
evidence, kept as an archive (arena/report/archive.py), not in git.

`compare` reads two records (the committed one, one made from a fresh run) and names every cell and item that
differs; CI fails on any.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from arena.errors import InvalidValue
from arena.report.matrix import Run, adapter_order, run_order

FORMAT = 1
REASON_LIMIT = 200  # characters of a reason kept: one line a reviewer reads, not the trace
Record = dict[str, Any]  # one arena's file, as JSON

# What a reason or an error may carry that differs between two runs of the same code on the same machine. Each
# pattern was found by comparing two full matrices check by check; a number that means something (a count, an
# amount, a call index) is never among them.
_UNSTABLE: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"/tmp/[^\s'\"),;:]+"), "<tmp>"),
    (re.compile(r"\b\d{8}-\d{6}-[\w.@-]+-[0-9a-f]{4}\b"), "<run>"),  # a run directory's name
    (re.compile(r"\b(?:127\.0\.0\.1|localhost):\d+"), "<loopback>"),
    (re.compile(r"\b(process|pid|resumed in) \d+\b"), r"\1 <pid>"),
    (re.compile(r"\b0x[0-9a-f]{6,}\b"), "<addr>"),
    (re.compile(r"\b\d+(?:\.\d+)?\s?(?:ms|s)\b"), "<time>"),
    (re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b"), "<uuid>"),  # a framework's run id
    (re.compile(r"(?<![\w-])[0-9a-f]{12,}(?![\w-])"), "<id>"),  # a run-made hex id (a call id keeps its `call_` prefix)
)
# A Python set or frozenset printed in an error ({'b', 'a'}): its order is the interpreter's hash seed's
_SET = re.compile(r"\{('[^'{}]*'(?:, '[^'{}]*')+)\}")


def stable(text: str) -> str:
    """A reason as the record keeps it: one line, its run-made parts replaced, clipped."""
    line = " ".join(text.split())
    line = _SET.sub(lambda m: "{" + ", ".join(sorted(m.group(1).split(", "))) + "}", line)
    for pattern, replacement in _UNSTABLE:
        line = pattern.sub(replacement, line)
    return line if len(line) <= REASON_LIMIT else line[: REASON_LIMIT - 1] + "…"


def file_name(arena: str) -> str:
    """`durable_state@postgres` → `durable_state@postgres.json`; a name read from a damaged or foreign meta.json
    keeps to the characters a file name may have, never a path and never hidden."""
    safe = re.sub(r"[^A-Za-z0-9_.@-]", "_", arena) or "_unnamed"
    return f"_{safe}.json" if safe.startswith(".") else f"{safe}.json"


def run_record(run: Run) -> dict[str, Any]:
    """One run: what ran it, its status, and per item its status, error and checks (name → "pass: why" /
    "FAIL: why"), items in id order, checks in the order the arena made them."""
    items: dict[str, Any] = {}
    for result in sorted(run.results, key=lambda r: r.item_id):
        checks: dict[str, str] = {}
        for check in result.checks:
            name, n = check.name, 2
            while name in checks:  # a check made twice for one item keeps both, told apart by their order
                name, n = f"{check.name} #{n}", n + 1
            checks[name] = f"{'pass' if check.passed else 'FAIL'}: {stable(check.reason)}"
        entry: dict[str, Any] = {"status": result.status}
        if result.error:
            entry["error"] = stable(result.error)
        entry["checks"] = checks
        items[result.item_id] = entry
    version = run.meta.get("framework_version")
    out: dict[str, Any] = {
        "framework": f"{run.meta.get('framework') or '?'} {version}" if version else str(run.meta.get("framework") or "?"),
        "status": run.status,
    }
    unmeasured = run.meta.get("not_measured") or {}
    if unmeasured:
        out["not_measured"] = {str(k): stable(str(v)) for k, v in sorted(unmeasured.items())}
    out["items"] = items
    return out


def records(runs: Iterable[Run]) -> dict[str, Record]:
    """Per arena (with its scope: `durable_state@postgres`), its record: runs keyed "<adapter> × <model>" in the
    report's order (adapters as the matrix lists them, profiles in the arena's order)."""
    by_arena: dict[str, list[Run]] = {}
    for run in runs:
        by_arena.setdefault(run.arena, []).append(run)
    out: dict[str, Record] = {}
    for arena in sorted(by_arena, key=lambda a: run_order((a, ""))):
        mine = sorted(by_arena[arena], key=lambda r: (adapter_order(r.adapter), run_order((r.arena, r.model))))
        out[arena] = {"format": FORMAT, "arena": arena,
                      "runs": {f"{r.adapter} × {r.model}": run_record(r) for r in mine}}
    return out


def dumps(record: Record) -> str:
    """JSON with one check per line (indent 1), keys in insertion order, UTF-8 as is."""
    return json.dumps(record, indent=1, ensure_ascii=False) + "\n"


def write_verdicts(runs: Iterable[Run], folder: Path) -> list[Path]:
    """Write every arena's record into `folder` and remove the records of arenas this matrix does not have (the
    folder describes one matrix, as matrix.md does); return the files written."""
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for arena, record in records(runs).items():
        path = folder / file_name(arena)
        text = dumps(record)
        if not path.is_file() or path.read_text() != text:  # an unchanged record keeps its file (and mtime)
            tmp = path.with_name(f".{path.name}.tmp")
            tmp.write_text(text)
            tmp.replace(path)
        written.append(path)
    for stale in folder.glob("*.json"):
        if stale not in written:
            stale.unlink()
    return written


def read_verdicts(folder: Path) -> dict[str, Record]:
    """The records in a folder, by arena."""
    out: dict[str, Record] = {}
    for path in sorted(folder.glob("*.json")):
        try:
            record = json.loads(path.read_text())
        except ValueError as exc:  # not UTF-8, not JSON
            raise InvalidValue(f"{path}: not a verdict record of format {FORMAT} ({exc})") from None
        if not isinstance(record, dict) or record.get("format") != FORMAT:
            raise InvalidValue(f"{path}: not a verdict record of format {FORMAT}")
        out[str(record["arena"])] = record
    return out


def compare(committed: dict[str, Record], fresh: dict[str, Record], reasons: bool = False) -> list[str]:
    """Every difference, one line each, naming the cell (arena × adapter × profile), the item and the check;
    empty when the two records agree on every run's status and framework, every item's status, and every check's
    verdict. With `reasons`, a verdict given for other words counts too (a review reads those; CI does not fail on
    them: the order two concurrent calls ran in, which a reason may name, is not a result)."""
    out: list[str] = []
    for arena in sorted(set(committed) | set(fresh), key=lambda a: run_order((a, ""))):
        old_runs, new_runs = (committed.get(arena) or {}).get("runs", {}), (fresh.get(arena) or {}).get("runs", {})
        for run in list(old_runs) + [r for r in new_runs if r not in old_runs]:
            cell = f"{arena} × {run}"
            if run not in new_runs:
                out.append(f"{cell}: in the record, not in the fresh run")
                continue
            if run not in old_runs:
                out.append(f"{cell}: in the fresh run, not in the record")
                continue
            old, new = old_runs[run], new_runs[run]
            for key in ("framework", "status", "not_measured"):
                if old.get(key) != new.get(key) and (reasons or key != "not_measured" or
                                                     set(old.get(key) or {}) != set(new.get(key) or {})):
                    out.append(f"{cell}: {key} {old.get(key)!r} → {new.get(key)!r}")
            out += _compare_items(cell, old.get("items", {}), new.get("items", {}), reasons)
    return out


def _verdict(entry: str | None) -> str | None:
    return None if entry is None else entry.split(":", 1)[0]


def _compare_items(cell: str, old: dict[str, Any], new: dict[str, Any], reasons: bool) -> list[str]:
    out = []
    for item in list(old) + [i for i in new if i not in old]:
        if item not in new or item not in old:
            out.append(f"{cell}: {item}: {'missing from the fresh run' if item not in new else 'new in the fresh run'}")
            continue
        a, b = old[item], new[item]
        if a.get("status") != b.get("status"):
            out.append(f"{cell}: {item}: {a.get('status')} → {b.get('status')}")
        if reasons and a.get("error") != b.get("error"):
            out.append(f"{cell}: {item}: error {a.get('error')!r} → {b.get('error')!r}")
        checks_a, checks_b = a.get("checks", {}), b.get("checks", {})
        for name in list(checks_a) + [n for n in checks_b if n not in checks_a]:
            before, after = checks_a.get(name), checks_b.get(name)
            if (before != after) if reasons else (_verdict(before) != _verdict(after)):
                out.append(f"{cell}: {item}: {name}: {before or '(absent)'} → {after or '(absent)'}")
    return out
