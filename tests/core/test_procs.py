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
