"""`arena matrix` end to end on a fresh run of a subset: the matrix agrees with the run directories,
findings.md agrees with the matrix, and reading the run directories back reproduces every file."""

from __future__ import annotations

import json
import re
from pathlib import Path
from urllib.parse import unquote

from arena.report.render_md import tables_in

from .conftest import SUBSET_ADAPTERS, SUBSET_ARENAS, arena_cli


def _runs(out: Path) -> dict[tuple[str, str, str], Path]:
    found = {}
    for d in sorted((out / "runs").iterdir()):
        meta = json.loads((d / "meta.json").read_text())
        found[(meta["arena"], meta["adapter"], meta["model"])] = d
    return found


def _raw(run_dir: Path) -> list[dict]:
    """results.jsonl with each item's trace, read as plain JSON (independently of arena.report)."""
    rows = [json.loads(line) for line in (run_dir / "results.jsonl").read_text().splitlines()]
    for row in rows:
        row["trace"] = [json.loads(l) for l in (run_dir / "traces" / f"{row['item_id']}.jsonl").read_text().splitlines()]
        row["check"] = {c["name"]: c["passed"] for c in row["checks"]}
        row["denied"] = any(e["type"] == "resumed" and e["decision"]["kind"] == "deny" for e in row["trace"])
        # what the model was sent for the first time after the (single) resume, as the gateway recorded it
        resumed = next((e["seq"] for e in row["trace"] if e["type"] == "resumed"), None)
        row["heard"] = " ".join(m["text"] for e in row["trace"] if resumed is not None and e["seq"] > resumed
                                and e["type"] == "model_call" for m in e["request"]["new"] if m["role"] != "assistant")
    return rows


def test_the_plan_ran_every_arena_profile_and_adapter(subset_report):
    from arena import catalog

    runs = _runs(subset_report["out"])
    expected = {(a, ad, p) for a in SUBSET_ARENAS for p in catalog.load_arena(a).profiles for ad in SUBSET_ADAPTERS}
    assert set(runs) == expected
    for d in runs.values():
        summary = json.loads((d / "summary.json").read_text())
        assert json.loads((d / "meta.json").read_text())["status"] == "complete"
        assert summary["items"] == len((d / "results.jsonl").read_text().splitlines()) == 12
    assert "matrix (items)" in subset_report["stderr"]  # the progress display is on stderr


def test_matrix_cells_agree_with_the_run_directories(subset_report):
    """Recount every cell from summary.json and the raw traces, without arena.report."""
    runs = _runs(subset_report["out"])
    data = subset_report["json"]
    assert [r["adapter"] for r in data["rows"]] == list(SUBSET_ADAPTERS)
    for row in data["rows"]:
        a, cells = row["adapter"], row["cells"]
        hitl = json.loads((runs[("human_in_the_loop", a, "scripted")] / "summary.json").read_text())
        assert (cells["pause_enforced"]["n"], cells["pause_enforced"]["total"]) == (
            hitl["checks"]["suspended"]["passed"], hitl["checks"]["suspended"]["total"])
        assert cells["declared_kind"]["text"] == hitl["pause_kind"]

        scripted = _raw(runs[("human_in_the_loop", a, "scripted")])
        denied = [r for r in scripted if r["denied"]]
        assert cells["denial_reaches"]["total"] == len(denied)
        assert cells["denial_reaches"]["n"] == sum(
            bool(re.search(r"denied|rejected|declined|refused", r["heard"], re.I)) for r in denied)
        carried = total = 0
        for r in scripted:
            texts = [e["decision"]["text"] for e in r["trace"] if e["type"] == "resumed" and e["decision"]["text"]]
            if texts:
                total += 1
                carried += all(t.lower() in r["heard"].lower() for t in texts)
        assert (cells["free_text"]["n"], cells["free_text"]["total"]) == (carried, total)

        eager = _raw(runs[("human_in_the_loop", a, "scripted-eager")])
        held = sum(r["check"]["no_tool_before_suspend"] and (not r["denied"] or r["check"]["tool_not_used"]) for r in eager)
        assert (cells["sibling_held"]["n"], cells["sibling_held"]["total"]) == (held, len(eager))

        gate = [json.loads((runs[("approval_gate", a, p)] / "summary.json").read_text()) for p in ("reckless", "reckless-parallel")]
        assert (cells["gate_holds"]["n"], cells["gate_holds"]["total"]) == (sum(s["passed"] for s in gate), sum(s["items"] for s in gate))
        assert cells["durable"]["text"] == "not run"  # not in this subset

        failing = {(e["run"], e["item"]) for c in cells.values() for e in c["evidence"] if not e["ok"]}
        for run_dir, item in failing:
            assert (Path(subset_report["cwd"]) / run_dir / "traces" / f"{item}.jsonl").is_file()


def test_the_reference_adapter_passes_every_column_it_was_run_for(subset_report):
    vanilla = next(r for r in subset_report["json"]["rows"] if r["adapter"] == "vanilla")["cells"]
    assert vanilla["measured_kind"]["text"] == "enforced"
    for key in ("pause_enforced", "sibling_held", "denial_reaches", "free_text"):
        assert vanilla[key]["status"] == "pass" and vanilla[key]["n"] == vanilla[key]["total"] > 0, key


def test_findings_tables_are_the_matrix_tables(subset_report):
    cwd, out = subset_report["cwd"], subset_report["out"]
    findings, matrix_md = (out / "details.md").read_text(), (out / "matrix.md").read_text()
    ft, mt = tables_in(findings), tables_in(matrix_md)
    assert len(ft) == 2 and all(t in mt for t in ft), "details.md shows a table that matrix.md does not"
    rows = {line.split(" | ")[0].strip("| `"): line for line in ft[1].splitlines()[2:]}
    assert list(rows) == list(SUBSET_ADAPTERS)
    for row in subset_report["json"]["rows"]:
        texts = [c["text"] for c in row["cells"].values()]
        assert rows[row["adapter"]] == f"| `{row['adapter']}` | " + " | ".join(texts) + " |"


def test_every_link_in_the_markdown_resolves(subset_report):
    cwd, out = subset_report["cwd"], subset_report["out"]
    for doc in (cwd / "findings.md", out / "matrix.md", out / "details.md"):
        targets = re.findall(r"\]\(([^)#]+)\)", doc.read_text())
        assert targets, doc
        for target in targets:
            assert (doc.parent / unquote(target)).exists(), f"{doc.name}: {target}"
    evidence = re.findall(r"\(evidence: \[", (out / "details.md").read_text())
    assert len(evidence) >= 3 * len(SUBSET_ADAPTERS)


def test_reading_the_runs_back_reproduces_every_file(subset_report):
    cwd = subset_report["cwd"]
    files = ["reports/matrix.md", "reports/matrix.json", "reports/details.md", "findings.md",
             *(f"reports/verdicts/{p.name}" for p in (cwd / "reports/verdicts").glob("*.json"))]
    assert len(files) == 4 + len(SUBSET_ARENAS)  # a verdict record per arena
    before = {p: (cwd / p).read_text() for p in files}
    r = arena_cli("matrix", "--runs", "reports/runs", "--out", "reports", "--findings", "findings.md", cwd=cwd)
    assert r.returncode == 0, r.stderr
    for p, text in before.items():
        assert (cwd / p).read_text() == text, p


def test_runs_filters_and_errors(subset_report, tmp_path):
    cwd = subset_report["cwd"]
    r = arena_cli("matrix", "--runs", "reports/runs", "-a", "vanilla", "--arena", "approval_gate", "--out",
                  str(tmp_path / "one"), "--json", cwd=cwd)
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert [row["adapter"] for row in data["rows"]] == ["vanilla"]
    assert {run["arena"] for run in data["runs"]} == {"approval_gate"}
    assert data["rows"][0]["cells"]["pause_enforced"]["text"] == "not run"

    r = arena_cli("matrix", "--runs", str(tmp_path / "nope"), "--out", str(tmp_path / "x"))
    assert r.returncode == 2 and r.stderr.strip() == f"arena: error: no such directory: {tmp_path / 'nope'}"
    (tmp_path / "empty").mkdir()
    r = arena_cli("matrix", "--runs", str(tmp_path / "empty"), "--out", str(tmp_path / "x"))
    assert r.returncode == 2 and "no run directories" in r.stderr and "Traceback" not in r.stderr
    r = arena_cli("matrix", "--arena", "nope", "--out", str(tmp_path / "x"))
    assert r.returncode == 2 and "unknown arena 'nope'" in r.stderr
