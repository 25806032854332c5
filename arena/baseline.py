"""A run against a baseline: what passed there and does not now is a regression (the CI gate, exit 4).

A baseline is a run directory, a folder of them (newest per arena, adapter and model), or the
matrix.json `arena matrix` writes. Items are matched by (arena, adapter, model, item id); an item run
for several epochs passes when every epoch passed. A matrix.json
also gives its cells: each is compared over the profiles and items both sides ran, so a run of one
profile, or of a few items, is compared with the same slice of the baseline. A known failure (failed
there, still failing) is not a regression; an improvement is reported, never a failure.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from arena.errors import InvalidValue, warn
from arena.report.matrix import DamagedRun, Run, collect_runs, compute_matrix, is_run_dir, load_run
from arena.results import ItemResult, Verdict

ItemKey = tuple[str, str, str, str]  # arena, adapter, model, item id
Slice = tuple[str, str]  # profile (model), item id: one item's evidence in a cell


@dataclass
class Baseline:
    source: Path
    items: dict[ItemKey, Verdict] = field(default_factory=dict)
    # (adapter, column key) -> each item's evidence: counts or not (matrix.json baselines only)
    cells: dict[tuple[str, str], dict[Slice, bool]] = field(default_factory=dict)
    # (arena, adapter, profile) -> the items the baseline ran: a cell is compared over these alone
    ran: dict[tuple[str, str, str], set[str]] = field(default_factory=dict)


@dataclass
class Comparison:
    baseline: Path
    regressions: list[str] = field(default_factory=list)
    improvements: list[str] = field(default_factory=list)
    known_failures: list[str] = field(default_factory=list)
    items: int = 0  # items compared
    cells: int = 0  # cells compared

    def report(self) -> list[str]:
        """What the CLI prints on stderr: one line per regression and improvement, then a verdict."""
        lines = [f"regression: {r}" for r in self.regressions] + [f"improved: {i}" for i in self.improvements]
        known = f"; {len(self.known_failures)} known failure(s) still failing" if self.known_failures else ""
        if self.regressions:
            lines.append(f"{len(self.regressions)} regression(s) against {self.baseline}{known}")
        elif self.items or self.cells:
            lines.append(f"no regressions against {self.baseline} ({self.items} item(s), {self.cells} cell(s) "
                         f"compared{known})")
        else:
            lines.append(f"no regressions against {self.baseline}: nothing in it matches this run "
                         "(arena, adapter, model, items), so nothing was compared")
        return lines


def _one_line(text: object, limit: int = 200) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


# ---------------------------------------------------------------------------------------------
# Loading


def load_baseline(path: Path, on_skip: Callable[[str], None] | None = None) -> Baseline:
    """A baseline from a matrix.json, a run directory or a folder of them; InvalidValue (a ValueError, one line) if it
    is none.
    `on_skip` hears each warning (a damaged run directory skipped, a torn line whose item is not measured)."""
    shown = repr(_one_line(path, 120))
    try:
        if path.is_file():
            return _from_matrix(path, on_skip)
        if not path.is_dir():
            raise InvalidValue(f"{shown} does not exist")
        if is_run_dir(path):
            try:
                return _from_runs(path, [load_run(path, on_skip or warn)])
            except DamagedRun as exc:
                raise InvalidValue(f"{shown} is a damaged run directory: {exc}") from None
        runs = collect_runs([path], on_skip)
        if runs:
            return _from_runs(path, runs)
        if (path / "matrix.json").is_file():
            return _from_matrix(path / "matrix.json", on_skip)
    except OSError as exc:
        raise InvalidValue(f"{shown} cannot be read: {exc.strerror or exc}") from None
    raise InvalidValue(f"{shown} holds no run directory (meta.json + results.jsonl) and no matrix.json")


def _from_runs(path: Path, runs: Sequence[Run]) -> Baseline:
    base = Baseline(source=path)
    for run in runs:
        _add_run(base, run)
    return base


def _by_item(run: Run) -> dict[str, list[ItemResult]]:
    """Each item's results: one, or one per epoch (`arena run --epochs`)."""
    out: dict[str, list[ItemResult]] = {}
    for r in [*run.results, *run.later]:
        out.setdefault(r.item_id, []).append(r)
    return out


def _verdict(results: list[ItemResult]) -> Verdict:
    """An item passes when every epoch of it passed; it failed when one was measured failing."""
    verdicts = {r.verdict for r in results}
    return "passed" if verdicts == {"passed"} else "failed" if "failed" in verdicts else "could_not_measure"


def _add_run(base: Baseline, run: Run) -> None:
    for item_id, results in _by_item(run).items():
        base.items[(*run.key, item_id)] = _verdict(results)
    base.ran.setdefault(run.key, set()).update(r.item_id for r in run.results)


def _from_matrix(path: Path, on_skip: Callable[[str], None] | None) -> Baseline:
    shown = repr(_one_line(path, 120))
    try:
        data = json.loads(path.read_text())
    except UnicodeDecodeError:
        raise InvalidValue(f"{shown} is not a matrix.json: not UTF-8 text") from None
    except ValueError as exc:
        raise InvalidValue(f"{shown} is not a matrix.json: not JSON ({_one_line(exc, 80)})") from None
    try:
        base = _parse_matrix(path, data)
    except (KeyError, TypeError, AttributeError, InvalidValue) as exc:
        why = f"no {exc}" if isinstance(exc, KeyError) else _one_line(exc, 80)
        raise InvalidValue(f"{shown} is not a matrix.json written by `arena matrix` ({why})") from None
    # its run directories, where they are still there, give the items' verdicts
    listed = data.get("runs")
    for entry in listed if isinstance(listed, list) else []:
        run_path = _find_run(path, str(entry.get("path") or "")) if isinstance(entry, dict) else None
        if run_path is not None:
            try:
                _add_run(base, load_run(run_path, on_skip or warn))
            except DamagedRun as exc:
                (on_skip or warn)(f"skipped a damaged run directory of the baseline: {exc}")
    return base


def _parse_matrix(path: Path, data: object) -> Baseline:
    if not isinstance(data, dict) or not isinstance(data.get("rows"), list) or not isinstance(data.get("columns"), list):
        raise InvalidValue("no list of rows and columns")
    arena_of = {str(c["key"]): str(c["arena"]) for c in data["columns"]}
    base = Baseline(source=path)
    for row in data["rows"]:
        adapter = str(row["adapter"])
        for key, cell in row["cells"].items():
            evidence = {(str(e.get("profile") or ""), str(e["item"])): bool(e["ok"]) for e in cell.get("evidence") or []}
            base.cells[(adapter, str(key))] = evidence
            for profile, item in evidence:
                base.ran.setdefault((arena_of.get(str(key), ""), adapter, profile), set()).add(item)
    return base


def _find_run(matrix: Path, recorded: str) -> Path | None:
    """A run directory named in a matrix.json: as written (relative to where `arena matrix` ran), or
    relative to the matrix's folder or the folder above it."""
    if not recorded:
        return None
    given = Path(recorded)
    places = [given] if given.is_absolute() else [given, matrix.parent / given, matrix.parent.parent / given]
    return next((p for p in places if is_run_dir(p)), None)


# ---------------------------------------------------------------------------------------------
# Comparing


def _why(results: list[ItemResult]) -> str:
    bad = next(r for r in results if r.verdict != "passed")
    failing = [f"{c.name}: {c.reason}" for c in bad.checks if not c.passed]
    epoch = f"epoch {bad.epoch}: " if len(results) > 1 else ""
    return _one_line(epoch + (failing[0] if failing else bad.error or bad.status), 160)


def baseline_name(baseline: Baseline, adapter: str) -> str:
    """The row a run is judged against: its own, else, for a framework from source (`name@path:...`,
    `name@git+...`), the released adapter's it would replace (a maintainer's branch against the release)."""
    from arena.run_id import AdapterLabel
    from arena.versions import is_source, is_versioned

    known = {key[1] for key in baseline.items} | {key[0] for key in baseline.cells}
    if adapter in known or not is_versioned(adapter) or not is_source(AdapterLabel.parse(adapter).release):
        return adapter
    return AdapterLabel.parse(adapter).name


def compare(baseline: Baseline, runs: Sequence[Run]) -> Comparison:
    """Regressions, improvements and known failures of these runs against the baseline."""
    out = Comparison(baseline=baseline.source)
    for run in runs:
        for item_id, results in _by_item(run).items():
            before = baseline.items.get((run.arena, baseline_name(baseline, run.adapter), run.model, item_id))
            if before is None:
                continue
            out.items += 1
            now = _verdict(results)
            where = f"{run.adapter} | {run.arena}/{run.model} | item {item_id}"
            if before == "passed" and now != "passed":
                out.regressions.append(f"{where}: passed -> {now} ({_why(results)})")
            elif before != "passed" and now == "passed":
                out.improvements.append(f"{where}: {before} -> passed")
            elif before != "passed":
                out.known_failures.append(f"{where}: {before} -> {now}")
    if baseline.cells and runs:
        _compare_cells(baseline, runs, out)
    return out


def _compare_cells(baseline: Baseline, runs: Sequence[Run], out: Comparison) -> None:
    """Each matrix cell the runs give, over the (profile, item) slices both they and the baseline ran."""
    ran_now = {run.key: {r.item_id for r in run.results} for run in runs}
    matrix = compute_matrix(list(runs))
    for row in matrix.rows:
        theirs = baseline_name(baseline, row.adapter)
        for column in matrix.columns:
            before_all = baseline.cells.get((theirs, column.key))
            if column.kind == "declared" or column.neutral or before_all is None:
                continue
            scope = {(p, i) for p in column.profiles for i in ran_now.get((column.arena, row.adapter, p), set())
                     & baseline.ran.get((column.arena, theirs, p), set())}
            before = {k: ok for k, ok in before_all.items() if k in scope}
            after = {(e.profile, e.item): e.ok for e in row.cells[column.key].evidence if (e.profile, e.item) in scope}
            if not before and not after:
                continue
            out.cells += 1

            def counts(ok: bool) -> bool:
                return ok != column.lower_is_better  # a fault count: an item counts when it is free of the fault

            lost = sorted(k for k, ok in before.items() if counts(ok) and not (k in after and counts(after[k])))
            gained = sorted(k for k, ok in after.items() if counts(ok) and not (k in before and counts(before[k])))
            profiles = sorted({p for p, _ in scope})
            where = f"{row.adapter} | {column.arena}/{'+'.join(profiles)} | cell {column.key} ({column.title})"
            change = f"{sum(before.values())}/{len(before)} -> {sum(after.values())}/{len(after)}"

            def named(keys: list[Slice]) -> str:
                return ", ".join(i if len(profiles) == 1 else f"{p}/{i}" for p, i in keys)

            if lost:
                out.regressions.append(f"{where}: {change} (no longer: {named(lost)})")
            elif gained:
                out.improvements.append(f"{where}: {change} (now: {named(gained)})")
