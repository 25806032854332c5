"""Workers forked from a fork server: the same behaviour as spawned ones, the same process guarantees."""

from __future__ import annotations

import os
import subprocess
import sys
from functools import partial

import pytest

from arena import catalog
from arena.catalog import builtin_adapters
from arena_builtins.adapters.vanilla import VanillaAdapter
from arena.runner import run_items
from arena.worker import procs
from arena.worker.client import WorkerAdapter, start_mode, worker_env
from tests.conftest import normalised

HITL = catalog.load_arena("human_in_the_loop")
DURABLE = catalog.load_arena("durable_state")
pytestmark = pytest.mark.skipif(procs.tracking_mode() != "cgroup", reason="forked workers need cgroup tracking here")


def _run(server, target, info, spec, items, restart=False, profile="scripted"):
    made: list[WorkerAdapter] = []

    def factory():
        made.append(WorkerAdapter(target, info, sys.executable, server, restart_between_legs=restart, fork=True))
        return made[-1]

    chosen = [i for i in spec.items if i.id in items]
    return run_items(factory, spec, chosen, server=server, model=profile, timeout_s=60), made


def test_a_forked_worker_behaves_as_a_spawned_one(server, run_adapter):
    assert start_mode(sys.executable, "arena_builtins.adapters.vanilla:VanillaAdapter") == "fork"
    results, workers = _run(server, "arena_builtins.adapters.vanilla:VanillaAdapter", VanillaAdapter.info, HITL, ["hitl-01", "hitl-02"])
    local = run_adapter(VanillaAdapter, items=["hitl-01", "hitl-02"])
    assert [r.status for r in results] == ["passed", "passed"]
    assert [normalised(r) for r in results] == [normalised(r) for r in local]
    assert len({p for w in workers for p in w.pids}) == 2


def test_a_resumed_leg_runs_in_a_new_forked_process_after_the_paused_one_exited(server):
    entry = builtin_adapters()["langgraph"]
    if not entry.available:
        pytest.skip("langgraph is not installed")
    assert start_mode(sys.executable, entry.target) == "fork"
    results, workers = _run(server, entry.target, entry.load().info, DURABLE, ["durable-01", "durable-02"], restart=True)
    assert [r.status for r in results] == ["passed", "passed"]
    for result, worker in zip(results, workers):
        first, second = worker.pids
        assert worker.lifecycle == [("spawned", first), ("exited", first), ("spawned", second), ("exited", second)]
        assert next(e for e in result.trace if e.type == "suspended").pid == first
        assert next(e for e in result.trace if e.type == "final").pid == second


def test_a_daemon_left_by_a_forked_leg_is_still_a_survivor(server):
    from tests.zoo import HoldsStateInADaemon

    results, _ = _run(server, "tests.zoo:HoldsStateInADaemon", HoldsStateInADaemon.info, DURABLE, ["durable-01"],
                      restart=True)
    check = next(c for c in results[0].checks if c.name == "resumed_in_new_process")
    assert results[0].status == "failed" and "of the paused leg was still alive at the resume" in check.reason


def test_a_killed_forked_worker_reports_its_exit_code(server):
    from tests.zoo import DiesOnOneItem

    results, _ = _run(server, "tests.zoo:DiesOnOneItem", DiesOnOneItem.info, HITL, ["hitl-02"])
    assert results[0].error.startswith("WorkerError: worker exited with code -9 mid-leg")


def test_a_framework_that_starts_threads_at_import_is_spawned_instead(server):
    from tests.forkunsafe import ThreadAtImport

    mode = start_mode(sys.executable, "tests.forkunsafe:ThreadAtImport")
    assert mode.startswith("spawn (threads after import: ") and "telemetry-exporter" in mode
    factory = partial(WorkerAdapter, "tests.forkunsafe:ThreadAtImport", ThreadAtImport.info, sys.executable, server,
                      fork=True)
    (result,) = run_items(factory, HITL, [HITL.item("hitl-01")], server=server, model="scripted", timeout_s=60)
    assert result.status == "passed"  # spawned, as ever


def test_a_fork_server_skips_a_missing_preload_module_and_warms_once_for_its_children_in_their_own_tmpdir(server):
    from tests.forkwarm import WarmedInServer

    assert start_mode(sys.executable, "tests.forkwarm:WarmedInServer") == "fork"
    results, workers = _run(server, "tests.forkwarm:WarmedInServer", WarmedInServer.info, HITL, ["hitl-01", "hitl-02"])
    assert [r.status for r in results] == ["passed", "passed"], [r.error for r in results]
    # spawned, the same adapter is never warmed: the check inside it is real
    spawned = partial(WorkerAdapter, "tests.forkwarm:WarmedInServer", WarmedInServer.info, sys.executable, server)
    (cold,) = run_items(spawned, HITL, [HITL.item("hitl-01")], server=server, model="scripted", timeout_s=60)
    assert "not warmed in the fork server" in (cold.error or "")


def test_adapters_of_one_module_that_prepare_a_server_alike_share_it_and_no_others_do(server):
    from arena.worker.forkserver import preparation, server_for
    from tests.forkwarm import AlsoWarmedInServer

    assert preparation("tests.forkwarm:WarmedInServer") == preparation("tests.forkwarm:AlsoWarmedInServer")
    assert preparation("tests.forkwarm:PreparedOtherwise") != preparation("tests.forkwarm:WarmedInServer")
    assert preparation("arena_builtins.adapters.vanilla:VanillaAdapter") != preparation("tests.forkwarm:WarmedInServer")
    adk = "arena_builtins.adapters.google_adk:"
    assert preparation(adk + "GoogleADKAdapter") == preparation(adk + "GoogleADKConfirmAdapter")
    assert preparation("tests.forkwarm:NoSuchAdapter") == "tests.forkwarm:NoSuchAdapter"  # not loadable: its own
    env = worker_env()
    one = server_for(sys.executable, "tests.forkwarm:WarmedInServer", env)
    assert server_for(sys.executable, "tests.forkwarm:AlsoWarmedInServer", env) is one
    assert server_for(sys.executable, "tests.forkwarm:PreparedOtherwise", env) is not one
    # a worker of the shared server runs its own class, warmed by the server that was started for the other one
    (result,), _ = _run(server, "tests.forkwarm:AlsoWarmedInServer", AlsoWarmedInServer.info, HITL, ["hitl-01"])
    assert "ran as AlsoWarmedInServer, warmed by its fork server" in (result.error or ""), result.error


def test_complete_models_builds_the_deferred_models_it_finds_and_skips_the_rest():
    from arena.worker.forkserver import complete_models
    from tests.forkwarm import Deferred

    names = ["arena_no_such_module_for_tests.Model", "tests.forkwarm.NoSuchModel", "tests.forkwarm.Deferred"]
    assert complete_models(names) == ["tests.forkwarm.Deferred"]
    assert Deferred.__pydantic_complete__


def test_an_adapter_with_process_wide_state_runs_its_items_at_once_each_in_a_forked_worker(tmp_path):
    """`concurrent = False` (a framework with state bound to one event loop per process): in the harness's process
    its items would run one at a time; forked, each item has a process of its own, and they run at once."""
    import json

    import arena

    entry = builtin_adapters()["llama_index"]
    if not entry.available:
        pytest.skip("llama_index is not installed")
    assert not entry.concurrent
    items = ["hitl-01", "hitl-02", "hitl-03"]
    (run,) = arena.evaluate("human_in_the_loop", ["llama_index"], items=items, out=tmp_path, concurrency=3)
    assert (run.meta["worker_start"], run.meta["concurrency"], run.meta["process_tracking"]) == ("fork", 3, "cgroup")
    assert run.summary.passed == 3
    pids = {item: {json.loads(line)["pid"] for line in (run.path / "traces" / f"{item}.jsonl").read_text().splitlines()
                   if json.loads(line).get("type") == "final"} for item in items}
    assert len(set().union(*pids.values())) == 3 and os.getpid() not in set().union(*pids.values())


def test_a_rehearsal_builds_what_a_first_request_builds_and_leaves_no_thread_socket_or_client():
    """What a fork server runs before its first fork (`arena.http.rehearse`): a thread, a connection or a listening
    socket left behind would be inherited by every child (or make forking unsafe)."""
    code = """
import os, threading
from openai._base_client import platform_headers
from arena import http
http.warm()
before = sorted(os.listdir("/proc/self/fd"))
assert not platform_headers.cache_info().currsize
http.rehearse()
assert threading.enumerate() == [threading.main_thread()], threading.enumerate()
assert sorted(os.listdir("/proc/self/fd")) == before, (before, os.listdir("/proc/self/fd"))
assert platform_headers.cache_info().currsize  # what the SDK reports of the machine, cached
print("rehearsed")
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "rehearsed", done.stderr[-2000:]
