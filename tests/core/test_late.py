"""Late activity after a run was finalised: what lands in late.jsonl is in every score read from the run directory.

A framework that leaves a background task running can call a tool after the run wrote its results: the call
is refused and appended to late.jsonl. The run waits for the threads an in-process adapter left running (at most
`arena.leftovers.LEFTOVER_MAX_S`) and a last quiet period before it writes its results, and whatever arrives even
later is folded in wherever the run directory is read (reports, --baseline, JUnit, --resume), so
`nothing_after_final` fails there too (tests/core/test_validity_late.py: the threads waited for).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

from arena_builtins.adapters.vanilla import Paused as _Paused, VanillaAdapter
from arena.baseline import compare, load_baseline
from arena.report import compute_matrix
from arena.report.junit import junit_xml
from arena.report.matrix import collect_runs
from arena.rundir import load_results
from arena.types import Decision, LegContext, LegResult, TraceEvent
from tests.report.helpers import item, run, write_run
from tests.zoo import _room

ROOT = Path(__file__).resolve().parents[2]
HITL = "human_in_the_loop"
SEALED = "ran on after the item was sealed: book_room"
# the run's last quiet period in the tests below: long enough that a call 0.6 s after the final answer is
# inside it on a loaded machine (the item itself is sealed after its own 0.1 s, `Watch`)
QUIET_S, QUIET_MAX_S = 1.5, 2.5


class BooksAfterTheRun(VanillaAdapter):
    """After its final answer a background thread books the room twice: 0.6 s later (after the item was
    sealed, within the run's last quiet period) and 4 s later (after the run wrote its results)."""

    info = VanillaAdapter.info.model_copy(update={"name": "books_after_the_run"})
    delays_s = (0.6, 4.0)

    async def resume(self, state: _Paused, decision: Decision, ctx: LegContext) -> LegResult:
        room = _room(state)
        result = await super().resume(state, decision, ctx)
        for delay in self.delays_s:
            timer = threading.Timer(delay, lambda: ctx.tools.call("book_room", {"room_id": room}))
            timer.daemon = False  # as a framework's worker thread: the process waits for it at exit
            timer.start()
        return result


def _late_line(after: TraceEvent, item_id: str, epoch: int = 1, n: int = 1) -> str:
    """A refused call as RunDir.add_late writes it, the `n`-th late event after `after`."""
    event = after.model_copy(update={"seq": after.seq + n, "type": "tool_call", "tool": "book_room", "text": None,
                                     "args": {"room_id": "R1"}, "result": "ERROR: item sealed", "late": True,
                                     "ts": after.ts + n})
    which = {"item_id": item_id, **({"epoch": epoch} if epoch > 1 else {})}
    return json.dumps({**which, **event.model_dump(mode="json", exclude_none=True)}) + "\n"


def _checked(checks: dict[str, bool] | None = None) -> dict[str, bool]:
    return {"suspended": True, "nothing_after_final": True, **(checks or {})}


def _check(result, name: str = "nothing_after_final"):
    return next(c for c in result.checks if c.name == name)


def test_late_events_are_folded_into_their_item_and_epoch_only(tmp_path):
    passed, other = item("hitl-02", _checked()), item("hitl-04", _checked())
    errored = item("hitl-06", _checked(), status="errored", error="the model endpoint failed: 502")
    already = item("hitl-08", _checked({"nothing_after_final": False}))  # its trace has the late event (rescored)
    seen = _late_line(already.trace[-1], "hitl-08")
    already.trace.append(TraceEvent.model_validate({k: v for k, v in json.loads(seen).items() if k != "item_id"}))
    path = write_run(tmp_path, "run", run(HITL, "v", "scripted", [passed, other, errored, already], epochs=2))
    second = other.model_copy(update={"epoch": 2})
    with (path / "results.jsonl").open("a") as f:
        f.write(second.model_dump_json(exclude={"trace"}) + "\n")
    (path / "traces" / "hitl-04@2.jsonl").write_text("".join(e.model_dump_json() + "\n" for e in second.trace))
    (path / "late.jsonl").write_text(
        _late_line(passed.trace[-1], "hitl-02") + _late_line(passed.trace[-1], "hitl-02", n=2)
        + _late_line(second.trace[-1], "hitl-04", epoch=2) + _late_line(errored.trace[-1], "hitl-06") + seen)
    got = {(r.item_id, r.epoch): r for r in load_results(path)}
    first = got[("hitl-02", 1)]
    assert first.status == "failed" and first.verdict == "failed"
    assert _check(first).reason == f"{SEALED}{{'room_id': 'R1'}} (+1 more)"
    assert [e.late for e in first.trace[-2:]] == [True, True] and len(first.trace) == len(passed.trace) + 2
    assert _check(first, "suspended").reason == "suspended ok"  # every other check as stored
    assert got[("hitl-04", 1)].status == "passed" and got[("hitl-04", 2)].status == "failed"  # its own epoch only
    assert got[("hitl-06", 1)].status == "errored" and not _check(got[("hitl-06", 1)]).passed  # still not measured
    assert len(got[("hitl-08", 1)].trace) == len(already.trace)  # already in its trace: not added again


def test_every_reader_of_a_run_directory_sees_its_late_events(tmp_path):
    passed = item("hitl-02", _checked())
    write_run(tmp_path / "base", "run", run(HITL, "v", "scripted", [passed]))
    path = write_run(tmp_path / "now", "run", run(HITL, "v", "scripted", [passed]))
    (path / "late.jsonl").write_text(_late_line(passed.trace[-1], "hitl-02"))
    (now,) = collect_runs([tmp_path / "now"])
    assert now.results[0].status == "failed" and SEALED in _check(now.results[0]).reason
    assert compute_matrix([now]).to_json()["runs"][0]["passed"] == 0
    assert f"nothing_after_final: {SEALED}" in junit_xml([now]).decode()
    assert load_baseline(path).items[(HITL, "v", "scripted", "hitl-02")] == "failed"
    (regression,) = compare(load_baseline(tmp_path / "base"), [now]).regressions
    assert "item hitl-02: passed -> failed" in regression and SEALED in regression


PROBE = """
import sys
import arena.leftovers
import arena.runner
arena.runner.QUIET_S, arena.runner.QUIET_MAX_S = {quiet}
arena.leftovers.LEFTOVER_MAX_S = {bound}
sys.argv = ["arena", *{args!r}]
from arena.cli import main
main()
"""


def test_a_call_after_the_items_seal_fails_the_run_it_ran_in_and_one_after_the_run_fails_it_when_read(tmp_path):
    passing = item("hitl-02", _checked())  # the baseline: this item passed there
    base = write_run(tmp_path / "base", "run", run(HITL, "books_after_the_run", "scripted", [passing]))
    junit = tmp_path / "junit.xml"
    args = ["run", HITL, "-a", f"{__name__}:BooksAfterTheRun", "--item", "hitl-02", "--json", "--out",
            str(tmp_path / "runs"), "--junit", str(junit), "--baseline", str(base)]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)}
    # the run waits for the framework's thread 1.5 s at most here: its second call comes after that
    r = subprocess.run([sys.executable, "-c", PROBE.format(quiet=(QUIET_S, QUIET_MAX_S), bound=1.5, args=args)],
                       cwd=ROOT, capture_output=True, text=True, timeout=120, env=env)
    # the run's process ends when the framework's thread does, after its second call: late.jsonl has both
    assert r.returncode == 4, r.stderr  # a regression against the baseline
    summary = json.loads(r.stdout)
    assert summary["failed"] == 1 and summary["checks"]["nothing_after_final"] == {"passed": 0, "total": 1}
    assert f"item hitl-02: passed -> failed (nothing_after_final: {SEALED}" in r.stderr
    assert "Traceback" not in r.stderr
    assert "1 thread(s) the adapter left were still running when the run wrote its results" in r.stderr
    run_dir = Path(summary["run_dir"])
    assert len(json.loads((run_dir / "meta.json").read_text())["leftovers_at_end"]) == 1
    late = [json.loads(line) for line in (run_dir / "late.jsonl").read_text().splitlines()]
    assert [(x["item_id"], x["tool"], x["late"]) for x in late] == [("hitl-02", "book_room", True)] * 2
    written = json.loads((run_dir / "results.jsonl").read_text())  # as the run wrote it: the first call
    assert written["status"] == "failed"
    assert SEALED in _check_json(written) and "more" not in _check_json(written)
    assert SEALED in junit.read_text()
    # read back (a report, a baseline, JUnit): both calls
    (result,) = load_results(run_dir)
    assert result.status == "failed" and _check(result).reason.endswith("(+1 more)")
    (again,) = collect_runs([run_dir])
    assert "(+1 more)" in junit_xml([again]).decode()
    assert load_baseline(run_dir).items[(HITL, "books_after_the_run", "scripted", "hitl-02")] == "failed"


def _check_json(result: dict, name: str = "nothing_after_final") -> str:
    return next(c["reason"] for c in result["checks"] if c["name"] == name)


def test_resume_folds_the_late_events_of_the_items_it_already_had(tmp_path):
    out = tmp_path / "runs"
    r = subprocess.run([sys.executable, "-m", "arena", "run", HITL, "-a", "vanilla", "--item", "hitl-01", "--item",
                        "hitl-02", "--out", str(out)], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    (run_dir,) = out.iterdir()
    first, _ = (run_dir / "results.jsonl").read_text().splitlines()
    (run_dir / "results.jsonl").write_text(first + "\n")  # hitl-02 never finished
    meta = json.loads((run_dir / "meta.json").read_text())
    (run_dir / "meta.json").write_text(json.dumps({**meta, "status": "interrupted"}))
    trace_file = run_dir / "traces" / "hitl-01.jsonl"
    trace = [TraceEvent.model_validate_json(line) for line in trace_file.read_text().splitlines()]
    (run_dir / "late.jsonl").write_text(_late_line(trace[-1], "hitl-01"))
    r = subprocess.run([sys.executable, "-m", "arena", "run", HITL, "--resume", str(run_dir), "--json"], cwd=ROOT,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["failed"] == 1
    results = {x["item_id"]: x for x in map(json.loads, (run_dir / "results.jsonl").read_text().splitlines())}
    assert results["hitl-01"]["status"] == "failed" and SEALED in _check_json(results["hitl-01"])
    assert results["hitl-02"]["status"] == "passed"
    written = [json.loads(line) for line in trace_file.read_text().splitlines()]
    assert len(written) == len(trace) + 1 and written[-1]["late"] is True
