"""`arena matrix --jobs N`: the matrix as N processes of this machine gives the report one process gives, and
a job that fails is an error of the run, never a silent gap."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from arena.errors import UserError
from arena.evaluation import Silent, evaluate_matrix
from arena.jobs import Claims, queue, run_jobs

from .conftest import arena_cli
from .test_findings_committed import normalise

CELLS = ["-a", "vanilla", "-a", "langgraph", "--arena", "human_in_the_loop", "--arena", "approval_gate"]


def test_the_jobs_wait_in_one_queue_costliest_first_a_framework_s_releases_together():
    costs = {"vanilla": 60.0, "langgraph": 90.0, "crewai": 120.0, "langgraph@1.0.10": 100.0, "agno": 60.0}
    assert queue(costs) == [["crewai"], ["langgraph@1.0.10"], ["langgraph"], ["agno"], ["vanilla"]]
    assert queue(dict(reversed(list(costs.items())))) == queue(costs)  # the order adapters are listed in does not matter
    kin = lambda name: name.split("@")[0]  # noqa: E731
    assert queue(costs, kin) == [["langgraph", "langgraph@1.0.10"], ["crewai"], ["agno"], ["vanilla"]]  # plan order within


def test_the_adapters_of_one_module_run_in_one_job(tmp_path: Path):
    """smolagents and smolagents_emulated (one module): one job, its framework imported once; vanilla another."""
    reporter = Count()
    made = evaluate_matrix(["smolagents", "smolagents_emulated", "vanilla"], ["approval_gate"], out=tmp_path, jobs=2,
                           reporter=reporter)
    assert sorted({r.adapter for r in made}) == ["smolagents", "smolagents_emulated", "vanilla"] and not made.failed
    said = [message for _level, message in reporter.said if "jobs at a time" in message]
    assert said == ["2 jobs at a time over 2 frameworks, costliest first: smolagents, smolagents_emulated | vanilla"], \
        reporter.said
    ran: dict[int, set[str]] = {}
    for r in made:
        ran.setdefault(r.meta["pid"], set()).add(r.adapter)
    # one process ran both (its first two cells are one of each; a process that helps it later takes from the end)
    assert {"smolagents", "smolagents_emulated"} in ran.values(), ran


def test_a_slot_that_ends_takes_the_next_job_so_a_long_job_never_runs_alone_for_long(tmp_path: Path):
    """Three jobs, two at a time: the third starts when the first slot frees, whichever that is."""
    reporter = Count()
    made = run_jobs({"vanilla": 3.0, "langgraph": 2.0, "no_such_adapter": 1.0}, ["approval_gate"],
                    jobs=2, out=tmp_path, timeout=60, concurrency=None, reporter=reporter, total=48)
    assert sorted(r.adapter for r in made.runs) == ["langgraph", "langgraph", "vanilla", "vanilla"]
    assert list(made.failed) == ["job 3"]  # the third job ran, in whichever slot freed first
    assert any("2 jobs at a time over 3 frameworks" in message for _level, message in reporter.said)


def test_a_cell_is_claimed_once_whichever_process_asks_first(tmp_path: Path):
    one, other = Claims(tmp_path), Claims(tmp_path)  # two processes of a framework, one folder of the run's
    assert one.claim("approval_gate/vanilla/reckless") and not other.claim("approval_gate/vanilla/reckless")
    assert not one.claim("approval_gate/vanilla/reckless")  # not twice by the same one either
    assert other.unclaimed(["approval_gate/vanilla/reckless", "doc_review/vanilla/reviewer"]) == \
        ["doc_review/vanilla/reviewer"]


def test_a_slot_with_no_framework_left_helps_the_one_with_most_cells_not_started_and_each_cell_runs_once(
        tmp_path: Path):
    """One framework, two slots: the second slot starts another process for it at once, which takes its cells from
    the end while the first takes them from the start; each cell runs once, and the runs are one process's."""
    arenas = ["approval_gate", "human_in_the_loop", "resume_safety", "flight_booking", "doc_review"]
    reporter = Count()
    made = evaluate_matrix(["vanilla"], arenas, out=tmp_path / "two", jobs=2, reporter=reporter)
    alone = evaluate_matrix(["vanilla"], arenas, out=tmp_path / "one")
    cell = lambda r: (r.arena, r.adapter, r.model)  # noqa: E731
    outcome = lambda runs: sorted(  # noqa: E731
        (cell(r), [(x.item_id, x.verdict, [c.passed for c in x.checks]) for x in r.results]) for r in runs)
    assert outcome(made) == outcome(alone) and len(made) == 9 and not made.failed
    assert len({r.meta["pid"] for r in made}) == 2, [(cell(r), r.meta["pid"]) for r in made]  # both ran cells
    # 9, or 8 had the first process already claimed its first cell when the second slot looked
    said = [m for level, m in reporter.said if level == "info" and m.startswith("job 2: another process for vanilla")]
    assert said in (["job 2: another process for vanilla, taking from the end the 9 cells not started yet"],
                    ["job 2: another process for vanilla, taking from the end the 8 cells not started yet"]), said
    assert reporter.results == sum(len(r.results) for r in alone)  # each cell's progress reported once


def test_a_framework_whose_processes_ended_is_not_helped_again(tmp_path: Path):
    """Cells left unclaimed by a job that failed are not retried by process after process: the run ends."""
    made = run_jobs({"no_such_adapter": 1.0}, ["approval_gate"], jobs=2, out=tmp_path, timeout=60, concurrency=None,
                    reporter=Count(), total=24, cells={"no_such_adapter": ["a", "b", "c"]})
    assert "job 1" in made.failed and set(made.failed) <= {"job 1", "job 2"} and not made.runs


def test_jobs_give_the_report_one_process_gives(tmp_path):
    one = arena_cli("matrix", *CELLS, "--out", "one", "--findings", "one/findings.md", cwd=tmp_path)
    assert one.returncode == 0, one.stderr[-2000:]
    two = arena_cli("matrix", *CELLS, "--jobs", "2", "--out", "two", "--findings", "two/findings.md", cwd=tmp_path)
    assert two.returncode == 0, two.stderr[-2000:]
    assert "2 jobs at a time over 2 frameworks" in two.stderr
    assert normalise((tmp_path / "two/findings.md").read_text()) == normalise((tmp_path / "one/findings.md").read_text())
    cells = lambda p: {(r["adapter"], k): c["text"] for r in json.loads(p.read_text())["rows"]  # noqa: E731
                       for k, c in r["cells"].items()}
    assert cells(tmp_path / "two/matrix.json") == cells(tmp_path / "one/matrix.json")
    runs = sorted(re.sub(r"^\d{8}-\d{6}-|-[0-9a-f]{4}$", "", p.name) for p in (tmp_path / "two/runs").iterdir())
    assert runs == sorted(re.sub(r"^\d{8}-\d{6}-|-[0-9a-f]{4}$", "", p.name) for p in (tmp_path / "one/runs").iterdir())
    assert len(runs) == 8 and not list((tmp_path / "two/runs").glob("shard-*.json"))


class Count(Silent):
    def __init__(self) -> None:
        self.said: list[tuple[str, str]] = []
        self.results = 0

    def say(self, message: str, level: str = "info") -> None:
        self.said.append((level, message))

    def result(self, key, result) -> None:  # noqa: ANN001
        self.results += 1


def test_a_job_that_fails_is_an_error_with_its_reason_and_the_other_jobs_runs_are_kept(tmp_path: Path):
    reporter = Count()
    made = run_jobs({"vanilla": 2.0, "no_such_adapter": 1.0}, ["approval_gate"],
                    jobs=2, out=tmp_path, timeout=60, concurrency=None, reporter=reporter, total=24)
    assert [r.adapter for r in made.runs] == ["vanilla", "vanilla"]  # both of approval_gate's profiles
    assert reporter.results == 24
    (job, why), = made.failed.items()
    assert job == "job 2" and "exit code 2: arena: error: unknown adapter 'no_such_adapter'" in why
    assert ("error", why) in reporter.said


def test_jobs_with_shard_or_runs_or_a_class_it_cannot_import_are_refused(tmp_path):
    r = arena_cli("matrix", "--jobs", "2", "--shard", "1/2", cwd=tmp_path)
    assert r.returncode == 2 and "--jobs" in r.stderr and "Traceback" not in r.stderr
    r = arena_cli("matrix", "--jobs", "2", "--runs", str(tmp_path), cwd=tmp_path)
    assert r.returncode == 2 and "--jobs" in r.stderr and "Traceback" not in r.stderr

    from tests.zoo import NeverPauses

    class Local(NeverPauses):  # defined in a function: no other process can import it
        pass

    with pytest.raises(UserError, match="must be importable"):
        evaluate_matrix([Local], ["approval_gate"], out=tmp_path, jobs=2)
