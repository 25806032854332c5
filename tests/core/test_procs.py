"""Process trees: a descendant that leaves the worker's session is still found, and killed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from arena.worker import procs

# Once told to go (as a worker is by its first request), forks a grandchild that leaves the session
# (setsid) and outlives its parent: a daemon.
DAEMON = r"""
import os, sys, time
sys.stdin.readline()
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        with open(sys.argv[1] + ".tmp", "w") as f:  # whole or not at all: the test reads it once it exists
            f.write(str(os.getpid()))
        os.replace(sys.argv[1] + ".tmp", sys.argv[1])
        time.sleep(120)
    os._exit(0)
time.sleep(120)
"""


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except OSError:
        return False


def _trees() -> list[procs.ProcessTree]:
    trees: list[procs.ProcessTree] = [procs.EnvironTree()]
    if procs.tracking_mode() == "cgroup":
        trees.append(procs.new_tree())
    return trees


@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="needs Linux /proc")
@pytest.mark.parametrize("tree", _trees(), ids=lambda t: t.mode)
def test_a_daemon_that_left_the_session_survives_the_group_kill_and_is_found(tree, tmp_path):
    marker = tmp_path / "daemon.pid"
    proc = subprocess.Popen([sys.executable, "-c", DAEMON, str(marker)], env={**os.environ, **tree.env()},
                            start_new_session=True, stdin=subprocess.PIPE)
    tree.adopt(proc.pid)
    proc.stdin.write(b"go\n")
    proc.stdin.flush()
    deadline = time.monotonic() + 10
    while not marker.exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    daemon = int(marker.read_text())
    try:
        os.killpg(proc.pid, signal.SIGKILL)  # what closing a worker does
        proc.wait()
        assert _alive(daemon), "the daemon should have survived the group kill"
        assert [p.pid for p in tree.members()] == [daemon]
    finally:
        tree.release()
    deadline = time.monotonic() + 5
    while _alive(daemon) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not _alive(daemon)
    assert tree.members() == []


def test_tracking_mode_is_one_of_the_documented_ones():
    assert procs.tracking_mode() in ("cgroup", "environ", "group")


def test_a_fallback_tree_says_what_its_kill_misses_and_why(monkeypatch):
    """Without leg cgroups (here: asked for), a tree's `scope`, the words a `crashed` event records, names the
    fallback and why it is used: never a silent group kill."""
    for mode, words in (("group", "its process group only"), ("environ", "environment marker")):
        monkeypatch.setenv("ARENA_PROCESS_TRACKING", mode)
        monkeypatch.setattr(procs, "_CGROUP_PARENT", False)  # probed again
        monkeypatch.setattr(procs, "_NO_CGROUP", None)
        assert procs.tracking_mode() == mode
        tree = procs.new_tree()
        assert tree.mode == mode and words in tree.scope
        assert f"no cgroup here (ARENA_PROCESS_TRACKING={mode})" in tree.scope
        assert "neither killed nor seen" in tree.scope


@pytest.mark.skipif(procs.tracking_mode() != "cgroup", reason="needs a cgroup of the harness's own (cgroup v2, root)")
def test_a_cgroup_kill_ends_a_daemon_that_left_the_session_and_the_tree_is_kept(tmp_path):
    """`kill` (what a crash does) ends the double-forked, setsid daemon with the worker, and leaves the tree to be
    listed: nothing of it is alive."""
    tree = procs.new_tree()
    assert "its cgroup (cgroup.kill)" in tree.scope
    marker = tmp_path / "daemon.pid"
    proc = subprocess.Popen([sys.executable, "-c", DAEMON, str(marker)], env={**os.environ, **tree.env()},
                            start_new_session=True, stdin=subprocess.PIPE)
    tree.adopt(proc.pid)
    proc.stdin.write(b"go\n")
    proc.stdin.flush()
    deadline = time.monotonic() + 10
    while not marker.exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    daemon = int(marker.read_text())
    try:
        assert {p.pid for p in tree.members()} >= {daemon}
        tree.kill()
        proc.wait()
        deadline = time.monotonic() + 5
        while _alive(daemon) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert not _alive(daemon) and tree.members() == []
        assert tree.path.exists()  # kept (released when the item ends)
    finally:
        tree.release()
