"""A sharded matrix: a deterministic partition balanced by cost, and a merge that equals the unsharded report
or names every cell a shard did not deliver."""

from __future__ import annotations

import json
import re

import pytest

from arena.errors import UserError
from arena.shard import Shard, assign, cell_key, missing, write_manifest

from .conftest import arena_cli
from .test_findings_committed import normalise

CELLS = ["-a", "vanilla", "--arena", "human_in_the_loop", "--arena", "approval_gate"]  # 4 cells, seconds each


def test_every_cell_goes_to_one_shard_the_same_way_everywhere_and_the_loads_are_balanced():
    costs = [(f"a/{i}/p", float(c)) for i, c in enumerate([36, 12, 12, 12, 16, 16, 14, 14, 17, 51, 3, 3, 3])]
    first = assign(costs, 3)
    assert first == assign(list(reversed(costs)), 3)  # the order cells are listed in does not matter
    assert set(first) == {k for k, _ in costs} and set(first.values()) == {1, 2, 3}
    loads = [sum(c for k, c in costs if first[k] == s) for s in (1, 2, 3)]
    assert max(loads) - min(loads) <= max(c for _, c in costs)  # greedy, costliest first: within one cell
    assert assign(costs, 1) == {k: 1 for k, _ in costs}


@pytest.mark.parametrize("text", ["0/2", "3/2", "2", "a/b", "1/0", ""])
def test_a_bad_shard_is_one_user_error(text):
    with pytest.raises(UserError, match="K/N"):
        Shard.parse(text)


def test_a_shard_that_did_not_finish_or_failed_a_cell_is_named_by_the_merge(tmp_path):
    plan = {cell_key("hitl", "x", "p"): 1, cell_key("hitl", "y", "p"): 2, cell_key("hitl", "z", "p"): 2,
            cell_key("gate", "x", "p"): 1}
    write_manifest(tmp_path, Shard(1, 2), plan, "started")  # killed while running: never rewritten
    write_manifest(tmp_path, Shard(2, 2), plan, "finished", declined={cell_key("hitl", "z", "p"): "no gate"},
                   failed={cell_key("hitl", "y", "p"): "environment could not be built"})
    gone = {m.cell: m for m in missing([tmp_path], delivered={cell_key("hitl", "x", "p")})}
    assert set(gone) == {"gate/x/p", "hitl/y/p"}  # the declined cell is a `not run` cell, not a gap
    assert gone["gate/x/p"].why == "the shard did not finish" and gone["gate/x/p"].shard == "1/2"
    assert gone["hitl/y/p"].why.startswith("failed: environment")
    assert missing([tmp_path / "nowhere"], set()) == []  # not sharded: nothing is missing


def test_merged_shards_give_the_unsharded_report_and_a_missing_shard_shows(tmp_path):
    whole = arena_cli("matrix", *CELLS, "--out", "whole", "--findings", "whole/findings.md", cwd=tmp_path)
    assert whole.returncode == 0, whole.stderr[-2000:]
    for k, n in ((1, 2), (2, 1), (3, 1)):  # 4 cells of equal cost over 3 shards
        r = arena_cli("matrix", *CELLS, "--shard", f"{k}/3", "--out", f"s{k}", cwd=tmp_path)
        assert r.returncode == 0, r.stderr[-2000:]
        manifest = json.loads((tmp_path / f"s{k}" / "runs" / f"shard-{k}-of-3.json").read_text())
        assert manifest["status"] == "finished" and len(manifest["plan"]) == 4 and len(manifest["mine"]) == n
        assert len([p for p in (tmp_path / f"s{k}" / "runs").iterdir() if p.is_dir()]) == n
    merged = arena_cli("matrix", "--runs", "s1/runs", "--runs", "s2/runs", "--runs", "s3/runs", "--out", "merged",
                       "--findings", "merged/findings.md", cwd=tmp_path)
    assert merged.returncode == 0, merged.stderr[-2000:]
    def strip(text: str) -> str:  # run directory names, and where the runs lie relative to the report
        return re.sub(r"\]\((?:\.\./s\d/)?runs/", "](runs/", normalise(text))

    assert strip((tmp_path / "merged/findings.md").read_text()) == strip((tmp_path / "whole/findings.md").read_text())
    cells = lambda p: {(r["adapter"], k): c["text"] for r in json.loads(p.read_text())["rows"]  # noqa: E731
                       for k, c in r["cells"].items()}
    assert cells(tmp_path / "merged/matrix.json") == cells(tmp_path / "whole/matrix.json")

    half = arena_cli("matrix", "--runs", "s1/runs", "--runs", "s3/runs", "--out", "half", "--findings",
                     "half/findings.md", cwd=tmp_path)  # shard 2 lost
    assert half.returncode == 1 and "1 planned cell(s) missing" in half.stderr
    report = (tmp_path / "half/matrix.md").read_text()
    assert "## Missing cells (1)" in report and "(shard 2/3: no manifest of this shard" in report
    assert "missing cells (planned" in (tmp_path / "half/findings.md").read_text()
    assert len(json.loads((tmp_path / "half/matrix.json").read_text())["missing"]) == 1


def test_shard_and_runs_together_are_refused(tmp_path):
    r = arena_cli("matrix", "--shard", "1/2", "--runs", str(tmp_path), cwd=tmp_path)
    assert r.returncode == 2 and "give one or the other" in r.stderr and "Traceback" not in r.stderr
    r = arena_cli("matrix", "--shard", "3/2", *CELLS, cwd=tmp_path)
    assert r.returncode == 2 and "K/N" in r.stderr and "Traceback" not in r.stderr


def test_more_shards_than_cells_is_one_line_not_a_memory_error(tmp_path):
    with pytest.raises(UserError, match="2 cell"):
        assign([("a/x/p", 1.0), ("a/y/p", 1.0)], 3)
    r = arena_cli("matrix", *CELLS, "--shard", "1/99999999999999", "--out", "s", cwd=tmp_path)
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr[-2000:]
    assert r.stderr.strip().splitlines() == ["arena: error: --shard K/99999999999999: the matrix has 4 cell(s) to "
                                             "share; give N <= 4"]
