"""Every process a leg starts ends with its item, and with the harness (issue 51, section 4, first bullet).

- An in-process adapter has no worker whose tree the harness could kill: the harness watches the item's thread's own
  children (`procs.LegChildren`) and ends them when the item ends or times out, recording a `reclaimed` event.
- A harness killed with SIGKILL cannot end anything itself: its workers die with it (PR_SET_PDEATHSIG), and the
  reaper (`arena/worker/reaper.py`), a process of its own session started with the harness, ends what they started.

The faulty adapters (`tests/procs_faults.py`) start `sleep <a duration unique to the test>` in a session of its own;
the tests find it by that command line, and kill whatever is left of it in teardown.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from arena.worker import procs

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="needs Linux /proc")


def _sleeps(duration: str) -> list[int]:
    """The running `sleep <duration>` processes."""
    needle = f"sleep\0{duration}\0".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if (entry / "cmdline").read_bytes() == needle and procs.alive(int(entry.name)):
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def _gone_within(duration: str, seconds: float) -> list[int]:
    deadline = time.monotonic() + seconds
    while (left := _sleeps(duration)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return left


@pytest.fixture
def duration() -> Iterator[str]:
    """A `sleep` duration no other process here has; whatever of it is left is killed at the end."""
    value = f"617.{random.randrange(10**6, 10**7)}"
    yield value
    for pid in _sleeps(value):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def _env(duration: str, **extra: str) -> dict[str, str]:
    return {**os.environ, "ARENA_TEST_SLEEP": duration, "PYTHONPATH": str(ROOT), **extra}


def _events(run_dir: Path, item: str, kind: str) -> list[dict]:
    lines = (run_dir / "traces" / f"{item}.jsonl").read_text().splitlines()
    return [e for e in map(json.loads, lines) if e["type"] == kind]


def test_an_in_process_adapters_child_ends_with_its_timed_out_item(tmp_path, duration):
    """The issue's case: an in-process adapter starts a child (in a session of its own) and hangs; when `arena run
    --timeout 3` returns, the child is gone, and the item's trace says what the harness ended."""
    out = tmp_path / "out"
    r = subprocess.run([sys.executable, "-m", "arena", "run", "human_in_the_loop", "-a",
                        "tests.procs_faults:StartsAChildAndHangs", "--item", "hitl-01", "--timeout", "3",
                        "--out", str(out), "--json"], capture_output=True, text=True, timeout=120, cwd=ROOT,
                       env=_env(duration))
    assert '"adapter":"starts_a_child_and_hangs"' in r.stdout, r.stderr
    assert _sleeps(duration) == [], "the timed-out item's child outlived `arena run`"
    (run_dir,) = out.glob("*-starts_a_child_and_hangs-*")
    (reclaimed,) = _events(run_dir, "hitl-01", "reclaimed")
    assert "(timed out)" in reclaimed["text"] and "the harness ended every process the item's thread started" \
        in reclaimed["text"]
    assert [p["cmd"] for p in reclaimed["data"]["processes"]] == [f"sleep {duration}"]
    assert not reclaimed["late"]  # recorded before the item was sealed


def test_a_child_left_by_a_finished_item_ends_with_it_and_the_reference_adapter_has_none(tmp_path, duration):
    """A child left running by an item that ends normally is ended too (its verdict unchanged); vanilla, which starts
    none, has no `reclaimed` event."""
    out = tmp_path / "out"
    r = subprocess.run([sys.executable, "-m", "arena", "run", "human_in_the_loop", "-a",
                        "tests.procs_faults:StartsAChildAndFinishes", "-a", "vanilla", "--item", "hitl-01",
                        "--out", str(out), "--json"], capture_output=True, text=True, timeout=180, cwd=ROOT,
                       env=_env(duration))
    summaries = {s["adapter"]: s for s in map(json.loads, r.stdout.splitlines())}
    assert summaries["starts_a_child_and_finishes"]["passed"] == 1 and summaries["vanilla"]["passed"] == 1, r.stderr
    assert _sleeps(duration) == []
    (leaves,) = out.glob("*-starts_a_child_and_finishes-*")
    (reclaimed,) = _events(leaves, "hitl-01", "reclaimed")
    assert "(finished)" in reclaimed["text"]
    assert [p["cmd"] for p in reclaimed["data"]["processes"]] == [f"sleep {duration}"]
    (vanilla,) = out.glob("*-vanilla-*")
    assert _events(vanilla, "hitl-01", "reclaimed") == []


@pytest.mark.parametrize("mode", ["cgroup", "environ"])
def test_leg_children_are_ended_with_their_descendants_and_a_later_one_of_a_hung_thread_at_once(
        mode, duration, monkeypatch):
    """`LegChildren` in each tracking mode: the thread's child and what it started (a grandchild in a session of its
    own) are ended by `end`, and a child the hung thread starts after the item's end is killed as soon as it is seen;
    a process another thread started is not the item's."""
    monkeypatch.setattr(procs, "_CGROUP_PARENT", False)  # probed again
    monkeypatch.setattr(procs, "_NO_CGROUP", None)
    if mode == "environ":
        monkeypatch.setenv("ARENA_PROCESS_TRACKING", "environ")
    elif procs.tracking_mode() != "cgroup":
        pytest.skip("needs a cgroup of the harness's own (cgroup v2, root)")
    others = subprocess.Popen(["sleep", duration])  # this thread's: not the item's
    made: dict[str, object] = {}
    release = threading.Event()

    def item() -> None:
        children = made["children"] = procs.LegChildren()
        children.watch(threading.current_thread())
        made["sh"] = subprocess.Popen(["sh", "-c", f"setsid sleep {duration} & sleep {duration}"])
        release.wait(30)  # hung until the test lets it go
        made["late"] = subprocess.Popen(["sleep", duration])  # after its item ended
        time.sleep(1)

    thread = threading.Thread(target=item, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 10
        while len(_sleeps(duration)) < 3 and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.3)  # a look of the poller's
        children = made["children"]
        assert isinstance(children, procs.LegChildren)
        assert (children.tree is not None) == (mode == "cgroup"), children.scope
        ended = children.end(grace=0.5)
        assert len([p for p in ended if p.cmd == f"sleep {duration}"]) == 2, ended
        assert _sleeps(duration) == [others.pid]
        release.set()
        deadline = time.monotonic() + 5
        while "late" not in made and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _gone_within(duration, 3) == [others.pid]  # the hung thread's later child went at once
        thread.join(5)
    finally:
        release.set()
        others.kill()
        others.wait()


def _until_sleeping(proc: subprocess.Popen[bytes], duration: str) -> list[int]:
    deadline = time.monotonic() + 120
    while not (found := _sleeps(duration)):
        assert proc.poll() is None, "the run ended before its leg started the child"
        assert time.monotonic() < deadline, "the leg never started its child"
        time.sleep(0.1)
    return found


def _killed_harness(duration: str, tmp_path: Path, **extra: str) -> list[int]:
    """`arena run durable_state` (every leg in a worker) of an adapter whose leg starts a child and hangs, killed
    with SIGKILL once the child runs; returns the children still alive 10 s later."""
    proc = subprocess.Popen([sys.executable, "-m", "arena", "run", "durable_state", "-a",
                             "tests.procs_faults:StartsAChildAndHangs", "--item", "durable-01", "--out",
                             str(tmp_path / "out")], cwd=ROOT, env=_env(duration, **extra),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        _until_sleeping(proc, duration)
    finally:
        proc.kill()
        proc.wait()
    return _gone_within(duration, 10)


@pytest.mark.parametrize("tracking", ["default", "environ"])
def test_a_harness_killed_with_sigkill_takes_its_workers_children_with_it(tracking, duration, tmp_path):
    """The issue's case: SIGKILL of `arena run` while a worker's leg hangs with a child (in a session of its own):
    within a few seconds no child is alive (the reaper ended it: the leg's cgroup, or its environment marker)."""
    extra = {"ARENA_PROCESS_TRACKING": "environ"} if tracking == "environ" else {}
    assert _killed_harness(duration, tmp_path, **extra) == []


def test_without_the_reaper_a_killed_harness_leaves_its_workers_children(duration, tmp_path):
    """What the test above would see without the reaper (ARENA_REAPER=0): the worker dies with the harness, its
    child does not. (The test can fail: it is the reaper that ends the child.)"""
    left = _killed_harness(duration, tmp_path, ARENA_REAPER="0")
    try:
        assert left, "the child died without a reaper: the test above proves nothing"
    finally:  # and what the absent reaper would have removed: the child, its cgroups
        for pid in left:
            cgroup = procs._cgroup_of(pid)
            os.kill(pid, signal.SIGKILL)
            mount = procs._cgroup2_mount()
            if cgroup and mount is not None and "/arena-" in cgroup:
                leg = mount / cgroup.lstrip("/")
                for _ in range(50):
                    try:
                        leg.rmdir()
                        leg.parent.rmdir()
                        break
                    except FileNotFoundError:
                        break
                    except OSError:
                        time.sleep(0.05)
