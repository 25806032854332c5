"""Adapters pinned to a framework release (`-a langgraph@1.1.10`): the spec, the environment they get,
their order in the matrix, and findings' comparison of releases."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from arena.catalog import builtin_adapters

REGISTRY = builtin_adapters()
from arena import versions
from arena.report.columns import Cell, Column, Evidence
from arena.report.findings import releases_section
from arena.report.matrix import Matrix, Row, adapter_order
from arena.worker import envs


def test_a_spec_is_name_at_a_release_or_latest():
    assert versions.split("langgraph@1.1.10") == ("langgraph", "1.1.10")
    assert versions.split("pydantic_ai@latest") == ("pydantic_ai", "latest")
    for bad in ("langgraph@", "langgraph@one", "@1.0", "lang graph@1.0"):
        with pytest.raises(versions.VersionError):
            versions.split(bad)
    assert versions.is_versioned("langgraph@1.0") and not versions.is_versioned("pkg.mod:Cls")


def test_the_environment_pins_the_framework_and_leaves_its_companions_to_the_resolver():
    extra, reqs = versions.requirements_for(REGISTRY["pydantic_ai"], "2.66.0")
    assert extra == "pydantic-ai"
    assert "pydantic-ai-slim[openai]==2.66.0" in reqs  # the extra's extras kept, the release pinned
    assert "pydantic" in reqs and "httpx" in reqs  # what the worker imports of the harness
    assert "uv" not in reqs  # the harness's own tool, not the worker's
    extra, reqs = versions.requirements_for(REGISTRY["langgraph"], "1.1.10")
    assert "langgraph==1.1.10" in reqs and "langchain" in reqs  # unpinned: uv picks what fits 1.1.10


def test_a_versioned_entry_is_isolated_and_its_environment_resolves_as_of_the_release(monkeypatch):
    monkeypatch.setattr(versions, "released", lambda dist, version: "2026-04-28T17:19:10Z")
    entry = versions.versioned_entry(REGISTRY["langgraph_per_call"], "1.1.10")
    assert entry.name == "langgraph_per_call@1.1.10" and entry.isolated and entry.target == REGISTRY["langgraph"].target.replace(
        "LangGraphAdapter", "LangGraphPerCallAdapter")
    assert entry.env_name == "langgraph@1.1.10"  # shared by the adapters of one extra
    assert entry.available and entry.version == "1.1.10"  # pinned in its requirements: no environment needed
    assert envs.exclude_newer(entry.env_name) == "2026-04-28T17:19:10Z"
    with pytest.raises(versions.VersionError, match="environment of its own"):
        versions.versioned_entry(REGISTRY["crewai"], "1.0.0")


def test_the_environment_is_built_with_the_index_as_it_stood_then(monkeypatch, tmp_path):
    monkeypatch.setenv("ARENA_ENV_DIR", str(tmp_path))
    envs.register("demo@1.0", "# exclude-newer: 2026-01-02T00:00:00Z\nsomething==1.0\n")
    calls = []

    def run(cmd, **kw):
        calls.append((cmd, kw.get("input")))
        if "venv" in cmd:
            Path(cmd[-1]).mkdir(parents=True)
        return subprocess.CompletedProcess(cmd, 0, "", "")

    monkeypatch.setattr(envs.subprocess, "run", run)
    envs.ensure_env("demo@1.0")
    install = next((cmd, stdin) for cmd, stdin in calls if "install" in cmd)
    assert install[0][install[0].index("--exclude-newer") + 1] == "2026-01-02T00:00:00Z"
    assert "something==1.0" in install[1]  # the requirements go in on stdin


def test_the_release_date_is_read_from_the_index(monkeypatch):
    import httpx

    class Reply:
        status_code = 200

        def raise_for_status(self):
            pass

        def json(self):
            return {"releases": {"1.1.10": [{"upload_time_iso_8601": "2026-04-27T17:19:10.5Z"},
                                            {"upload_time_iso_8601": "2026-04-27T18:00:00Z"}]}}

    monkeypatch.setattr(httpx, "get", lambda *a, **k: Reply())
    assert versions.released("langgraph", "1.1.10") == "2026-04-28T17:19:10Z"  # the first upload, plus a day
    with pytest.raises(envs.EnvError, match="not a release"):
        versions.released("langgraph", "9.9.9")


def test_releases_sit_beside_their_adapter_oldest_first():
    names = ["pydantic_ai", "langgraph@1.1.10", "vanilla", "langgraph", "langgraph@1.0.10", "langgraph_per_call"]
    assert sorted(names, key=adapter_order) == [
        "vanilla", "langgraph", "langgraph@1.0.10", "langgraph@1.1.10", "langgraph_per_call", "pydantic_ai"]


def _row(adapter: str, version: str, ok: list[bool]) -> Row:
    ev = [Evidence(run=f"runs/{adapter}", item=f"i{n}", ok=o, note="") for n, o in enumerate(ok)]
    cell = Cell(text=f"{sum(ok)}/{len(ok)}", status="pass" if all(ok) else "partial", n=sum(ok), total=len(ok), evidence=ev)
    return Row(adapter=adapter, meta={"framework": "langgraph", "framework_version": version}, cells={"gate": cell}, runs=[])


def test_findings_state_every_cell_that_differs_between_releases_with_the_item_that_differs():
    col = Column("gate", "gate holds", "approval_gate", ("reckless",), "x", rule=lambda r: None)
    m = Matrix(columns=[col], rows=[_row("langgraph", "1.2.24", [True, True]), _row("langgraph@1.1.10", "1.1.10", [True, False]),
                                    _row("vanilla", "3.0", [True, True])], runs=[])
    text = releases_section(m)
    assert "`langgraph` (langgraph 1.1.10, 1.2.24): 1 of 1 cells changed" in text
    assert "| gate holds | approval_gate | 2/2 | 1.2.24 | 1.2.24: 1/2 → 2/2 ([i1](runs/langgraph/traces/i1.jsonl) counts) |" in text
    assert "vanilla" not in text  # one release only: nothing to compare
    same = Matrix(columns=[col], rows=[_row("langgraph", "1.2.24", [True]), _row("langgraph@1.1.10", "1.1.10", [True])], runs=[])
    assert "no cell differs (1 cells, the same since 1.1.10)" in releases_section(same)


def test_a_history_names_since_when_a_cell_holds_its_value_and_every_release_where_it_changed():
    """1.0 passes, 1.1 breaks it, 1.2 fixes it, 1.3 keeps it: now 2/2 since 1.2, changed at 1.1 and at 1.2; a
    release that did not run the cell is left out; a cell that never changed shows "never" in the full history."""
    from arena.report.findings import cell_histories, history_table, release_groups

    gate = Column("gate", "gate holds", "approval_gate", ("reckless",), "x", rule=lambda r: None)
    steady = Column("steady", "steady", "approval_gate", ("reckless",), "x", rule=lambda r: None)
    rows = []
    for adapter, version, ok in [("langgraph@1.0.0", "1.0.0", [True, True]), ("langgraph@1.1.0", "1.1.0", [True, False]),
                                 ("langgraph@1.2.0", "1.2.0", [True, True]), ("langgraph", "1.3.0", [True, True])]:
        row = _row(adapter, version, ok)
        row.cells["steady"] = _row(adapter, version, [True]).cells["gate"]
        rows.append(row)
    skipped = _row("langgraph@0.9.0", "0.9.0", [True])
    skipped.cells = {"gate": Cell(text="not run", status="notrun"), "steady": Cell(text="not run", status="notrun")}
    m = Matrix(columns=[gate, steady], rows=[rows[3], skipped, *rows[:3]], runs=[])
    ordered = release_groups(m)["langgraph"]
    assert [r.version for r in ordered] == ["0.9.0", "1.0.0", "1.1.0", "1.2.0", "1.3.0"]
    history = {h.column.key: h for h in cell_histories(m, ordered)}
    assert history["gate"].now == "2/2" and history["gate"].since.version == "1.2.0"
    assert [(r.version, before, after) for r, before, after in history["gate"].changes] == [
        ("1.1.0", "2/2", "1/2"), ("1.2.0", "1/2", "2/2")]
    assert history["steady"].since.version == "1.0.0" and history["steady"].changes == []
    full = history_table(m, ordered, every=True)
    assert "| steady | approval_gate | 1/1 | 1.0.0 | never |" in full
    assert "1.1.0: 2/2 → 1/2" in full and "steady" not in history_table(m, ordered)


def test_recent_releases_are_the_latest_patch_of_the_last_six_minors_final_and_not_yanked(monkeypatch):
    from arena import versions

    files = [{"yanked": False}]
    index = {"0.9.0": files, "1.0.0": files, "1.0.3": files, "1.1.0": files, "1.2.0": files, "1.2.1rc1": files,
             "1.3.0": files, "1.4.0": [], "1.5.0": files, "1.6.0": [{"yanked": True}], "1.6.1": files, "1.7.0.dev1": files}
    monkeypatch.setattr(versions, "_index_releases", lambda dist: index)
    assert versions.recent_releases("x") == ["1.0.3", "1.1.0", "1.2.0", "1.3.0", "1.5.0", "1.6.1"]
    assert versions.recent_releases("x", minors=2) == ["1.5.0", "1.6.1"]


@pytest.mark.parametrize("spec, says", [
    ("langgraph@one", "is not a release version"),
    ("nope@1.0", "unknown adapter 'nope' in 'nope@1.0'"),
    ("crewai@1.0.0", "pin its release there"),
])
def test_a_bad_spec_is_one_line_and_exit_2(spec, says, tmp_path):
    r = subprocess.run([sys.executable, "-m", "arena", "run", "human_in_the_loop", "-a", spec, "--out", str(tmp_path)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and r.stderr.startswith("arena: error: ") and says in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("args, says", [
    (["--history", "nope"], "--history: unknown adapter 'nope'"),
    (["--history", "crewai"], "--history: 'crewai' must be installed in this environment"),
    (["--history", "langgraph", "-a", "vanilla"], "--history runs one adapter's releases"),
])
def test_a_bad_history_is_one_line_and_exit_2(args, says, tmp_path):
    r = subprocess.run([sys.executable, "-m", "arena", "matrix", *args, "--out", str(tmp_path)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and r.stderr.startswith("arena: error: ") and says in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


@pytest.mark.framework("pydantic_ai")
def test_an_adapter_runs_against_an_older_release_in_its_own_environment(tmp_path):
    """Needs the package index (to build the environment once); later runs reuse it."""
    r = subprocess.run([sys.executable, "-m", "arena", "run", "human_in_the_loop", "-a", "pydantic_ai@2.66.0",
                        "--item", "hitl-01", "--out", str(tmp_path), "--json"], capture_output=True, text=True, timeout=900)
    if r.returncode == 1 and "failed" in r.stderr and ("index" in r.stderr or "environment" in r.stderr):
        pytest.skip(f"the environment could not be built here (no package index?): {r.stderr.strip()[-200:]}")
    assert r.returncode == 0, r.stderr
    summary = json.loads(r.stdout.strip().splitlines()[-1])
    assert summary["adapter"] == "pydantic_ai@2.66.0" and summary["framework_version"] == "2.66.0"
    assert summary["passed"] == 1
    (run,) = Path(tmp_path).iterdir()
    meta = json.loads((run / "meta.json").read_text())
    assert meta["framework_version"] == "2.66.0" and meta["worker_start"] in ("fork",) or meta["worker_start"].startswith("spawn")


def test_latest_is_resolved_to_a_release_so_the_row_names_it(monkeypatch):
    seen = {}

    def run(cmd, **kw):
        seen["input"] = kw.get("input")
        return subprocess.CompletedProcess(cmd, 0, "langgraph==1.2.24\n", "")

    monkeypatch.setattr(versions.subprocess, "run", run)
    monkeypatch.setattr(versions, "released", lambda dist, version: "2026-11-21T01:10:12Z")
    entry = versions.versioned_entry(REGISTRY["langgraph"], "latest")
    assert entry.name == "langgraph@1.2.24" and seen["input"] == "langgraph\n"
    monkeypatch.setattr(versions.subprocess, "run",
                        lambda cmd, **kw: subprocess.CompletedProcess(cmd, 2, "", "error: no index\n"))
    with pytest.raises(envs.EnvError, match="latest langgraph failed: error: no index"):
        versions.resolve_latest("langgraph")


@pytest.mark.framework("langgraph")
def test_an_adapter_a_release_cannot_run_says_why_in_each_item(tmp_path):
    """langgraph_per_call needs langchain's `interrupt_mode`, which the langchain of langgraph 1.1.10 lacks."""
    r = subprocess.run([sys.executable, "-m", "arena", "run", "approval_gate", "-a", "langgraph_per_call@1.1.10",
                        "--item", "gate-01", "--item", "gate-02", "--out", str(tmp_path), "--json"],
                       capture_output=True, text=True, timeout=900)
    if r.returncode == 1 and "failed" in r.stderr and ("index" in r.stderr or "environment" in r.stderr):
        pytest.skip(f"the environment could not be built here (no package index?): {r.stderr.strip()[-200:]}")
    assert r.returncode == 0, r.stderr  # measured: the items failed, the run did not crash
    assert "2 items: WorkerError: TypeError: HumanInTheLoopMiddleware.__init__() got an unexpected keyword " \
           "argument 'interrupt_mode'" in r.stderr
    (run,) = Path(tmp_path).iterdir()
    results = [json.loads(line) for line in (run / "results.jsonl").read_text().splitlines()]
    assert [r["status"] for r in results] == ["failed", "failed"]
    assert all("interrupt_mode" in r["error"] for r in results)


def test_a_release_the_adapter_cannot_drive_is_named_and_left_out_of_the_history():
    """Every item of 0.6 ended in an ImportError (the adapter calls an API that release predates): its cells
    (0/1 by count) are no change of the framework's; the history leaves the release out and says why."""
    from arena.report.findings import could_not_run, history_table, release_groups
    from arena.report.matrix import Run
    from tests.report.helpers import item

    col = Column("gate", "gate holds", "approval_gate", ("reckless",), "x", rule=lambda r: None)
    old = _row("langgraph@0.6.11", "0.6.11", [False])
    old.runs = [Run(path=Path("runs/old"), meta={}, results=[item("gate-01", {"suspended": False}, paused=False,
                                                                  error="ImportError: no create_agent")])]
    new = _row("langgraph", "1.2.24", [True])
    new.runs = [Run(path=Path("runs/new"), meta={}, results=[item("gate-01", {"suspended": True})])]
    m = Matrix(columns=[col], rows=[new, old], runs=[])
    assert could_not_run(old) == "ImportError: no create_agent" and could_not_run(new) is None
    # every item errored, but after a pause and a resume: the release was driven, its errors are measurements
    repaused = item("gate-01", {"suspended": True}, error="suspended a 2. time but the item has only 1 decision(s)")
    assert repaused.legs == 2
    old.runs = [Run(path=Path("runs/old"), meta={}, results=[repaused])]
    assert could_not_run(old) is None
    old.runs = [Run(path=Path("runs/old"), meta={}, results=[item("gate-01", {"suspended": False}, paused=False,
                                                                  error="ImportError: no create_agent")])]
    rows = release_groups(m)["langgraph"]
    assert "| gate holds | approval_gate | 1/1 | 1.2.24 | never |" in history_table(m, rows, every=True)
    text = releases_section(m)
    assert "0.6.11 could not be run (ImportError\\: no create\\_agent)." in text and "no cell differs" in text


def test_the_history_page_lists_each_boundarys_items_and_checks_and_a_streamed_section():
    """1.0 → 1.1 breaks gate-02's `denied_not_executed` (the cell's count changes), 1.1 → 1.2 fixes it and breaks
    gate-01's check instead (the cell's count does not change, the boundary still names both items); the streamed
    rows get a section of their own."""
    from arena.report.history import boundary_changes, history_page
    from arena.report.matrix import Run
    from tests.report.helpers import item

    col = Column("gate", "gate holds", "approval_gate", ("reckless",), "x", rule=lambda r: None)

    def release(adapter: str, version: str, good: tuple[bool, bool]) -> Row:
        row = _row(adapter, version, list(good))
        row.runs = [Run(path=Path(f"runs/{adapter}"), meta={"arena": "approval_gate", "model": "reckless"},
                        results=[item(f"gate-0{n}", {"suspended": True, "denied_not_executed": ok})
                                 for n, ok in enumerate(good, 1)])]
        return row

    rows = [release("langgraph@1.0.0", "1.0.0", (True, True)), release("langgraph@1.1.0", "1.1.0", (True, False)),
            release("langgraph", "1.2.0", (False, True)), release("langgraph@1.0.0 (streamed)", "1.0.0", (True, True)),
            release("langgraph (streamed)", "1.2.0", (True, False))]
    (change,) = boundary_changes(rows[0], rows[1])
    assert (change.item, change.checks) == ("gate-02", ("denied_not_executed: pass → FAIL",))
    page = history_page(Matrix(columns=[col], rows=rows, runs=[]), "langgraph")
    plain, streamed = page.split("## Streamed\n")
    assert "- 1.0.0 → 1.1.0: 1 item(s) changed\n  - approval_gate × reckless: [gate-02](runs/langgraph%401.1.0/traces/" \
           "gate-02.jsonl) (passed → failed; denied_not_executed: pass → FAIL)" in plain, plain
    assert "- 1.1.0 → 1.2.0: 2 item(s) changed" in plain and "gate-01" in plain.split("1.1.0 → 1.2.0")[1]
    assert "Oldest first: langgraph@1.0.0 (streamed), langgraph (streamed)." in streamed
    assert "- 1.0.0 → 1.2.0: 1 item(s) changed" in streamed and "denied_not_executed: pass → FAIL" in streamed
