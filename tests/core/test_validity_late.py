"""Issue 50, section 6 and the scripted model's own failures (section 7).

Activity after a run's end: a framework's thread that books 1.5 s after the pause or the final answer is recorded
and fails its item, in the process the harness started for it (in-process: late.jsonl; in a worker: the worker's
exit waits for it), and `arena run`'s own table, --json and exit code say what every later reader of the run
directory says. A call or model request that reaches an item's closed session is recorded too, never dropped.

A scripted policy that raises is the harness's failure: recorded as a model call (HTTP 500, flagged `harness`),
and the item is `errored` (not measured), never `failed`.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

import httpx
import pytest

from arena import catalog, leftovers
from arena.model.script import Draw, Sampled
from arena.model.server import scripted_failure
from arena.results import RunSummary
from arena.rundir import load_results
from arena.runner import run_items
from arena.tools.box import ToolExecutor
from arena.trace import TraceRecorder
from arena.worker.client import WorkerAdapter
from tests.late_faults import BooksAfterTheFinalAnswer
from tests.report.helpers import item, run, write_run

ROOT = Path(__file__).resolve().parents[2]
HITL = "human_in_the_loop"
SEALED = "ran on after the item was sealed: book_room"
ITEMS = ("hitl-01", "hitl-02")  # an approved item and a denied one


def _arena(*args: str, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "arena", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout)


def _baseline(tmp_path: Path, adapter: str) -> Path:
    """A run directory in which both items passed: against it, a failed item is a regression (exit 4)."""
    passing = [item(i, {"suspended": True, "nothing_after_final": True}) for i in ITEMS]
    return write_run(tmp_path / "base", "run", run(HITL, adapter, "scripted", passing))


def _check(result, name: str = "nothing_after_final"):
    return next(c for c in result.checks if c.name == name)


def _late(run_dir: Path) -> list[dict]:
    return [json.loads(line) for line in (run_dir / "late.jsonl").read_text().splitlines()]


# -- in the harness's process: the run's finalisation waits for the thread --------------------------------------

def test_a_thread_that_books_after_the_pause_fails_its_items_in_the_runs_json_and_exit_code(tmp_path):
    args = ["run", HITL, "-a", "tests.late_faults:BooksAfterThePause", *(a for i in ITEMS for a in ("--item", i)),
            "--concurrency", "1", "--json", "--out", str(tmp_path / "runs"),
            "--baseline", str(_baseline(tmp_path, "books_after_the_pause"))]
    r = _arena(*args)
    assert r.returncode == 4, r.stderr  # both items regressed against the baseline
    summary = json.loads(r.stdout)
    assert (summary["passed"], summary["failed"], summary["errors"]) == (0, 2, 0)
    assert summary["checks"]["nothing_after_final"] == {"passed": 0, "total": 2}
    run_dir = Path(summary["run_dir"])
    late = _late(run_dir)  # every late call recorded, refused, and named by its item
    assert sorted(x["item_id"] for x in late) == sorted(ITEMS)
    assert all(x["tool"] == "book_room" and x["late"] is True and x["result"].startswith("ERROR: item sealed")
               for x in late)
    # a reader of the run directory says what the run said
    read = {r.item_id: r for r in load_results(run_dir)}
    assert {i: read[i].status for i in ITEMS} == {i: "failed" for i in ITEMS}
    assert all(_check(read[i]).reason.startswith(SEALED) for i in ITEMS)
    assert json.loads((run_dir / "summary.json").read_text())["failed"] == 2
    for i in ITEMS:
        assert f"item {i}: passed -> failed (nothing_after_final: {SEALED}" in r.stderr
    assert "leftovers_at_end" not in json.loads((run_dir / "meta.json").read_text())  # none outlived the wait


def test_a_thread_that_books_after_the_final_answer_fails_its_items_in_the_runs_table(tmp_path):
    out = tmp_path / "runs"
    base = _baseline(tmp_path, "books_after_the_final_answer")
    r = _arena("run", HITL, "-a", "tests.late_faults:BooksAfterTheFinalAnswer",
               *(a for i in ITEMS for a in ("--item", i)), "--concurrency", "1", "--out", str(out), "--baseline", str(base))
    assert r.returncode == 4, r.stderr
    row = next(line for line in r.stdout.splitlines() if "books_after_the_final_answer" in line)
    assert "0/2" in row and "nothing_after_final 0/2" in row
    (run_dir,) = out.iterdir()
    assert sorted(x["item_id"] for x in _late(run_dir)) == sorted(ITEMS)
    assert [r.status for r in load_results(run_dir)] == ["failed", "failed"]


# -- in a worker: its exit waits for the framework's non-daemon thread --------------------------------------------

def test_a_workers_thread_that_books_after_the_pause_is_recorded_before_the_worker_exits(tmp_path):
    """durable_state: every leg in a new worker, closed at the pause. The worker's exit used to end the thread
    unseen (the items passed); it now waits for it, and the booking is in the item's trace."""
    r = _arena("run", "durable_state", "-a", "tests.late_faults:DurableBooksAfterThePause", "--item", "durable-01",
               "--json", "--out", str(tmp_path))
    assert r.returncode == 0, r.stderr
    summary = json.loads(r.stdout)
    assert (summary["passed"], summary["failed"], summary["errors"]) == (0, 1, 0)
    (result,) = load_results(Path(summary["run_dir"]))
    assert result.status == "failed"
    pause = next(e for e in result.trace if e.type == "suspended")
    booked = [e for e in result.trace if e.type == "tool_call" and e.tool == "book_room" and e.leg == pause.leg]
    assert booked, "the worker's thread's booking is not in the trace"
    suspended = _check(result, "suspended")
    assert not suspended.passed and "book_room" in suspended.reason


def test_a_workers_thread_that_books_after_the_final_answer_fails_nothing_after_final(server):
    """human_in_the_loop in one worker per item: the thread's booking reaches the harness while the worker closes."""
    arena = catalog.load_arena(HITL)

    def factory() -> WorkerAdapter:
        return WorkerAdapter("tests.late_faults:BooksAfterTheFinalAnswer", BooksAfterTheFinalAnswer.info,
                             sys.executable, server)

    (result,) = run_items(factory, arena, [i for i in arena.items if i.id == "hitl-01"], server=server,
                          model="scripted")
    assert result.status == "failed"
    assert _check(result).reason.startswith("ran on after the final answer: book_room")


# -- a closed session still records -------------------------------------------------------------------------------

def test_a_call_to_a_closed_tool_session_is_recorded_as_late_and_refused(server):
    arena = catalog.load_arena(HITL)
    recorder, late = TraceRecorder(), []
    recorder.on_late = late.append
    endpoint = server.register(ToolExecutor(arena.tools, arena.functions, recorder))
    server.unregister(endpoint)  # the item's worker is closed
    recorder.seal()
    reply = httpx.post(f"{endpoint}/book_room", json={"args": {"room_id": "R101"}, "call_id": "c1"},
                       timeout=10, trust_env=False)
    assert reply.status_code == 200
    assert reply.json()["result"] == "ERROR: the item's tool session is closed; book_room was not executed"
    (event,) = late
    assert (event.type, event.tool, event.args, event.call_id, event.late) == ("tool_call", "book_room",
                                                                                {"room_id": "R101"}, "c1", True)
    assert httpx.post(f"{server.url}/tools/never-was/book_room", json={"args": {}}, timeout=10,
                      trust_env=False).status_code == 404  # a session that never existed is still unknown


def test_a_model_request_to_a_forgotten_endpoint_is_recorded_as_late(server):
    recorder, late = TraceRecorder(), []
    recorder.on_late = late.append
    channel = server.open_item(recorder, "scripted", catalog.load_arena(HITL).all_policies)
    recorder.seal()
    server.gateway.forget(channel)  # the run's items are done
    before = len(server.gateway.unattributed)
    reply = httpx.post(f"{channel.base_url}/chat/completions", timeout=10, trust_env=False,
                       json={"model": "scripted", "messages": [{"role": "user", "content": "book a room"}]})
    assert reply.status_code == 409
    (event,) = late
    assert event.type == "model_call" and event.late and event.response["status"] == 409
    assert len(server.gateway.unattributed) == before  # attributed to its item, not counted as nobody's


# -- which threads are waited for -----------------------------------------------------------------------------

def test_leftovers_waits_for_a_timer_and_not_for_idle_threads():
    before = leftovers.snapshot()
    stop = threading.Event()
    idle_wait = threading.Thread(target=stop.wait, name="waits-for-work")  # untimed: cannot act on its own
    harness = threading.Thread(target=stop.wait, args=(5,), name="arena-own")  # the harness's own
    pool = ThreadPoolExecutor(1, thread_name_prefix="framework-pool")
    pool.submit(lambda: None).result()  # its worker now idles on its queue
    timer = threading.Timer(0.3, lambda: None)
    for thread in (idle_wait, harness, timer):
        thread.start()
    try:
        time.sleep(0.05)
        assert [t.name for t in leftovers.busy(before)] == [timer.name]
        assert leftovers.wait_for(before, max_s=0.05) == [timer.name]  # the bound
        started = time.monotonic()
        assert leftovers.wait_for(before, max_s=5) == []  # once the timer has fired
        assert time.monotonic() - started < 2
        daemon = threading.Timer(5, lambda: None)
        daemon.daemon = True
        daemon.start()
        assert leftovers.busy(before, daemons=False) == [] and leftovers.busy(before) == [daemon]
        daemon.cancel()
    finally:
        stop.set()
        pool.shutdown()


def test_leftovers_in_the_harness_are_the_threads_an_items_thread_started():
    """In the harness's process, only what the adapter started (from an item's thread, or a thread started there)
    is waited for: a thread the harness starts meanwhile (preparing the next cell) is not."""
    leftovers.attribute()
    before = leftovers.snapshot()
    made: list[threading.Thread] = []

    def adapter_code() -> None:  # a framework's thread that starts a timer of its own
        inner = threading.Thread(target=lambda: made.append(threading.Timer(0.5, lambda: None)) or made[-1].start(),
                                 name="framework-worker")
        inner.start()
        inner.join()

    item_thread = threading.Thread(target=adapter_code, name="arena-item-hitl-01")
    harness_timer = threading.Timer(0.5, lambda: None)  # started by the test's own (main) thread
    item_thread.start()
    item_thread.join()
    harness_timer.start()
    try:
        assert leftovers.busy(before, started_by=leftovers.ITEM_PREFIX) == made
        assert set(leftovers.busy(before)) == {*made, harness_timer}
    finally:
        harness_timer.cancel()
        for timer in made:
            timer.cancel()



def test_a_timer_whose_start_a_framework_wrapped_is_still_the_adapters():
    """A framework's tracing may wrap `Timer.start` on its own class before the harness attributes threads (strands
    instruments threading so when its tracer is made, and a matrix runs strands in the harness's process before other
    in-process adapters): the timer an item's thread starts is still the adapter's, and the framework's wrapping is
    left in place. In a fresh process, as the order matters."""
    script = """
import threading
from arena import leftovers
calls, real_start = [], threading.Thread.start
def traced_start(self):  # what a tracer's wrapper does: note, then call through
    calls.append(self.name)
    real_start(self)
threading.Timer.start = traced_start
leftovers.attribute()
before, made = leftovers.snapshot(), []
def adapter_code():
    made.append(threading.Timer(0.5, lambda: None))
    made[-1].start()
item = threading.Thread(target=adapter_code, name="arena-item-hitl-01")
item.start()
item.join()
assert leftovers.busy(before, started_by=leftovers.ITEM_PREFIX) == made, "the timer is not the adapter's"
assert calls == [made[0].name], calls
assert threading.Timer.start is traced_start and threading.Thread.start is real_start, "a wrapping was replaced"
made[0].cancel()
"""
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr

# -- the scripted model's own failure ---------------------------------------------------------------------------

def _raises_on(item_id: str, policy):
    """The arena's policy, except that it raises (a missing key) on one item's requests."""
    def answer(messages, draw: Draw):
        if draw.item_id == item_id:
            return {}["capacity"]
        return (policy.bind(draw) if isinstance(policy, Sampled) else policy)(messages)

    return Sampled(answer)


def test_a_policy_that_raises_is_recorded_and_its_item_is_not_measured(server):
    base = catalog.load_arena(HITL)
    arena = replace(base, policies={**base.policies, "scripted": _raises_on("hitl-02", base.all_policies["scripted"])})
    from arena_builtins.adapters.vanilla import VanillaAdapter

    results = run_items(VanillaAdapter, arena, [i for i in arena.items if i.id in ITEMS], server=server,
                        model="scripted")
    ok, broken = results
    assert ok.status == "passed"
    assert broken.status == "errored" and broken.verdict == "could_not_measure"
    assert broken.error.startswith("the harness's scripted model failed (HTTP 500): ")
    assert "KeyError: 'capacity'" in broken.error
    calls = [e for e in broken.trace if e.type == "model_call"]
    assert calls and calls[-1].response["status"] == 500 and calls[-1].response["harness"] is True
    assert "KeyError" in calls[-1].response["error"]
    assert RunSummary.tally(results, arena=HITL, adapter="vanilla", framework="openai", framework_version=None,
                            pause_mechanism="", pause_kind="", model="scripted").verdicts == \
        {"passed": 1, "failed": 0, "could_not_measure": 1}


def test_scripted_failure_is_the_harnesss_own():
    response, answer = scripted_failure(KeyError("capacity"))
    assert response.status_code == 500
    assert answer == {"status": 500, "error": "arena: the scripted model failed: KeyError: 'capacity'",
                      "infrastructure": True, "harness": True}
