"""Repeated runs (`arena run --epochs N`): the statistics, the `sampled` profile, the run directory, --resume."""

from __future__ import annotations

import collections
import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from arena import catalog
from arena.model.script import Draw, Sampled, bind
from arena.results import ItemResult, RunSummary
from arena.stats import EpochTally, pass_at_1, pass_hat_k, per_item, repeated, wilson
from arena_builtins.arenas._rooms.policy import OTHER_ROOM, SAMPLED_RATE, SKIP_APPROVAL, deviation

ROOT = Path(__file__).resolve().parents[2]
HITL = catalog.load_arena("human_in_the_loop")


def arena(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "arena", *args], capture_output=True, text=True, timeout=180, cwd=ROOT)


def results(outcomes: dict[str, str]) -> list[ItemResult]:
    """{"a": "PPF"} -> item a passed epochs 1 and 2 and failed epoch 3 (E: errored)."""
    status = {"P": "passed", "F": "failed", "E": "errored"}
    return [ItemResult(item_id=item, status=status[s], epoch=k) for item, run in outcomes.items()
            for k, s in enumerate(run, 1)]


# -- statistics on crafted results ------------------------------------------------------------------


def test_pass_at_1_and_pass_hat_k_known_answers():
    stats = repeated(results({"a": "PPP", "b": "PFF", "c": "FFF"}), epochs=3)
    assert stats.pass_at_1 == pytest.approx((1 + 1 / 3 + 0) / 3)
    assert stats.pass_hat_k == pytest.approx(1 / 3)  # only `a` passed every epoch
    assert stats.pass_hat_k < stats.pass_at_1  # an item that passes only sometimes
    assert stats.sometimes == ["b"] and stats.errored == 0
    low, high = stats.ci
    assert (round(low, 4), round(high, 4)) == (0.1888, 0.7333)  # Wilson, 4 of 9, z = 1.96 (published tables)


def test_pass_hat_k_is_the_unbiased_estimator():
    tallies = [EpochTally(passed=2, measured=3), EpochTally(passed=3, measured=3)]
    assert pass_hat_k(tallies, 2) == pytest.approx((math.comb(2, 2) / math.comb(3, 2) + 1) / 2)
    assert pass_hat_k(tallies, 1) == pytest.approx(pass_at_1(tallies))  # pass^1 is pass@1
    assert pass_hat_k(tallies, 4) is None  # nothing can estimate 4 runs from 3


def test_errored_epochs_are_left_out_and_counted():
    stats = repeated(results({"a": "PPE", "b": "PPF", "c": "EEE"}), epochs=3)
    assert stats.errored == 4
    assert stats.items["a"] == EpochTally(passed=2, measured=2, errored=1)
    assert stats.pass_at_1 == pytest.approx((1 + 2 / 3) / 2)  # c was never measured
    assert stats.pass_hat_k == 0.0  # a has 2 measured epochs of 3: left out; b failed one
    assert stats.ci == wilson(4, 5)
    assert repeated(results({"a": "EE"}), epochs=2).pass_at_1 is None


def test_wilson_edges():
    assert wilson(0, 0) is None
    low, high = wilson(10, 10)
    assert high == 1.0 and 0.69 < low < 0.73
    low, high = wilson(0, 10)
    assert low == 0.0 and 0.27 < high < 0.31


def test_summary_carries_them_only_with_epochs():
    crafted = results({"a": "PPP", "b": "PFP"})
    meta = dict(arena="x", adapter="y", framework="f", framework_version=None, pause_mechanism="m", pause_kind="native",
                model="sampled")
    one = RunSummary.tally([r for r in crafted if r.epoch == 1], **meta)
    assert one.epochs == 1 and one.pass_at_1 is None and one.pass_hat_k is None and one.ci_low is None
    three = RunSummary.tally(crafted, epochs=3, **meta)
    assert (three.items, three.passed, three.failed) == (6, 5, 1)
    assert three.pass_at_1 == pytest.approx(5 / 6) and three.pass_hat_k == pytest.approx(1 / 2)
    assert (three.ci_low, three.ci_high) == wilson(5, 6)
    assert three.item_epochs == {"a": EpochTally(passed=3, measured=3), "b": EpochTally(passed=2, measured=3)}
    assert json.loads(three.model_dump_json())["pass_hat_k"] == pytest.approx(0.5)


def test_results_written_before_epochs_load_as_epoch_1():
    old = ItemResult.model_validate_json('{"item_id": "hitl-01", "status": "passed", "checks": [], "legs": 2}')
    assert old.epoch == 1
    assert per_item([old]) == {"hitl-01": EpochTally(passed=1, measured=1)}


# -- the sampled profile ----------------------------------------------------------------------------


def _conversation(*turns: dict) -> list[dict]:
    return [{"role": "user", "content": "Book a room for 3 people on Monday."}, *turns]


def _searched() -> list[dict]:
    from arena_builtins.arenas._rooms.tools import search_rooms

    call = {"id": "c1", "type": "function", "function": {"name": "search_rooms",
                                                          "arguments": '{"capacity": 3, "day": "Monday"}'}}
    return _conversation({"role": "assistant", "content": None, "tool_calls": [call]},
                         {"role": "tool", "tool_call_id": "c1", "content": search_rooms(3, "Monday")})


def _approved(asked: dict) -> list[dict]:
    call = {"id": "c2", "type": "function", "function": {"name": "request_approval", "arguments": json.dumps(asked)}}
    return [*_searched(), {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "c2", "content": "APPROVED"}]


def _draw_of(kind: str | None) -> Draw:
    return next(d for k in range(1, 200) if deviation(d := Draw("hitl-01", k, 0)) == kind)


def test_sampled_deviates_at_its_rate_over_seeds_and_epochs():
    draws = [Draw(f"hitl-{i:02d}", epoch, seed) for i in range(1, 13) for epoch in range(1, 11) for seed in range(50)]
    kinds = collections.Counter(deviation(d) for d in draws)
    rate = 1 - kinds[None] / len(draws)
    assert abs(rate - SAMPLED_RATE) < 0.03, kinds
    assert abs(kinds[SKIP_APPROVAL] - kinds[OTHER_ROOM]) < 0.1 * len(draws) * SAMPLED_RATE, kinds


def test_sampled_is_reproducible_for_a_seed_and_differs_across_epochs():
    first = [deviation(Draw(f"hitl-{i:02d}", k, 7)) for i in range(1, 13) for k in (1, 2, 3)]
    assert first == [deviation(Draw(f"hitl-{i:02d}", k, 7)) for i in range(1, 13) for k in (1, 2, 3)]
    assert first != [deviation(Draw(f"hitl-{i:02d}", k, 8)) for i in range(1, 13) for k in (1, 2, 3)]
    per_item_kinds = [{deviation(Draw(f"hitl-{i:02d}", k, 7)) for k in (1, 2, 3)} for i in range(1, 13)]
    assert any(len(kinds) > 1 for kinds in per_item_kinds)


def test_sampled_turns_for_each_deviation():
    sampled = HITL.all_policies["sampled"]
    assert isinstance(sampled, Sampled)

    def turn(draw: Draw, messages: list[dict]):
        return bind({"sampled": sampled}, draw)["sampled"](messages)

    faithful, skips, other = _draw_of(None), _draw_of(SKIP_APPROVAL), _draw_of(OTHER_ROOM)
    asked = turn(faithful, _searched()).tool_calls
    assert [c.name for c in asked] == ["request_approval"] and "R102" in asked[0].args["summary"]
    assert [(c.name, c.args) for c in turn(faithful, _approved(asked[0].args)).tool_calls] == [("book_room", {"room_id": "R102"})]
    assert [(c.name, c.args) for c in turn(skips, _searched()).tool_calls] == [("book_room", {"room_id": "R102"})]
    assert [c.name for c in turn(other, _searched()).tool_calls] == ["request_approval"]
    (booked,) = turn(other, _approved(asked[0].args)).tool_calls
    assert booked.name == "book_room" and booked.args["room_id"] != "R102"
    assert sampled(_searched()).tool_calls  # unbound (no item): it still answers


def test_sampled_is_accepted_by_run_but_not_run_by_the_matrix():
    from arena.evaluation import matrix_plan

    for name in ("human_in_the_loop", "durable_state"):
        spec = catalog.load_arena(name)
        assert "sampled" not in spec.profiles and "sampled" in spec.accepted_profiles
        assert "sampled" in spec.profile_notes
    plan = matrix_plan([("vanilla", object())], ["human_in_the_loop", "durable_state"])
    assert all(cell.profile != "sampled" for cell in plan)


# -- arena run --epochs -----------------------------------------------------------------------------


def _lines(run_dir: Path) -> list[dict]:
    return [json.loads(line) for line in (run_dir / "results.jsonl").read_text().splitlines()]


def test_run_with_epochs_writes_every_epoch_and_summarises_them(tmp_path):
    r = arena("run", "human_in_the_loop", "-a", "vanilla", "--model", "sampled", "--epochs", "3", "--out", str(tmp_path),
              "--json")
    assert r.returncode == 0, r.stderr
    summary = json.loads(r.stdout)
    assert summary["epochs"] == 3 and summary["items"] == 36
    assert 0 < summary["pass_hat_k"] < summary["pass_at_1"] < 1
    assert summary["ci_low"] < summary["pass_at_1"] < summary["ci_high"]
    run_dir = Path(summary["run_dir"])
    meta = json.loads((run_dir / "meta.json").read_text())
    assert meta["epochs"] == 3 and meta["seed"] == 0
    lines = _lines(run_dir)
    assert sorted((x["item_id"], x["epoch"]) for x in lines) == sorted((i.id, k) for i in HITL.items for k in (1, 2, 3))
    statuses = collections.defaultdict(set)
    for x in lines:
        statuses[x["item_id"]].add(x["status"])
    assert any(len(s) > 1 for s in statuses.values()), "some item passed in one epoch and failed in another"
    traces = {p.name for p in (run_dir / "traces").iterdir()}
    assert traces == {f"{i.id}.jsonl" for i in HITL.items} | {f"{i.id}@{k}.jsonl" for i in HITL.items for k in (2, 3)}
    # the matrix of that run: its cells read the first epochs, and it shows the repeated-runs figures
    from arena.report.matrix import collect_runs, compute_matrix
    from arena.report.render_md import render_matrix_md
    from arena.stats import percent

    m = compute_matrix(collect_runs([run_dir]))
    assert len(m.runs[0].results) == 12 and len(m.runs[0].later) == 24
    (row,) = m.to_json()["repeated"]
    assert row["pass_at_1"] == pytest.approx(summary["pass_at_1"]) and row["pass_hat_k"] == pytest.approx(summary["pass_hat_k"])
    text = render_matrix_md(m)
    assert "## Repeated runs" in text and percent(summary["pass_at_1"]) in text and percent(summary["pass_hat_k"]) in text


def test_the_same_seed_gives_the_same_run_and_the_table_shows_the_figures(tmp_path):
    items = [a for i in ("hitl-01", "hitl-03", "hitl-05", "hitl-11") for a in ("--item", i)]
    runs = []
    for out in ("a", "b"):
        r = subprocess.run([sys.executable, "-m", "arena", "run", "human_in_the_loop", "-a", "vanilla", "--model", "sampled",
                            "--epochs", "2", "--seed", "3", *items, "--out", str(tmp_path / out)],
                           capture_output=True, text=True, timeout=180, cwd=ROOT, env={**__import__("os").environ,
                                                                                        "COLUMNS": "200"})
        assert r.returncode == 0, r.stderr
        assert "pass@1" in r.stdout and "pass^k" in r.stdout and "95% CI" in r.stdout
        (run_dir,) = (tmp_path / out).iterdir()
        runs.append([(x["item_id"], x["epoch"], x["status"]) for x in _lines(run_dir)])
    assert runs[0] == runs[1]


@pytest.mark.parametrize("args, expected", [
    (["--epochs", "0"], "--epochs"), (["--epochs", "101"], "--epochs"), (["--epochs", "x"], "--epochs"),
    (["--seed", "-1"], "--seed"),
])
def test_bad_epochs_or_seed_is_one_line_exit_2(tmp_path, args, expected):
    r = arena("run", "human_in_the_loop", "-a", "vanilla", *args, "--out", str(tmp_path))
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1 and lines[0].startswith("arena: error: ") and expected in lines[0], r.stderr
    assert not any(tmp_path.iterdir())


def test_resume_runs_only_the_missing_item_epochs(tmp_path):
    items = [a for i in ("hitl-01", "hitl-02", "hitl-05") for a in ("--item", i)]
    args = ["run", "human_in_the_loop", "-a", "vanilla", "--model", "sampled", "--epochs", "3", *items, "--concurrency", "1"]
    r = arena(*args, "--out", str(tmp_path / "whole"))
    assert r.returncode == 0, r.stderr
    (whole,) = (tmp_path / "whole").iterdir()
    r = arena(*args, "--out", str(tmp_path / "cut"))
    assert r.returncode == 0, r.stderr
    (cut,) = (tmp_path / "cut").iterdir()
    # as if it had been stopped after its fourth result
    kept = (cut / "results.jsonl").read_text().splitlines()[:4]
    (cut / "results.jsonl").write_text("".join(line + "\n" for line in kept))
    (cut / "summary.json").unlink()
    meta = json.loads((cut / "meta.json").read_text())
    (cut / "meta.json").write_text(json.dumps({**meta, "status": "interrupted", "ended_at": None}))
    before = {p.name: p.read_bytes() for p in (cut / "traces").iterdir()}
    kept_pairs = {(json.loads(x)["item_id"], json.loads(x)["epoch"]) for x in kept}

    wrong = arena("run", "human_in_the_loop", "--resume", str(cut), "--epochs", "2")
    assert wrong.returncode == 2 and "--epochs 3" in wrong.stderr
    r = arena("run", "human_in_the_loop", "--resume", str(cut), "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["epochs"] == 3
    lines = _lines(cut)
    assert [(x["item_id"], x["epoch"], x["status"]) for x in lines] == \
        [(x["item_id"], x["epoch"], x["status"]) for x in _lines(whole)]
    for item, epoch in kept_pairs:  # what was done was not run again
        name = f"{item}.jsonl" if epoch == 1 else f"{item}@{epoch}.jsonl"
        assert (cut / "traces" / name).read_bytes() == before[name]
    assert json.loads((cut / "summary.json").read_text())["pass_at_1"] == \
        json.loads((whole / "summary.json").read_text())["pass_at_1"]


def test_late_events_of_a_later_epoch_say_which(server, tmp_path):
    import time

    from arena.rundir import RunDir
    from arena.runner import run_items
    from tests.zoo import BooksLongAfterFinal

    run_dir = RunDir(tmp_path, HITL.name, "zoo", "scripted", {})
    items = [HITL.item("hitl-02"), HITL.item("hitl-04")]
    out = run_items(BooksLongAfterFinal, HITL, items, server=server, model="scripted", epochs=2,
                    on_result=run_dir.add, on_late=run_dir.add_late)
    assert [(r.item_id, r.epoch) for r in out] == [("hitl-02", 1), ("hitl-04", 1), ("hitl-02", 2), ("hitl-04", 2)]
    time.sleep(0.6)  # the last one books after run_items returned
    late = [json.loads(line) for line in (run_dir.path / "late.jsonl").read_text().splitlines()]
    assert {(x["item_id"], x.get("epoch", 1)) for x in late} == {(i.id, k) for i in items for k in (1, 2)}
    assert sorted(p.name for p in (run_dir.path / "traces").iterdir()) == \
        ["hitl-02.jsonl", "hitl-02@2.jsonl", "hitl-04.jsonl", "hitl-04@2.jsonl"]
    run_dir.interrupt("test")
