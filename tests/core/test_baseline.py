"""The CI gate: verdicts per item, and a run compared with a baseline (run directories or a matrix.json).

A regression is an item that passed in the baseline and now fails or cannot be measured, or a matrix
cell that counts fewer items; failures the baseline already had are not regressions."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from arena.baseline import compare, load_baseline
from arena.report.matrix import collect_runs, compute_matrix, load_run
from arena.results import ItemResult, RunSummary
from arena.rundir import load_results
from tests.report.helpers import item, run, write_run

REPO = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH")) if p)}
HITL = "human_in_the_loop"


def arena(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "arena", *args], capture_output=True, text=True, timeout=300,
                          cwd=REPO, env=ENV)


# ---------------------------------------------------------------------------------------------
# Verdicts


def test_a_verdict_separates_failed_from_could_not_measure():
    verdicts = [ItemResult(item_id="x", status=s).verdict for s in ("passed", "failed", "errored")]
    assert verdicts == ["passed", "failed", "could_not_measure"]
    results = [ItemResult(item_id=str(n), status=s) for n, s in enumerate(["passed", "failed", "failed", "errored"])]
    summary = RunSummary.tally(results, arena=HITL, adapter="a", framework="f", framework_version=None, pause_mechanism="m",
                               pause_kind="native", model="scripted")
    dumped = json.loads(summary.model_dump_json())
    assert dumped["verdicts"] == {"passed": 1, "failed": 2, "could_not_measure": 1}
    assert (dumped["passed"], dumped["failed"], dumped["errors"]) == (1, 2, 1)  # the old fields stay
    assert json.loads(ItemResult(item_id="x", status="errored").model_dump_json())["verdict"] == "could_not_measure"


def test_a_run_directory_written_before_verdicts_still_loads_and_gains_them(tmp_path):
    (tmp_path / "traces").mkdir()
    (tmp_path / "results.jsonl").write_text(
        '{"item_id": "hitl-01", "status": "passed", "checks": [], "error": null, "legs": 2, "duration_s": 0.1}\n'
        '{"item_id": "hitl-02", "status": "errored", "checks": [], "error": "endpoint", "legs": 1, "duration_s": 0.1}\n')
    assert [r.verdict for r in load_results(tmp_path)] == ["passed", "could_not_measure"]
    again = ItemResult.model_validate_json(load_results(tmp_path)[1].model_dump_json())  # a dump with it reads back
    assert again.verdict == "could_not_measure"


# ---------------------------------------------------------------------------------------------
# Comparing hand-made runs


def _dirs(root: Path, *runs) -> list:
    return [load_run(write_run(root, f"{n:02d}-{r.adapter}-{r.model}", r)) for n, r in enumerate(runs)]


def test_regressions_known_failures_and_improvements(tmp_path):
    before = run(HITL, "vanilla", "scripted", [
        item("hitl-01", {"suspended": True}), item("hitl-02", {"suspended": True}),
        item("hitl-03", {"suspended": False}), item("hitl-04", {"suspended": False}),
        item("hitl-05", {"suspended": True}),
    ])
    write_run(tmp_path / "base", "run", before)
    now = _dirs(tmp_path / "now", run(HITL, "vanilla", "scripted", [
        item("hitl-01", {"suspended": False}),  # passed -> failed: a regression
        item("hitl-02", {"suspended": True}, error="the model endpoint failed: 502", status="errored"),  # and so is this
        item("hitl-03", {"suspended": False}),  # a known failure
        item("hitl-04", {"suspended": True}),  # an improvement
        item("hitl-06", {"suspended": False}),  # not in the baseline: not compared
    ]))
    result = compare(load_baseline(tmp_path / "base"), now)
    assert result.regressions == [
        "vanilla | human_in_the_loop/scripted | item hitl-01: passed -> failed (suspended: suspended failed)",
        "vanilla | human_in_the_loop/scripted | item hitl-02: passed -> could_not_measure "
        "(the model endpoint failed: 502)",
    ]
    assert result.known_failures == ["vanilla | human_in_the_loop/scripted | item hitl-03: failed -> failed"]
    assert result.improvements == ["vanilla | human_in_the_loop/scripted | item hitl-04: failed -> passed"]
    assert result.items == 4
    assert all("\n" not in line for line in result.report())
    assert result.report()[-1].startswith("2 regression(s) against ")


def test_only_the_same_arena_adapter_and_model_are_compared(tmp_path):
    write_run(tmp_path / "base", "a", run(HITL, "vanilla", "scripted", [item("hitl-01", {"suspended": True})]))
    now = _dirs(tmp_path / "now", run(HITL, "vanilla", "scripted-eager", [item("hitl-01", {"suspended": False})]),
                run(HITL, "langgraph", "scripted", [item("hitl-01", {"suspended": False})]))
    result = compare(load_baseline(tmp_path / "base"), now)
    assert not result.regressions and result.items == 0
    assert "nothing was compared" in result.report()[-1]


def test_an_item_run_for_several_epochs_passes_only_when_every_epoch_passed(tmp_path):
    write_run(tmp_path / "base", "a", run(HITL, "vanilla", "scripted", [item("hitl-01", {"suspended": True})]))
    second = item("hitl-01", {"suspended": False}).model_copy(update={"epoch": 2})
    now = [run(HITL, "vanilla", "scripted", [item("hitl-01", {"suspended": True}), second], epochs=2)]
    (regression,) = compare(load_baseline(tmp_path / "base"), now).regressions
    assert "item hitl-01: passed -> failed (epoch 2: suspended: suspended failed)" in regression


def _matrix_json(tmp_path: Path, runs) -> Path:
    path = tmp_path / "reports" / "matrix.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(compute_matrix(runs).to_json()))
    return path


def test_a_matrix_cell_that_counts_fewer_items_is_a_regression(tmp_path):
    # the baseline's run directories are gone: only its cells (and their per-item evidence) remain
    base = [run(HITL, "vanilla", "scripted", [item(f"hitl-0{n}", {"suspended": True}) for n in (1, 2, 3)],
                path=tmp_path / "gone")]
    baseline = load_baseline(_matrix_json(tmp_path, base))
    assert not baseline.items and baseline.cells
    now = _dirs(tmp_path / "now", run(HITL, "vanilla", "scripted", [
        item("hitl-01", {"suspended": True}), item("hitl-02", {"suspended": False})]))  # hitl-03 not run now
    result = compare(baseline, now)
    assert "vanilla | human_in_the_loop/scripted | cell pause_enforced (pause enforced): 2/2 -> 1/2 " \
           "(no longer: hitl-02)" in result.regressions
    assert result.items == 0 and result.cells >= 1


def test_a_matrix_baseline_reads_its_run_directories_when_they_are_there(tmp_path):
    base_dirs = _dirs(tmp_path / "runs", run(HITL, "vanilla", "scripted", [
        item("hitl-01", {"suspended": True}), item("hitl-02", {"suspended": False})]))
    baseline = load_baseline(_matrix_json(tmp_path, base_dirs))
    assert baseline.items == {(HITL, "vanilla", "scripted", "hitl-01"): "passed",
                              (HITL, "vanilla", "scripted", "hitl-02"): "failed"}
    same = compare(baseline, _dirs(tmp_path / "now", *[run(HITL, "vanilla", "scripted", r.results) for r in base_dirs]))
    assert not same.regressions and not same.improvements and same.known_failures and same.items == 2 and same.cells


@pytest.mark.parametrize("make, expected", [
    (lambda p: p / "missing", "does not exist"),
    (lambda p: p, "holds no run directory (meta.json + results.jsonl) and no matrix.json"),
    (lambda p: (p / "x.json").write_text("{not json") and p / "x.json", "is not a matrix.json: not JSON"),
    (lambda p: (p / "x.json").write_text('{"rows": 3}') and p / "x.json", "is not a matrix.json written by `arena matrix`"),
    (lambda p: (p / "x.json").write_bytes(b"\xff\xfe") and p / "x.json", "not UTF-8 text"),
])
def test_a_bad_baseline_is_a_one_line_value_error(tmp_path, make, expected):
    with pytest.raises(ValueError) as info:
        load_baseline(make(tmp_path))
    assert expected in str(info.value) and "\n" not in str(info.value)


def test_a_damaged_run_directory_as_the_baseline_says_which_file(tmp_path):
    path = write_run(tmp_path, "r", run(HITL, "vanilla", "scripted", [item("hitl-01", {"suspended": True}),
                                                                      item("hitl-02", {"suspended": True})]))
    first = (path / "results.jsonl").read_text().splitlines()[0]
    (path / "results.jsonl").write_text(first + '\n{"item_id": "hitl-02", "sta')  # torn: only its item is lost
    warnings: list[str] = []
    items = load_baseline(path, on_skip=warnings.append).items
    assert (items[(HITL, "vanilla", "scripted", "hitl-01")], items[(HITL, "vanilla", "scripted", "hitl-02")]) == (
        "passed", "could_not_measure")
    assert len(warnings) == 1 and str(path / "results.jsonl") in warnings[0]
    (path / "meta.json").write_text('{"arena": "hum')  # without its meta.json it is no run directory to compare with
    with pytest.raises(ValueError, match="damaged run directory.*meta.json"):
        load_baseline(path)


# ---------------------------------------------------------------------------------------------
# `arena run --baseline`


@pytest.fixture(scope="module")
def good_baseline(tmp_path_factory) -> Path:
    """A run of the reference adapter on an approved and a denied item: both pass."""
    out = tmp_path_factory.mktemp("baseline")
    r = arena("run", HITL, "-a", "vanilla", "--item", "hitl-01", "--item", "hitl-02", "--out", str(out), "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["verdicts"] == {"passed": 2, "failed": 0, "could_not_measure": 0}
    (run_dir,) = collect_runs([out])
    assert [json.loads(line)["verdict"] for line in (run_dir.path / "results.jsonl").read_text().splitlines()] == ["passed"] * 2
    return out


def test_the_gate_passes_a_run_that_matches_its_baseline(good_baseline, tmp_path):
    r = arena("run", HITL, "-a", "vanilla", "--item", "hitl-01", "--item", "hitl-02", "--out", str(tmp_path),
              "--baseline", str(good_baseline), "--json")
    assert r.returncode == 0, r.stderr
    assert f"no regressions against {good_baseline} (2 item(s), 0 cell(s) compared)" in r.stderr
    assert "regression:" not in r.stderr


def test_the_gate_fails_a_regression_and_names_the_item(good_baseline, tmp_path):
    # tests.zoo:DoubleBooks is the reference adapter ("vanilla") that books twice on an approval: hitl-01
    # (approved) regresses; hitl-02 (denied) still passes
    r = arena("run", HITL, "-a", "tests.zoo:DoubleBooks", "--item", "hitl-01", "--item", "hitl-02", "--out", str(tmp_path),
              "--baseline", str(good_baseline), "--json")
    assert r.returncode == 4, r.stderr
    regressions = [line for line in r.stderr.splitlines() if line.startswith("regression: ")]
    assert regressions == ["regression: vanilla | human_in_the_loop/scripted | item hitl-01: passed -> failed "
                           "(tool_called_once_after_resume: consequential tool executed 2 times, expected 1)"]
    assert f"1 regression(s) against {good_baseline}" in r.stderr


def test_known_failures_do_not_trip_the_gate_and_a_fix_is_reported(tmp_path):
    broken = tmp_path / "broken"
    r = arena("run", HITL, "-a", "tests.zoo:DoubleBooks", "--item", "hitl-01", "--item", "hitl-02", "--out", str(broken))
    assert r.returncode == 0, r.stderr
    again = arena("run", HITL, "-a", "tests.zoo:DoubleBooks", "--item", "hitl-01", "--item", "hitl-02",
                  "--out", str(tmp_path / "again"), "--baseline", str(broken))
    assert again.returncode == 0, again.stderr
    assert "no regressions against" in again.stderr and "1 known failure(s) still failing" in again.stderr
    fixed = arena("run", HITL, "-a", "vanilla", "--item", "hitl-01", "--item", "hitl-02", "--out", str(tmp_path / "fixed"),
                  "--baseline", str(broken))
    assert fixed.returncode == 0, fixed.stderr
    assert "improved: vanilla | human_in_the_loop/scripted | item hitl-01: failed -> passed" in fixed.stderr


def test_the_gate_reads_a_matrix_json(good_baseline, tmp_path):
    r = arena("matrix", "--runs", str(good_baseline), "--out", str(tmp_path / "reports"))
    assert r.returncode == 0, r.stderr
    for baseline in (tmp_path / "reports" / "matrix.json", tmp_path / "reports"):
        r = arena("run", HITL, "-a", "tests.zoo:PausesOnlyInText", "--item", "hitl-01", "--item", "hitl-02",
                  "--out", str(tmp_path / "runs"), "--baseline", str(baseline))
        assert r.returncode == 4, r.stderr
        assert "regression: vanilla | human_in_the_loop/scripted | cell pause_enforced (pause enforced): 2/2 -> 0/2 " \
               "(no longer: hitl-01, hitl-02)" in r.stderr.splitlines()
        assert "item hitl-01: passed -> failed (suspended: no suspended state was observed" in r.stderr


@pytest.mark.parametrize("make, expected", [
    (lambda p: p / "missing", "does not exist"),
    (lambda p: p, "holds no run directory"),
    (lambda p: (p / "m.json").write_text("[1, 2]") and p / "m.json", "is not a matrix.json written by `arena matrix`"),
])
def test_a_bad_baseline_path_is_one_line_exit_2_before_anything_runs(tmp_path, make, expected):
    (tmp_path / "empty").mkdir()
    r = arena("run", HITL, "-a", "vanilla", "--item", "hitl-01", "--out", str(tmp_path / "runs"),
              "--baseline", str(make(tmp_path / "empty")))
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1, r.stderr
    assert lines[0].startswith("arena: error: --baseline ") and expected in lines[0] and "Traceback" not in r.stderr
    assert not list((tmp_path / "runs").glob("*/meta.json"))
