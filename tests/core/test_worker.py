"""Adapters in worker processes: same traces, crashes and hangs contained, nothing left running."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from arena import catalog
from arena.catalog import builtin_adapters
from arena_builtins.adapters.vanilla import VanillaAdapter
from arena.runner import run_items
from arena.worker.client import WorkerAdapter
from tests.conftest import normalised

HITL = catalog.load_arena("human_in_the_loop")
INTERRUPTIONS = catalog.load_arena("interruptions")


def _alive(pid: int) -> bool:
    """True if the process exists and is not a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


@pytest.fixture
def worker_run(server):
    made: list[WorkerAdapter] = []

    def run(target: str, info, items=None, restart=False, timeout_s=60.0, profile="scripted", arena=HITL):
        def factory():
            adapter = WorkerAdapter(target, info, sys.executable, server, restart_between_legs=restart)
            made.append(adapter)
            return adapter

        chosen = [i for i in arena.items if items is None or i.id in items]
        return run_items(factory, arena, chosen, server=server, model=profile, timeout_s=timeout_s), made

    return run


def test_a_worker_produces_the_same_trace_as_in_process(worker_run, run_adapter):
    results, workers = worker_run("arena_builtins.adapters.vanilla:VanillaAdapter", VanillaAdapter.info, items=["hitl-01", "hitl-02"])
    local = run_adapter(VanillaAdapter, items=["hitl-01", "hitl-02"])
    assert [r.status for r in results] == ["passed", "passed"]
    assert [normalised(r) for r in results] == [normalised(r) for r in local]
    suspended = next(e for e in results[0].trace if e.type == "suspended")
    assert suspended.pid == workers[0].pids[0] != os.getpid()
    tool = next(e for e in results[0].trace if e.type == "tool_call")
    assert tool.pid == os.getpid()  # tools execute, and are logged, in the harness
    assert not any(_alive(p) for w in workers for p in w.pids)


def test_a_worker_killed_mid_leg_errors_that_item_only(worker_run):
    results, workers = worker_run("tests.zoo:DiesOnOneItem", VanillaAdapter.info, items=["hitl-01", "hitl-02", "hitl-03"])
    by_id = {r.item_id: r for r in results}
    assert by_id["hitl-02"].status == "failed"  # a crash is the adapter's measured fault, not the harness's
    assert by_id["hitl-02"].error.startswith("WorkerError: worker exited with code -9 mid-leg")
    completed = next(c for c in by_id["hitl-02"].checks if c.name == "completed")
    assert not completed.passed and "worker exited with code -9 mid-leg" in completed.reason
    assert [e.tool for e in by_id["hitl-02"].trace if e.type == "tool_call"] == ["search_rooms"]
    assert by_id["hitl-01"].status == by_id["hitl-03"].status == "passed"
    assert not any(_alive(p) for w in workers for p in w.pids)


def test_a_hung_worker_is_killed_with_its_children(worker_run, tmp_path):
    results, workers = worker_run("tests.zoo:HangsWithAChild", VanillaAdapter.info, items=["hitl-02", "hitl-03", "hitl-04"], timeout_s=15)
    by_id = {r.item_id: r for r in results}
    assert by_id["hitl-03"].status == "failed" and by_id["hitl-03"].error == "timed out after 15s"
    assert by_id["hitl-02"].status == by_id["hitl-04"].status == "passed"
    pids = [p for w in workers for p in w.pids]
    assert len(pids) == 3
    import time

    deadline = time.monotonic() + 5
    while any(_alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(_alive(p) for p in pids)
    # the hung worker's own child (sleep 600) went with its process group
    sleepers = [p for p in os.listdir("/proc") if p.isdigit() and _cmdline(p) == "sleep\x00600\x00"]
    assert sleepers == []


def _cmdline(pid: str) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_text()
    except OSError:
        return ""


def test_restart_between_legs_resumes_from_json_state_in_a_new_process(worker_run):
    entry = builtin_adapters()["langgraph"]
    if not entry.available:
        pytest.skip("langgraph not installed")
    cls = entry.load()
    results, workers = worker_run(entry.target, cls.info, items=["hitl-01", "hitl-02"], restart=True)
    assert [r.status for r in results] == ["passed", "passed"]
    for result, worker in zip(results, workers):
        first, second = worker.pids
        # the process that paused had exited before the one that resumed was started
        assert worker.lifecycle == [("spawned", first), ("exited", first), ("spawned", second), ("exited", second)]
        assert first != second
        assert next(e for e in result.trace if e.type == "suspended").pid == first
        assert next(e for e in result.trace if e.type == "final").pid == second
        assert not _alive(first) and not _alive(second)


def test_restart_between_legs_fails_honestly_for_in_memory_state(worker_run):
    results, _ = worker_run("arena_builtins.adapters.vanilla:VanillaAdapter", VanillaAdapter.info, items=["hitl-01"], restart=True)
    (r,) = results
    assert r.status == "failed"
    assert "cannot resume in a new process" in r.error
    assert [e.type for e in r.trace if e.type != "model_call"][:2] == ["tool_call", "suspended"]


@pytest.mark.parametrize("restart", [False, True], ids=["same worker", "a new worker per leg"])
def test_input_added_while_paused_reaches_the_adapter_in_its_worker(worker_run, run_adapter, restart):
    """The `input` channel through a worker: the adapter's add_input runs where the paused state is (or, every leg
    in a new process, on its JSON state). Without it, every adapter run in workers (another release, an environment
    of its own) failed the interruptions arena's input items, which measured the harness, not the framework."""
    from arena_builtins.adapters.vanilla_durable import VanillaDurableAdapter

    items = ["int-19", "int-20", "int-21"]
    target = "arena_builtins.adapters.vanilla_durable:VanillaDurableAdapter"
    results, workers = worker_run(target, VanillaDurableAdapter.info, items=items, restart=restart, profile="careful",
                                  arena=INTERRUPTIONS)
    local = run_adapter(VanillaDurableAdapter, arena="interruptions", profile="careful", items=items)
    assert [r.status for r in results] == [r.status for r in local] == ["passed"] * 3, [r.checks for r in results]
    assert [normalised(r) for r in results] == [normalised(r) for r in local]
    seen = [next(c for c in r.checks if c.name == "midrun_input_seen") for r in results]
    assert all(c.passed for c in seen), [c.reason for c in seen]


def test_a_failed_add_input_in_a_worker_leaves_the_paused_state_to_resume(worker_run):
    """vanilla's paused state lives in its worker's memory only (a handle): an add_input that raises must not take
    it with it, or the resume finds nothing and fails for the harness's reason, not the framework's."""
    from tests.zoo import InputFails

    (result,), _ = worker_run("tests.zoo:InputFails", InputFails.info, items=["int-19"], profile="careful",
                              arena=INTERRUPTIONS)
    checks = {c.name: c for c in result.checks}
    assert result.error is None and checks["completed"].passed, checks["completed"].reason
    assert not checks["midrun_input_seen"].passed and "no input while paused here" in checks["midrun_input_seen"].reason


def test_a_killed_worker_whose_exit_is_never_reported_is_not_waited_for(server, monkeypatch):
    """A forked worker's exit status comes from its fork server: one that no longer reports it (stuck, or the report
    lost) must not hold the item's close, nor a leg's end, for ever (it held a matrix cell for 20 minutes)."""
    import asyncio
    import time
    from types import SimpleNamespace

    from arena.worker import client

    monkeypatch.setattr(client, "KILLED_EXIT_S", 0.2)

    async def nothing(*_args):
        return b""

    class Unreported:  # what WorkerAdapter uses of a ForkedProcess, whose exit line never comes
        pid, returncode = 2 ** 22 + 4321, None  # no such process: the kill finds nothing to kill
        stdin = SimpleNamespace(write=lambda _data: None, drain=nothing)
        stdout = SimpleNamespace(readline=nothing)

        async def wait(self) -> int:
            await asyncio.Event().wait()
            return 0

    worker = WorkerAdapter("arena_builtins.adapters.vanilla:VanillaAdapter", VanillaAdapter.info, sys.executable, server)
    worker._proc = Unreported()
    began = time.monotonic()
    asyncio.run(worker.close_worker())
    assert time.monotonic() - began < 8  # the close's own 5 s for an orderly exit, then the bounded wait
    assert worker.lifecycle[-1] == ("exited", Unreported.pid)

    worker._proc = Unreported()  # and a leg whose worker's output ended: an error, not a wait
    with pytest.raises(client.WorkerError, match="exited with code unknown"):
        asyncio.run(worker._call(client.Request(op="close"), "/tmp"))
