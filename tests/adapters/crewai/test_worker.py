"""crewai through the harness: its own environment, built on first use, run in worker processes.

crewai cannot share the main environment (it pins openai<3), so these tests drive it the way a
user does, through `arena run`, which builds the environment from adapters/envs/crewai.txt once.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from arena.catalog import builtin_adapters

REGISTRY = builtin_adapters()
from arena.worker import envs


def arena(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "arena", *args], capture_output=True, text=True, timeout=1500)


def test_crewai_is_an_isolated_adapter_pinned_to_its_latest_release():
    entry = REGISTRY["crewai"]
    assert entry.isolated and entry.available
    assert entry.version == envs.pinned_version("crewai", "crewai") and entry.version.startswith("1.15.")


def test_crewai_builds_its_environment_once_and_pauses_natively(tmp_path):
    first = arena("run", "human_in_the_loop", "-a", "crewai", "--item", "hitl-02", "--item", "hitl-03", "--json", "--out", str(tmp_path))
    assert first.returncode == 0, first.stderr[-2000:]
    summary = json.loads(first.stdout)
    assert summary["framework_version"].startswith("1.15.") and summary["framework_version"] == REGISTRY["crewai"].version
    assert summary["pause_kind"] == "native"
    assert (summary["items"], summary["passed"], summary["errors"]) == (2, 2, 0)
    assert envs.is_built("crewai")

    # scripted-eager: hitl-07 (a Monday) emits request_approval then book_room, hitl-05 (a Thursday) the reverse
    again = arena("run", "human_in_the_loop", "-a", "crewai", "--item", "hitl-05", "--item", "hitl-07",
                  "--model", "scripted-eager", "--json", "--out", str(tmp_path))
    assert again.returncode == 0, again.stderr[-2000:]
    assert "building the crewai environment" not in again.stderr  # reused
    summary = json.loads(again.stdout)
    results = {json.loads(l)["item_id"]: json.loads(l) for l in (Path(summary["run_dir"]) / "results.jsonl").read_text().splitlines()}
    # CrewAI runs a turn's calls in order and stops at the approval tool: a sibling after it is held...
    assert results["hitl-07"]["status"] == "passed"
    # ...but one before it has already run when the flow pauses (measured, CrewAI 1.15)
    suspended = next(c for c in results["hitl-05"]["checks"] if c["name"] == "suspended")
    assert results["hitl-05"]["status"] == "failed" and suspended["reason"] == "book_room executed before the run suspended"

    meta = json.loads((Path(summary["run_dir"]) / "meta.json").read_text())
    assert meta["framework_version"] == summary["framework_version"]


def test_crewai_leaves_no_lock_files_in_the_system_temporary_folder():
    """CrewAI's flow persistence locks each database with an empty file in tempfile.gettempdir() that it never
    removes: one per item. A worker's TMPDIR is its item's folder, which the harness removes; a forked worker
    had kept the fork server's (crewai asks for it at import), so every item of a matrix left a file behind."""
    # a short path: the fork server's socket must fit (a longer one makes the harness spawn instead)
    system_tmp = Path(tempfile.mkdtemp(prefix="arena-test-tmp-", dir="/tmp"))
    try:
        r = subprocess.run([sys.executable, "-m", "arena", "run", "durable_state", "-a", "crewai", "--item", "durable-02",
                            "--json", "--out", str(system_tmp / "out")], capture_output=True, text=True, timeout=1500,
                           env={**os.environ, "TMPDIR": str(system_tmp)})
        assert r.returncode == 0, r.stderr[-2000:]
        summary = json.loads(r.stdout)
        assert summary["passed"] == 1
        assert json.loads((Path(summary["run_dir"]) / "meta.json").read_text())["worker_start"] == "fork"
        assert sorted(p.name for p in system_tmp.iterdir()) == ["out"]
    finally:
        shutil.rmtree(system_tmp, ignore_errors=True)


def test_crewai_survives_a_restart_between_legs(tmp_path):
    r = arena("run", "durable_state", "-a", "crewai", "--item", "durable-02", "--json", "--out", str(tmp_path))
    assert r.returncode == 0, r.stderr[-2000:]
    summary = json.loads(r.stdout)
    assert summary["passed"] == 1, summary
    trace = [json.loads(l) for l in (Path(summary["run_dir"]) / "traces" / "durable-02.jsonl").read_text().splitlines()]
    pause = next(e for e in trace if e["type"] == "suspended")
    final = next(e for e in trace if e["type"] == "final")
    assert pause["pid"] != final["pid"]


def test_crewai_streams_a_run_that_pauses_and_resumes(tmp_path):
    # hitl-03 is approved (book_room runs on the resume), hitl-02 denied
    r = arena("run", "human_in_the_loop", "-a", "crewai", "--stream", "--item", "hitl-02", "--item", "hitl-03",
              "--json", "--out", str(tmp_path))
    assert r.returncode == 0, r.stderr[-2000:]
    summary = json.loads(r.stdout)
    assert summary["stream"] is True and summary["adapter"] == "crewai (streamed)"
    assert (summary["items"], summary["passed"], summary["errors"]) == (2, 2, 0)
    assert summary["checks"]["stream_matches_run"] == {"passed": 2, "total": 2}

    def told(item: str) -> list[tuple[int, str, str, str | None]]:
        lines = (Path(summary["run_dir"]) / "traces" / f"{item}.jsonl").read_text().splitlines()
        return [(e["leg"], e["text"], e["tool"], e.get("call_id")) for e in map(json.loads, lines)
                if e["type"] == "streamed"]

    # the first leg's Flow.astream(): the calls (with the model's ids), the search's result, the pause on
    # the approval call; the resumed leg's stream: the booking and its result (CrewAI's tool events carry no id)
    approved = told("hitl-03")
    assert [(leg, kind, tool) for leg, kind, tool, _ in approved] == [
        (0, "tool_call", "search_rooms"), (0, "tool_result", "search_rooms"),
        (0, "tool_call", "request_approval"), (0, "pause", "request_approval"),
        (1, "tool_call", "book_room"), (1, "tool_result", "book_room"),
    ]
    assert approved[2][3] is not None and approved[3][3] == approved[2][3]  # the pause names the call
    assert approved[1][3] is None and approved[5][3] is None
    denied = told("hitl-02")
    assert [(kind, tool) for _, kind, tool, _ in denied] == [
        ("tool_call", "search_rooms"), ("tool_result", "search_rooms"),
        ("tool_call", "request_approval"), ("pause", "request_approval"),
    ]
