"""Which processes belong to a leg: the harness tracks them itself, whatever the leg's code does.

A worker's process group is not enough: a descendant that calls `setsid()` (or double-forks) leaves
the group and the session and survives a group kill, and could hold a paused run in memory across a
"restart". So every worker process is put in a *process tree* the harness can list and kill:

- `cgroup` (Linux with a writable cgroup v2 hierarchy, e.g. as root): the worker is moved into a
  cgroup of its own before it runs any adapter code. Every descendant stays in it whatever it does
  with sessions, groups or its environment; `cgroup.procs` lists them and `cgroup.kill` ends them.
- `environ` (other Linux): the worker's environment carries a marker (`ARENA_LEG=<id>`); members are
  the processes whose initial environment holds it, and their descendants. A descendant that both
  leaves the session and execs with a cleared environment is not found.
- `group` (elsewhere): the worker's process group only.

`meta.json` records the mode a run used (`process_tracking`).
"""

from __future__ import annotations

import atexit
import os
import secrets
import signal
import time
from dataclasses import dataclass
from pathlib import Path

MARKER_VAR = "ARENA_LEG"
_PROC = Path("/proc")


@dataclass(frozen=True)
class ProcInfo:
    pid: int
    cmd: str

    def to_json(self) -> dict[str, object]:
        return {"pid": self.pid, "cmd": self.cmd}


def _stat(pid: int) -> list[str] | None:
    """The fields of /proc/<pid>/stat after the command name (state first), or None if it is gone."""
    try:
        return (_PROC / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None


def alive(pid: int) -> bool:
    """Running (not a zombie)."""
    fields = _stat(pid)
    return fields is not None and fields[0] not in ("Z", "X")


def start_time(pid: int) -> int | None:
    """When a process started (clock ticks since boot): tells it from a later process with its pid."""
    fields = _stat(pid)
    try:
        return int(fields[19]) if fields else None
    except (IndexError, ValueError):
        return None


def descendants(root: int) -> set[int]:
    """Every process below `root` in the parent tree, now."""
    parents = _ppids()
    tree: set[int] = set()
    frontier = {root}
    while frontier:
        frontier = {pid for pid, ppid in parents.items() if ppid in frontier and pid not in tree}
        tree |= frontier
    return tree


def _cmd(pid: int) -> str:
    try:
        raw = (_PROC / str(pid) / "cmdline").read_bytes()
    except OSError:
        return "?"
    return " ".join(part.decode(errors="replace") for part in raw.split(b"\0") if part)[:200] or "?"


def _ppids() -> dict[int, int]:
    out = {}
    for entry in _PROC.iterdir():
        if entry.name.isdigit():
            try:
                out[int(entry.name)] = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
    return out


def _kill(pids: list[int]) -> None:
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


class ProcessTree:
    """The processes of one worker (and everything it starts)."""

    mode = "group"

    def __init__(self) -> None:
        self.marker = secrets.token_hex(8)
        self.root: int | None = None

    def env(self) -> dict[str, str]:
        return {MARKER_VAR: self.marker}

    def adopt(self, pid: int) -> None:
        """Called right after the spawn, before the worker is sent anything (so before any adapter code)."""
        self.root = pid

    def members(self) -> list[ProcInfo]:
        if self.root is None:
            return []
        try:
            pgid = os.getpgid(self.root)
        except ProcessLookupError:
            return []
        return [ProcInfo(self.root, _cmd(self.root))] if pgid == self.root and alive(self.root) else []

    def kill(self) -> None:
        if self.root is not None:
            try:
                os.killpg(self.root, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass

    def release(self) -> None:
        self.kill()


class EnvironTree(ProcessTree):
    mode = "environ"

    def members(self) -> list[ProcInfo]:
        needle = f"{MARKER_VAR}={self.marker}".encode()
        parents = _ppids()
        found: set[int] = set()
        for pid in parents:
            try:
                if needle in (_PROC / str(pid) / "environ").read_bytes().split(b"\0"):
                    found.add(pid)
            except OSError:
                continue
        if self.root is not None and self.root in parents:
            found.add(self.root)
        grew = True
        while grew:  # descendants of members, whatever their environment
            more = {pid for pid, ppid in parents.items() if ppid in found and pid not in found}
            found |= more
            grew = bool(more)
        return [ProcInfo(pid, _cmd(pid)) for pid in sorted(found) if pid != os.getpid() and alive(pid)]

    def kill(self) -> None:
        super().kill()
        for _ in range(20):
            members = self.members()
            if not members:
                return
            _kill([m.pid for m in members])
            time.sleep(0.02)


class CgroupTree(ProcessTree):
    mode = "cgroup"

    def __init__(self, parent: Path) -> None:
        super().__init__()
        self.path = parent / f"leg-{self.marker}"
        self.path.mkdir()

    def adopt(self, pid: int) -> None:
        super().adopt(pid)
        (self.path / "cgroup.procs").write_text(str(pid))

    def _pids(self) -> list[int]:
        try:
            return [int(p) for p in (self.path / "cgroup.procs").read_text().split()]
        except (OSError, ValueError):
            return []

    def members(self) -> list[ProcInfo]:
        return [ProcInfo(pid, _cmd(pid)) for pid in self._pids() if alive(pid)]

    def kill(self) -> None:
        kill_file = self.path / "cgroup.kill"
        for _ in range(50):
            pids = self._pids()
            if not pids:
                return
            try:
                kill_file.write_text("1")
            except OSError:
                _kill(pids)
            time.sleep(0.01)

    def release(self) -> None:
        self.kill()
        for _ in range(100):
            try:
                self.path.rmdir()
                return
            except FileNotFoundError:
                return
            except OSError:  # still emptying
                time.sleep(0.01)


_CGROUP_PARENT: Path | None | bool = False  # False: not probed yet


def _cgroup2_mount() -> Path | None:
    try:
        for line in (_PROC / "self" / "mountinfo").read_text().splitlines():
            left, _, right = line.partition(" - ")
            if right.split()[:1] == ["cgroup2"]:
                return Path(left.split()[4])
    except OSError:
        pass
    return None


def _own_cgroup() -> str | None:
    try:
        for line in (_PROC / "self" / "cgroup").read_text().splitlines():
            if line.startswith("0::"):
                return line[3:].strip()
    except OSError:
        pass
    return None


def _probe_cgroup() -> Path | None:
    """A cgroup of this harness's own under which leg cgroups can be made, or None."""
    if os.environ.get("ARENA_PROCESS_TRACKING") in ("environ", "group"):
        return None
    mount, own = _cgroup2_mount(), _own_cgroup()
    if mount is None or own is None:
        return None
    base = mount / own.lstrip("/")
    parent = base / f"arena-{os.getpid()}-{secrets.token_hex(3)}"
    try:
        parent.mkdir()
        probe = parent / "probe"
        probe.mkdir()
        (probe / "cgroup.procs").read_text()
        probe.rmdir()
    except OSError:
        try:
            parent.rmdir()
        except OSError:
            pass
        return None
    atexit.register(_remove_parent, parent)
    return parent


def _remove_parent(parent: Path) -> None:
    for child in list(parent.glob("leg-*")):
        tree = CgroupTree.__new__(CgroupTree)
        tree.path = child
        tree.release()
    try:
        parent.rmdir()
    except OSError:
        pass


def tracking_mode() -> str:
    """The mode new trees get here: cgroup, environ or group."""
    global _CGROUP_PARENT
    if _CGROUP_PARENT is False:
        _CGROUP_PARENT = _probe_cgroup()
    if _CGROUP_PARENT is not None:
        return "cgroup"
    if os.environ.get("ARENA_PROCESS_TRACKING") == "group" or not (_PROC / "self" / "environ").exists():
        return "group"
    return "environ"


def new_tree() -> ProcessTree:
    mode = tracking_mode()
    if mode == "cgroup":
        assert isinstance(_CGROUP_PARENT, Path)
        try:
            return CgroupTree(_CGROUP_PARENT)
        except OSError:
            return EnvironTree()
    return EnvironTree() if mode == "environ" else ProcessTree()
