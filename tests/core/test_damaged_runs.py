"""A failure of the world while a run writes (a full disk), and run directories damaged since: each is one line
or one named item, never a traceback, an extra item or a whole run lost; `--resume` runs again what cannot be read.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from arena.report.matrix import collect_runs
from arena.results import ItemResult, RunSummary
from arena.rundir import RunDir, to_run_again

ROOT = Path(__file__).resolve().parents[2]
ITEMS = ["hitl-01", "hitl-02", "hitl-03"]


def arena(*args: str, timeout: float = 180) -> subprocess.CompletedProcess:
    env = {**os.environ, "COLUMNS": "500"}  # messages naming long temporary paths stay on one line
    return subprocess.run([sys.executable, "-m", "arena", *args], capture_output=True, text=True, timeout=timeout,
                          cwd=ROOT, env=env)


def _lines(run_dir: Path) -> dict[str, str]:
    """results.jsonl's lines by item (each item once)."""
    lines = (run_dir / "results.jsonl").read_text().splitlines()
    by_item = {json.loads(line)["item_id"]: line for line in lines}
    assert len(by_item) == len(lines), lines
    return by_item


def _fill(mount: Path, leave: int) -> Path:
    """A file taking all but `leave` bytes of the file system."""
    ballast = mount / "ballast"
    st = os.statvfs(mount)
    ballast.write_bytes(b"x" * max(0, st.f_bavail * st.f_frsize - leave))
    return ballast


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 2 MiB tmpfs: a disk that fills for real (ENOSPC from the kernel), without filling the machine's."""
    mount = tmp_path / "disk"
    mount.mkdir()
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a small tmpfs needs root and mount(8)")
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mount)], capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip(f"mounting a small tmpfs is not permitted here: {r.stderr.strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], capture_output=True)


def test_a_full_disk_is_one_line_the_run_interrupted_nothing_staged_and_resume_finishes_it(small_disk):
    out = small_disk / "runs"
    # full before the run directory exists: one line naming where, exit 3, no hidden staged directory left
    ballast = _fill(small_disk, 0)
    r = arena("run", "human_in_the_loop", "-a", "vanilla", "--out", str(out))
    assert r.returncode == 3, r.stderr
    assert r.stderr.strip().splitlines() == [
        f"arena: error: cannot create a run directory under {out}: No space left on device; no run directory was made"]
    assert list(out.iterdir()) == []  # nothing staged (a hidden folder) left behind
    ballast.unlink()

    # full during the run: room for the run directory and a few items, not for all 12
    ballast = _fill(small_disk, 48 * 1024)
    r = arena("run", "human_in_the_loop", "-a", "vanilla", "--out", str(out), "--concurrency", "2")
    assert r.returncode == 3, r.stderr
    (run_dir,) = out.iterdir()
    assert r.stderr.strip().splitlines() == [
        f"arena: error: cannot write the run directory {run_dir}: No space left on device; marked interrupted; free "
        "space, then `arena run <arena> --resume <run directory>` runs only its missing items"], r.stderr
    assert "Traceback" not in r.stderr
    meta = json.loads((run_dir / "meta.json").read_text())
    assert meta["status"] == "interrupted" and meta["interrupted_by"] == "No space left on device", meta
    assert not [p for p in run_dir.rglob("*") if p.name.endswith(".tmp") or p.name.startswith(".")]
    before = _lines(run_dir)  # whole lines only: the write cut short was cut off
    assert 0 < len(before) < 12, before.keys()
    assert all(json.loads(line)["status"] == "passed" for line in before.values())

    ballast.unlink()  # space freed: --resume runs only the missing items, into the same directory
    r = arena("run", "human_in_the_loop", "--resume", str(run_dir))
    assert r.returncode == 0, r.stderr
    after = _lines(run_dir)
    assert len(after) == 12 and all(json.loads(line)["status"] == "passed" for line in after.values())
    assert {item: after[item] for item in before} == before  # the items it had were not run again
    meta = json.loads((run_dir / "meta.json").read_text())
    assert meta["status"] == "complete" and len(meta["resumed"]) == 1


def test_on_a_full_disk_meta_json_is_still_marked_interrupted_and_nothing_half_written_stays(small_disk):
    from arena.rundir import mark_open_runs_interrupted
    from arena.types import TraceEvent

    run = RunDir(small_disk / "runs", "a", "b", "c", {"items": ["one"]})
    _fill(small_disk, 0)  # not a page left: no new file can be made
    result = ItemResult(item_id="one", status="passed",
                        trace=[TraceEvent(seq=0, leg=0, type="final", text="x" * 10_000)])
    with pytest.raises(Exception) as raised:
        run.add(result)
    assert type(raised.value).__name__ == "CannotWrite" and str(raised.value) == \
        f"cannot write the run directory {run.path}: No space left on device"
    assert sorted(p.name for p in run.path.rglob("*")) == ["meta.json", "results.jsonl", "traces"]
    assert (run.path / "results.jsonl").read_text() == ""
    marked, unmarked = mark_open_runs_interrupted("No space left on device")
    # this disk's run only: another test of this worker process may have left a run of its own open
    mine = [[p for p in paths if small_disk in p.parents] for paths in (marked, unmarked)]
    assert mine == [[run.path], []]  # meta.json rewritten in the space it already had
    meta = json.loads((run.path / "meta.json").read_text())
    assert meta["status"] == "interrupted" and meta["interrupted_by"] == "No space left on device"


# -- run directories damaged since they were written ------------------------------------------------------

@pytest.fixture(scope="module")
def a_run(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("damaged-runs")
    r = arena("run", "human_in_the_loop", "-a", "vanilla", *[a for i in ITEMS for a in ("--item", i)],
              "--out", str(out))
    assert r.returncode == 0, r.stderr
    (run_dir,) = out.iterdir()
    return run_dir


def _garbage_for_hitl_02(run_dir: Path) -> None:
    lines = (run_dir / "results.jsonl").read_text().splitlines()
    (run_dir / "results.jsonl").write_text("\n".join("#$%^ not a result" if '"hitl-02"' in line else line
                                                     for line in lines) + "\n")


def _trace_is_a_directory(run_dir: Path) -> None:
    (run_dir / "traces" / "hitl-02.jsonl").unlink()
    (run_dir / "traces" / "hitl-02.jsonl").mkdir()


def _torn_late_line(run_dir: Path) -> None:
    with (run_dir / "late.jsonl").open("a") as f:
        f.write('{"item_id": "hitl-02", "seq": 40, "leg": 1, "type": "tool_ca\n')


def _torn_result_line(run_dir: Path) -> None:
    lines = (run_dir / "results.jsonl").read_text().splitlines()
    (run_dir / "results.jsonl").write_text("\n".join(line[: len(line) // 2] if '"hitl-02"' in line else line
                                                     for line in lines) + "\n")


@pytest.mark.parametrize("damage, error, warning", [
    (_garbage_for_hitl_02, "no result: results.jsonl line 2 is torn or corrupt",
     "results.jsonl: line 2 is torn or corrupt; 1 line(s) name no item; the items without a result (hitl-02) are "
     "reported as not measured"),
    (_trace_is_a_directory, "traces/hitl-02.jsonl cannot be read (Is a directory)",
     "traces/hitl-02.jsonl: cannot be read (Is a directory); its item is reported as not measured"),
    (_torn_late_line, "late.jsonl line 1 is torn or corrupt",
     "late.jsonl: line 1 is torn or corrupt; the item it names is reported as not measured"),
    (_torn_result_line, "results.jsonl line 2 is torn or corrupt",
     "results.jsonl: line 2 is torn or corrupt; its item is reported as not measured"),
], ids=["garbage-results-line", "trace-is-a-directory", "torn-late-line", "complete-run-torn-result-line"])
def test_a_damaged_item_is_named_the_others_kept_and_resume_runs_only_it_again(tmp_path, a_run, damage, error,
                                                                                 warning):
    root = tmp_path / "runs"
    run_dir = root / a_run.name
    shutil.copytree(a_run, run_dir)
    good = _lines(run_dir)
    damage(run_dir)

    warnings: list[str] = []
    (run,) = collect_runs([root], on_skip=warnings.append)  # the run directory is kept, never skipped
    got = {r.item_id: r for r in run.results}
    assert sorted(got) == ITEMS  # no extra item for a line that names none
    assert (got["hitl-02"].status, got["hitl-02"].error) == ("errored", error)
    assert [got[i].status for i in ("hitl-01", "hitl-03")] == ["passed", "passed"]
    assert [w.replace(str(run_dir) + "/", "") for w in warnings] == [warning]
    assert to_run_again(run_dir) == {"hitl-02": error}

    r = arena("run", "human_in_the_loop", "--resume", str(run_dir))  # a complete run: not "nothing to resume"
    assert r.returncode == 0, r.stderr
    assert "nothing to resume" not in r.stderr + r.stdout
    assert f"1 item(s) cannot be read back; running them again: hitl-02 ({error})" in " ".join(r.stderr.split())
    after = _lines(run_dir)
    assert sorted(after) == ITEMS and {i: after[i] for i in ("hitl-01", "hitl-03")} == \
        {i: good[i] for i in ("hitl-01", "hitl-03")}  # the others were not run again
    warnings.clear()
    (run,) = collect_runs([root], on_skip=warnings.append)
    assert [r.status for r in run.results] == ["passed"] * 3 and warnings == []
    assert to_run_again(run_dir) == {}
    r = arena("run", "human_in_the_loop", "--resume", str(run_dir))
    assert r.returncode == 0 and "is complete: nothing to resume" in r.stdout + r.stderr, r.stderr


def test_a_resumed_item_gets_none_of_the_late_events_of_its_earlier_run(tmp_path):
    """late.jsonl keeps the events of the results kept; an item run again starts clean (and a torn line that
    names no item stays, still reported)."""
    from arena.types import TraceEvent

    run = RunDir(tmp_path, "a", "b", "c", {"items": ["one", "two"]})
    for item in ("one", "two"):
        run.add(ItemResult(item_id=item, status="passed", trace=[TraceEvent(seq=0, leg=0, type="final", text="ok")]))
        run.add_late(item, TraceEvent(seq=1, leg=0, type="tool_call", tool="book_room", ts=float(uuid.uuid4().int % 99)))
    with (run.path / "late.jsonl").open("a") as f:
        f.write('{"item_id": "two", "seq": 2, "le\n#garbage\n')
    results = [ItemResult(item_id=i, status="passed") for i in ("one", "two")]
    run.finish(RunSummary.tally(results, arena="a", adapter="b", framework="f", framework_version=None,
                                pause_mechanism="m", pause_kind="native", model="c"))
    assert to_run_again(run.path) == {"two": "late.jsonl line 3 is torn or corrupt"}
    reopened, done = RunDir.reopen(run.path)
    assert [r.item_id for r in done] == ["one"]
    late = (run.path / "late.jsonl").read_text().splitlines()
    assert [json.loads(line)["item_id"] for line in late[:-1]] == ["one"] and late[-1] == "#garbage"
    reopened.interrupt("test")


def test_a_results_file_cut_short_after_a_torn_line_names_the_items_it_lost(tmp_path, a_run):
    """A torn line that still names its item, and the lines after it gone (the file cut short): the lost items
    are named as not measured (this raised IndexError when no torn line was anonymous)."""
    from arena.rundir import load_results

    run_dir = tmp_path / a_run.name
    shutil.copytree(a_run, run_dir)
    lines = (run_dir / "results.jsonl").read_text().splitlines(keepends=True)
    assert len(lines) >= 3
    (run_dir / "results.jsonl").write_text(lines[0] + lines[1][: len(lines[1]) // 2])  # line 2 torn, line 3 gone
    warnings: list[str] = []
    got = {r.item_id: r for r in load_results(run_dir, warnings.append)}
    lost = [r for r in got.values() if r.status == "errored" and (r.error or "").startswith("no result")]
    assert lost and all("cut short" in (r.error or "") for r in lost), {k: r.error for k, r in got.items()}
