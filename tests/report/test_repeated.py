"""The report of runs with several epochs: a "Repeated runs" section, and nothing new for single-epoch runs."""

from __future__ import annotations

import json

from arena.report import write_reports
from arena.report.matrix import collect_runs, compute_matrix
from arena.report.site import Site
from arena.report.render_md import render_matrix_md

from .helpers import DENY, item, run, write_run

HITL = "human_in_the_loop"
OK = {"suspended": True, "tool_called_once_after_resume": True}
BAD = {"suspended": False, "tool_called_once_after_resume": True}


def _epoch(result, k):
    return result.model_copy(update={"epoch": k})


def repeated_run(tmp_path=None):
    """hitl-01 passes 3 of 3 epochs, hitl-02 1 of 3: pass@1 4/6, pass^3 1/2."""
    results = [item("hitl-01", OK), item("hitl-02", OK, decision=DENY, final="denied")]
    results += [_epoch(item("hitl-01", OK), k) for k in (2, 3)]
    results += [_epoch(item("hitl-02", BAD, decision=DENY, final="denied"), k) for k in (2, 3)]
    return run(HITL, "vanilla", "sampled", results, epochs=3)


def test_repeated_runs_section_in_every_format():
    single = run(HITL, "langgraph", "scripted", [item("hitl-01", OK)])
    m = compute_matrix([repeated_run(), single])
    rep = m.runs[0]
    assert [r.item_id for r in rep.results] == ["hitl-01", "hitl-02"] and len(rep.later) == 4  # cells read epoch 1
    (row,) = m.to_json()["repeated"]
    assert row["adapter"] == "vanilla" and row["epochs"] == 3
    assert abs(row["pass_at_1"] - 4 / 6) < 1e-9 and row["pass_hat_k"] == 0.5
    assert row["ci_low"] < 4 / 6 < row["ci_high"]
    assert row["items"]["hitl-02"] == {"passed": 1, "measured": 3, "errored": 0}
    md = render_matrix_md(m)
    assert "## Repeated runs" in md
    section = md.split("## Repeated runs")[1]
    line = next(x for x in section.splitlines() if x.startswith("| human_in_the_loop | sampled |"))
    assert "| 3 | 66.7% | 50.0% |" in line and "hitl-02 1/3" in line
    html = Site(m).render("matrix.html")[0].decode()
    assert "<h2>Repeated runs</h2>" in html and "66.7%" in html and 'id="repeated-table"' in html


def test_single_epoch_runs_render_as_before():
    m = compute_matrix([run(HITL, "vanilla", "scripted", [item("hitl-01", OK)])])
    assert "repeated" not in m.to_json()
    assert "Repeated runs" not in render_matrix_md(m) and b"Repeated runs" not in Site(m).render("matrix.html")[0]


def test_run_directory_with_epochs_reads_back(tmp_path):
    r = repeated_run()
    path = tmp_path / "runs" / "rep"
    (path / "traces").mkdir(parents=True)
    (path / "meta.json").write_text(json.dumps(r.meta))
    with (path / "results.jsonl").open("w") as f:
        for result in [*r.results, *r.later]:
            f.write(result.model_dump_json(exclude={"trace"}) + "\n")
            name = f"{result.item_id}.jsonl" if result.epoch == 1 else f"{result.item_id}@{result.epoch}.jsonl"
            (path / "traces" / name).write_text("".join(e.model_dump_json() + "\n" for e in result.trace))
    (back,) = collect_runs([tmp_path / "runs"])
    assert len(back.results) == 2 and len(back.later) == 4 and all(x.trace for x in back.later)
    assert back.trace_path("hitl-02") == path / "traces" / "hitl-02.jsonl"
    paths = write_reports(compute_matrix([back]), tmp_path / "reports")
    assert "Repeated runs" in paths["md"].read_text()


def test_old_run_directories_have_one_epoch(tmp_path):
    path = write_run(tmp_path, "old", run(HITL, "vanilla", "scripted", [item("hitl-01", OK)]))
    (back,) = collect_runs([path])
    assert back.epochs == 1 and back.repeated() is None and back.results[0].epoch == 1


def test_each_cell_of_a_run_with_epochs_shows_pass_at_1_pass_hat_k_and_its_interval():
    """The cell's count stays the first epoch's (its evidence links its traces); over every epoch, hitl-02's
    pause held in 1 of 3: pass@1 4/6, pass^3 1/2."""
    results = [item("hitl-01", OK), item("hitl-02", OK, decision=DENY, final="denied")]
    results += [_epoch(item("hitl-01", OK), k) for k in (2, 3)]
    results += [_epoch(item("hitl-02", BAD, decision=DENY, final="denied"), k) for k in (2, 3)]
    m = compute_matrix([run(HITL, "vanilla", "scripted", results, epochs=3)])
    cell = m.rows[0].cells["pause_enforced"]
    assert cell.text == "2/2" and cell.repeated.epochs == 3
    assert abs(cell.repeated.pass_at_1 - 4 / 6) < 1e-9 and cell.repeated.pass_hat_k == 0.5
    low, high = cell.repeated.ci
    assert low < 4 / 6 < high
    shown = m.to_json()["rows"][0]["cells"]["pause_enforced"]["repeated"]
    assert shown["pass_hat_k"] == 0.5 and shown["epochs"] == 3
    assert "2/2 (pass@1 66.7%, pass^3 50.0%, 95% CI " in render_matrix_md(m)
    assert "pass@1 66.7%, pass^3 50.0%" in Site(m).render("matrix.html")[0].decode()
    measured = m.rows[0].cells["measured_kind"]  # the measured kind reads the same rule over every epoch
    assert measured.repeated is not None and measured.repeated.pass_hat_k == 0.5
    assert m.rows[0].cells["declared_kind"].repeated is None  # a claim, not a measurement


def test_single_epoch_cells_carry_no_repeated_figures():
    m = compute_matrix([run(HITL, "vanilla", "scripted", [item("hitl-01", OK)])])
    cells = m.to_json()["rows"][0]["cells"]
    assert all("repeated" not in c for c in cells.values())
    assert "pass@1" not in render_matrix_md(m)
