"""Process survivors (issue 50, section 3): a paused run held by a helper that left the worker's session is seen
(`no_process_survived`, naming the survivor) in every arena whose items need a new process, and a crash ends every
process the leg started (its cgroup), or says it could not."""

from __future__ import annotations

import sys
from functools import partial
from pathlib import Path

import pytest

from arena import catalog, evaluate
from arena.checks import Scoring, no_process_survived, resumed_in_new_process
from arena.runner import run_items
from arena.types import Decision, TraceEvent
from arena.worker import procs
from arena.worker.client import WorkerAdapter
from tests.survivor_faults import HELPER_TAG, HoldsPauseInAHelper

SURVIVED = "of a closed or killed leg was still alive at"
LINUX = pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="needs Linux /proc")


def _run(arena, adapter, items, tmp_path):
    run = evaluate(arena, [adapter], items=items, out=tmp_path, timeout=120)[0]
    return {r.item_id: r for r in run.results}


def _check(result, name):
    return next(c for c in result.checks if c.name == name)


# -- the check, on crafted traces ---------------------------------------------------------------------------------


def _trace(survivors_at: str | None) -> list[TraceEvent]:
    """A paused run resumed in a new process, crashed and recovered; survivors on the resume or the recovery."""
    helper = [{"pid": 4242, "cmd": f"python -c {HELPER_TAG}"}]
    approve = Decision.model_validate({"kind": "approve", "text": "ok"})
    return [
        TraceEvent(seq=0, leg=0, type="suspended", tool="request_approval", pid=100),
        TraceEvent(seq=1, leg=1, type="resumed", decision=approve,
                   survivors=helper if survivors_at == "resume" else None),
        TraceEvent(seq=2, leg=1, type="crashed", tool="book_flight", pid=101, text="after_effect: ..."),
        TraceEvent(seq=3, leg=2, type="resumed", decision=approve, replay="recover",
                   survivors=helper if survivors_at == "recover" else None),
        TraceEvent(seq=4, leg=2, type="final", text="booked", pid=102),
    ]


@pytest.mark.parametrize("where,what", [("resume", "the resume (leg 1)"), ("recover", "the recovery (leg 2)")])
def test_a_survivor_at_any_resume_fails_the_check_naming_it(where, what):
    spec = catalog.load_arena("crash_recovery")
    s = Scoring(item=spec.items[0], trace=_trace(where), arena=spec)
    result = no_process_survived(s)
    assert not result.passed and "process 4242" in result.reason and HELPER_TAG in result.reason
    assert f"{SURVIVED} {what}" in result.reason


def test_no_survivor_passes_and_a_run_never_resumed_fails():
    spec = catalog.load_arena("crash_recovery")
    assert no_process_survived(Scoring(item=spec.items[0], trace=_trace(None), arena=spec)).passed
    never = no_process_survived(Scoring(item=spec.items[0], trace=_trace(None)[:1], arena=spec))
    assert not never.passed and "never resumed" in never.reason
    here = [e.model_copy(update={"pid": 100}) for e in _trace(None)]  # every leg in the harness's process
    in_process = no_process_survived(Scoring(item=spec.items[0], trace=here, arena=spec))
    assert in_process.passed and "no worker's process tree to list" in in_process.reason


def test_resumed_in_new_process_reads_a_later_resume_too():
    """durable_state's check read only the first resume's survivors; one at a later resume fails it as well."""
    spec = catalog.load_arena("durable_state")
    approve = Decision.model_validate({"kind": "approve", "text": "ok"})
    helper = [{"pid": 4242, "cmd": f"python -c {HELPER_TAG}"}]
    trace = [
        TraceEvent(seq=0, leg=0, type="suspended", tool="request_approval", pid=100),
        TraceEvent(seq=1, leg=1, type="resumed", decision=approve),
        TraceEvent(seq=2, leg=1, type="suspended", tool="request_approval", pid=101),
        TraceEvent(seq=3, leg=2, type="resumed", decision=approve, survivors=helper),
        TraceEvent(seq=4, leg=2, type="final", text="booked", pid=102),
    ]
    result = resumed_in_new_process(Scoring(item=spec.items[0], trace=trace, arena=spec))
    assert not result.passed and f"{SURVIVED} the resume (leg 2)" in result.reason
    first_only = resumed_in_new_process(Scoring(item=spec.items[0], trace=trace[:3], arena=spec))
    assert first_only.passed


# -- crash_recovery: the faulty adapter is caught, for the right reason -----------------------------------------------


@LINUX
def test_a_paused_run_held_by_a_detached_helper_fails_crash_recovery_naming_it(tmp_path):
    """cr-01 (after_effect) and cr-06 (before_persist): the helper of the paused leg (double fork, setsid) outlived
    the worker's orderly close and held the run the resume fetched: the item fails, naming that process."""
    results = _run("crash_recovery", HoldsPauseInAHelper, ["cr-01", "cr-06"], tmp_path)
    for item in ("cr-01", "cr-06"):
        r = results[item]
        check = _check(r, "no_process_survived")
        assert r.status == "failed" and not check.passed, (item, check)
        assert SURVIVED in check.reason and HELPER_TAG in check.reason and "at the resume (leg 1)" in check.reason
        helper = next(e for e in r.trace if e.type == "resumed" and e.survivors).survivors[0]["pid"]
        assert not procs.alive(helper)  # the crash (or the item's end) killed it: nothing is left behind


@LINUX
@pytest.mark.skipif(procs.tracking_mode() != "cgroup", reason="needs a cgroup of the harness's own (cgroup v2, root)")
def test_a_crash_during_the_pause_ends_the_detached_helper_too(tmp_path):
    """cr-12 (during_pause): the kill ends the leg's cgroup, so the helper that left the process group dies with the
    worker; the run it held is gone and the resume says so. (Killing the process group alone left it alive, and the
    item passed.)"""
    r = _run("crash_recovery", HoldsPauseInAHelper, ["cr-12"], tmp_path)["cr-12"]
    crash = next(e for e in r.trace if e.type == "crashed")
    assert "its cgroup (cgroup.kill)" in (crash.text or "")
    check = _check(r, "recovered")
    assert r.status == "failed" and not check.passed and "the helper process that held the paused run is gone" \
        in check.reason


@LINUX
@pytest.mark.parametrize("mode", ["environ", "group"])
def test_without_cgroups_the_kill_falls_back_and_says_so(mode, tmp_path, monkeypatch):
    """Where leg cgroups cannot be made, the kill is the process group (and, `environ`, the processes that carry the
    worker's marker): the `crashed` event says which and why. The environment marker still finds the helper (it kept
    its environment); the process group alone neither kills nor sees it, and the trace says that too."""
    monkeypatch.setenv("ARENA_PROCESS_TRACKING", mode)
    monkeypatch.setattr(procs, "_CGROUP_PARENT", False)  # probed again, under this setting
    monkeypatch.setattr(procs, "_NO_CGROUP", None)
    r = _run("crash_recovery", HoldsPauseInAHelper, ["cr-01"], tmp_path)["cr-01"]
    crash = next(e for e in r.trace if e.type == "crashed")
    assert f"no cgroup here (ARENA_PROCESS_TRACKING={mode})" in (crash.text or "")
    check = _check(r, "no_process_survived")
    if mode == "environ":
        assert not check.passed and HELPER_TAG in check.reason
    else:
        assert "its process group only" in (crash.text or "") and "neither killed nor seen" in (crash.text or "")


# -- delegation's durable items and interruptions' hand-offs: the worker the run is handed over from ------------------


@LINUX
@pytest.mark.parametrize("arena,item", [("delegation", "del-13"), ("interruptions", "int-13")])
def test_a_helper_that_outlives_the_worker_a_run_is_handed_over_from_is_named(arena, item, server):
    """The adapter runs in workers (as an isolated framework's does): the paused worker is closed at the hand-over
    to a new process, and the helper it left behind is listed on the resume, then killed with the item's trees."""
    spec = catalog.load_arena(arena)

    def run(target, cls):
        factory = partial(WorkerAdapter, target, cls.info, sys.executable, server, False)
        return run_items(factory, spec, [spec.item(item)], server=server, model="careful", timeout_s=60)[0]

    r = run("tests.survivor_faults:HoldsPauseInAHelper", HoldsPauseInAHelper)
    check = _check(r, "no_process_survived")
    assert r.status == "failed" and not check.passed, check
    assert SURVIVED in check.reason and HELPER_TAG in check.reason and "at the resume (leg 1)" in check.reason
    from arena_builtins.adapters.vanilla_durable import VanillaDurableAdapter

    reference = run("arena_builtins.adapters.vanilla_durable:VanillaDurableAdapter", VanillaDurableAdapter)
    assert reference.status == "passed", [c for c in reference.checks if not c.passed]
    assert _check(reference, "no_process_survived").passed


def test_every_item_that_needs_a_new_process_reads_the_survivors():
    """crash_recovery's items, delegation's durable items and interruptions' hand-offs, and durable_state's (its own
    `resumed_in_new_process`)."""
    for item in catalog.load_arena("crash_recovery").items:
        assert "no_process_survived" in item.checks, item.id
    durable = [i for i in catalog.load_arena("delegation").items if i.metadata.get("durable")]
    assert durable and all("no_process_survived" in i.checks for i in durable)
    handoffs = [i for i in catalog.load_arena("interruptions").items if i.metadata.get("group") == "handoff"]
    assert handoffs and all("no_process_survived" in i.checks for i in handoffs)
    assert all("resumed_in_new_process" in i.checks for i in catalog.load_arena("durable_state").items)
