"""`arena matrix --jobs N`: the matrix as N processes of this machine gives the report one process gives, and
a job that fails is an error of the run, never a silent gap."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from arena.errors import UserError
from arena.evaluation import Silent, evaluate_matrix
from arena.jobs import groups, run_jobs

from .conftest import arena_cli
from .test_findings_committed import normalise

CELLS = ["-a", "vanilla", "-a", "langgraph", "--arena", "human_in_the_loop", "--arena", "approval_gate"]


def test_adapters_are_grouped_deterministically_by_cost_in_plan_order():
    costs = {"vanilla": 60.0, "langgraph": 90.0, "crewai": 120.0, "langgraph@1.0.10": 100.0, "agno": 30.0}
    two = groups(costs, 2)
    backwards = groups(dict(reversed(list(costs.items()))), 2)  # the order adapters are listed in does not matter
    assert sorted(map(sorted, two)) == sorted(map(sorted, backwards))
    assert sorted(n for g in two for n in g) == sorted(costs) and len(two) == 2
    loads = [sum(costs[n] for n in g) for g in two]
    assert abs(loads[0] - loads[1]) <= max(costs.values())
    for g in two:  # each group keeps the plan's order
        assert g == [n for n in costs if n in g]
    assert groups({"vanilla": 1.0}, 4) == [["vanilla"]]  # never an empty job


def test_jobs_give_the_report_one_process_gives(tmp_path):
    one = arena_cli("matrix", *CELLS, "--out", "one", "--findings", "one/findings.md", cwd=tmp_path)
    assert one.returncode == 0, one.stderr[-2000:]
    two = arena_cli("matrix", *CELLS, "--jobs", "2", "--out", "two", "--findings", "two/findings.md", cwd=tmp_path)
    assert two.returncode == 0, two.stderr[-2000:]
    assert "2 jobs: " in two.stderr
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
