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

`meta.json` records the mode a run used (`process_tracking`). `ProcessTree.kill` ends every process of the tree
the mode can find; `ProcessTree.scope` says, in the words a trace records, what that is, and why a fallback mode
is used (`fallback_why`): never a silent group kill where a cgroup was expected.
"""

from __future__ import annotations

import atexit
import os
import secrets
import signal
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

MARKER_VAR = "ARENA_LEG"
_PROC = Path("/proc")
# this harness's own: every tree's marker starts with it, so the reaper (`reaper.py`) finds them after a SIGKILL
RUN_TOKEN = secrets.token_hex(4)


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
    # what `kill` ends, as a trace says it (the fallback modes say why there is no cgroup here)
    _SCOPE = ("its process group only, no cgroup here ({why}): a process that left the group (setsid) is neither "
              "killed nor seen")

    def __init__(self) -> None:
        self.marker = RUN_TOKEN + secrets.token_hex(8)
        self.root: int | None = None
        start_reaper()  # its processes end with the harness too, even one killed by SIGKILL

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

    @property
    def scope(self) -> str:
        """What `kill` ends, and what it may miss (the words a `crashed` event records)."""
        return self._SCOPE.format(why=fallback_why() or "not probed")


class EnvironTree(ProcessTree):
    mode = "environ"
    _SCOPE = ("its process group and every process that carries its environment marker, or descends from one, no "
              "cgroup here ({why}): a process that left the session and dropped its environment is neither killed "
              "nor seen")

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
    _SCOPE = "its cgroup (cgroup.kill): every process the worker started, whatever its session or group"

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
_NO_CGROUP: str | None = None  # why trees here are not cgroups, once probed


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
    """A cgroup of this harness's own under which leg cgroups can be made, or None (and `_NO_CGROUP` says why)."""
    global _NO_CGROUP
    asked = os.environ.get("ARENA_PROCESS_TRACKING")
    if asked in ("environ", "group"):
        _NO_CGROUP = f"ARENA_PROCESS_TRACKING={asked}"
        return None
    mount, own = _cgroup2_mount(), _own_cgroup()
    if mount is None or own is None:
        _NO_CGROUP = "no cgroup v2 hierarchy is mounted" if mount is None else "this process is in no cgroup v2"
        return None
    base = mount / own.lstrip("/")
    parent = base / f"arena-{os.getpid()}-{secrets.token_hex(3)}"
    try:
        parent.mkdir()
        probe = parent / "probe"
        probe.mkdir()
        (probe / "cgroup.procs").read_text()
        probe.rmdir()
    except OSError as exc:
        _NO_CGROUP = f"cannot make a cgroup under {base}: {exc.strerror or type(exc).__name__}" + \
            ("" if os.geteuid() == 0 else ", not root")
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


def fallback_why() -> str | None:
    """Why this process's trees are not cgroups (None: they are, or no tree was made yet)."""
    return _NO_CGROUP


def new_tree() -> ProcessTree:
    global _NO_CGROUP
    mode = tracking_mode()
    if mode == "cgroup":
        assert isinstance(_CGROUP_PARENT, Path)
        try:
            return CgroupTree(_CGROUP_PARENT)
        except OSError as exc:
            _NO_CGROUP = f"cannot make a leg's cgroup under {_CGROUP_PARENT}: {exc.strerror or type(exc).__name__}"
            return EnvironTree()
    return EnvironTree() if mode == "environ" else ProcessTree()


# -- the harness's own children: an in-process adapter's, and a reaper that outlives the harness ----------------------


def _task_children(tid: int) -> list[int]:
    """The processes the harness's thread `tid` started itself (the kernel's list; none once the thread ended)."""
    try:
        return [int(p) for p in (_PROC / "self" / "task" / str(tid) / "children").read_text().split()]
    except (OSError, ValueError):
        return []


def _cgroup_of(pid: int) -> str | None:
    try:
        for line in (_PROC / str(pid) / "cgroup").read_text().splitlines():
            if line.startswith("0::"):
                return line[3:].strip()
    except OSError:
        pass
    return None


def _in_a_tree(pid: int) -> bool:
    """A worker's (it carries a tree's marker, or sits in a cgroup other than the harness's): not an in-process leg's."""
    try:
        if f"{MARKER_VAR}=".encode() in (_PROC / str(pid) / "environ").read_bytes():
            return True
    except OSError:
        pass
    own = _own_cgroup()
    return own is not None and _cgroup_of(pid) not in (None, own)


class LegChildren:
    """The processes an in-process adapter's item starts: it has no worker whose tree could be killed, so the harness
    watches the item's thread instead. Every process that thread starts (the kernel's list of the thread's own
    children, `/proc/self/task/<tid>/children`, read every 0.1 s and once more as the thread ends) is the item's; with
    a cgroup here it is moved into a cgroup of the item's (so what it starts later, in any session, is the item's
    too), else its descendants at each look are. `end` ends them all when the item ends or times out (SIGTERM, then
    SIGKILL after `grace`) and returns what it ended; a hung item's thread is watched on until it ends, and whatever it
    starts meanwhile is killed at once.

    Not seen: a process started by another thread (a thread pool's) of the harness, and, without a cgroup, one a
    child started and left behind (double fork) between two looks."""

    def __init__(self, tid: int | None = None) -> None:
        self._reaper = start_reaper()  # first: the reaper is the harness's, not the item's
        self.tid = threading.get_native_id() if tid is None else tid
        self._baseline = set(_task_children(self.tid))  # what the thread had started before the adapter came
        self.tree: CgroupTree | None = None  # made when the thread's first child is seen (most items start none)
        self._cgroup = tracking_mode() == "cgroup"
        self._seen: dict[int, tuple[int | None, str]] = {}  # pid: (start time, command)
        self._lock = threading.Lock()
        self._ended = threading.Event()
        self._poller: threading.Thread | None = None

    @property
    def scope(self) -> str:
        """What `end` ends, and what it may miss (the words a `reclaimed` event records)."""
        if self.tree is not None:
            return "every process the item's thread started, and all they started (a cgroup of the item's)"
        return ("every process the item's thread started, and their descendants, no cgroup here "
                f"({fallback_why() or 'not probed'}): one left behind by a double fork between two looks is not seen")

    def watch(self, thread: threading.Thread) -> None:
        """Look at `thread`'s children every 0.1 s until it has ended and `end` was called."""
        def poll() -> None:
            while True:
                self.scan()
                if self._ended.is_set():
                    self._kill(self.members(), grace=0)  # what a hung item's thread starts after its end
                    if not thread.is_alive():
                        break
                time.sleep(0.1)
            if self.tree is not None:
                self.tree.release()

        self._poller = threading.Thread(target=poll, name=f"arena-children-{self.tid}", daemon=True)
        self._poller.start()

    def scan(self) -> None:
        """Take in what the item's thread has started since the last look (called from any thread)."""
        with self._lock:
            for pid in _task_children(self.tid):
                began = start_time(pid)
                if pid in self._baseline or pid == self._reaper or self._seen.get(pid, (None,))[0] == began \
                        or began is None or _in_a_tree(pid):
                    continue
                self._seen[pid] = (began, _cmd(pid))
                if self.tree is None and self._cgroup and isinstance(_CGROUP_PARENT, Path):
                    try:
                        self.tree = CgroupTree(_CGROUP_PARENT)
                    except OSError:
                        self._cgroup = False
                if self.tree is not None:  # it, then what it started before it was moved, into the item's cgroup
                    moved: set[int] = set()
                    todo = {pid}
                    while todo:  # until a look finds nothing new: what forks after its move is born in the cgroup
                        for each in todo:
                            if each != pid and (sub_began := start_time(each)) is not None:
                                self._seen.setdefault(each, (sub_began, _cmd(each)))
                            try:
                                (self.tree.path / "cgroup.procs").write_text(str(each))
                            except OSError:
                                pass
                        moved |= todo
                        todo = descendants(pid) - moved
            if self.tree is None:  # without a cgroup, their descendants at this look are the item's too
                for pid in list(self._seen):
                    if self._is_seen(pid):
                        for sub in descendants(pid):
                            if sub not in self._seen and (began := start_time(sub)) is not None:
                                self._seen[sub] = (began, _cmd(sub))

    def _is_seen(self, pid: int) -> bool:
        """Still the process seen then (not a later one with its pid), and running."""
        entry = self._seen.get(pid)
        return entry is not None and alive(pid) and start_time(pid) == entry[0]

    def members(self) -> list[ProcInfo]:
        """The item's processes alive now."""
        with self._lock:
            # its command now (one seen between its fork and its exec was seen with the harness's)
            found = {pid: _cmd(pid) for pid in self._seen if self._is_seen(pid)}
            if self.tree is not None:
                found.update({p.pid: p.cmd for p in self.tree.members()})
            else:
                for pid in list(found):
                    found.update({sub: _cmd(sub) for sub in descendants(pid) if alive(sub)})
        return [ProcInfo(pid, cmd) for pid, cmd in sorted(found.items())]

    def _kill(self, members: list[ProcInfo], grace: float) -> None:
        if not members:
            return
        if grace > 0:
            for proc in members:
                try:
                    os.kill(proc.pid, signal.SIGTERM)
                except (ProcessLookupError, PermissionError):
                    pass
            deadline = time.monotonic() + grace
            while time.monotonic() < deadline and any(alive(p.pid) for p in members):
                time.sleep(0.02)
        if self.tree is not None:
            self.tree.kill()
        for _ in range(50):
            left = [p.pid for p in self.members()]
            if not left:
                return
            _kill(left)
            time.sleep(0.01)

    def end(self, grace: float = 1.0) -> list[ProcInfo]:
        """End every process of the item (SIGTERM, SIGKILL after `grace` s); returns those it found alive."""
        self.scan()
        self._ended.set()
        members = self.members()
        self._kill(members, grace)
        if self._poller is None and self.tree is not None:
            self.tree.release()
        return members


_REAPER: tuple[int, int] | None = None  # (the harness's pid, its reaper's)
_REAPER_LOCK = threading.Lock()


def _running_child(pid: int) -> bool:
    try:
        return os.waitpid(pid, os.WNOHANG) == (0, 0)
    except ChildProcessError:
        return False


def start_reaper() -> int | None:
    """Start, once per harness process, the reaper (`reaper.py`): a small process in a session of its own that waits
    for the harness to end, however it ends (SIGKILL included), then kills every process of the harness's trees (its
    leg cgroups, `arena-<pid>-*`, or, without a cgroup, every process carrying one of its markers) and removes the
    cgroups. A worker dies with the harness by itself (PR_SET_PDEATHSIG, `deathsig.py`); what a worker started does not.
    Returns the reaper's pid (None: it could not be started, or ARENA_REAPER=0)."""
    global _REAPER
    if os.environ.get("ARENA_REAPER") == "0":
        return None
    with _REAPER_LOCK:
        if _REAPER is not None and _REAPER[0] == os.getpid() and _running_child(_REAPER[1]):
            return _REAPER[1]
        tracking_mode()  # the cgroup parent is made, if it can be, before the reaper is told where
        mount, own = _cgroup2_mount(), _own_cgroup()
        base = str(mount / own.lstrip("/")) if mount is not None and own is not None else "-"
        argv = [sys.executable, "-I", str(Path(__file__).with_name("reaper.py")), str(os.getpid()),
                str(start_time(os.getpid())), base, f"{MARKER_VAR}={RUN_TOKEN}"]
        quiet = [(os.POSIX_SPAWN_OPEN, fd, os.devnull, os.O_RDWR, 0) for fd in (0, 1, 2)]
        try:  # not a subprocess.Popen: it outlives the harness's objects (and is never waited for but here)
            pid = os.posix_spawn(sys.executable, argv, dict(os.environ), file_actions=quiet, setsid=True)
        except (OSError, AttributeError, NotImplementedError):
            return None
        _REAPER = (os.getpid(), pid)
        return pid
