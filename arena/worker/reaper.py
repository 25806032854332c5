"""The harness's reaper: what the harness's legs started ends with the harness, even a harness killed by SIGKILL.

Started once per harness process (`procs.start_reaper`) in a session of its own, with the standard library only
(`python -I reaper.py <harness pid> <its start time> <cgroup base or -> <marker>`). It waits for the harness to end
(a pidfd, else a look every 0.2 s), then:

- writes `cgroup.kill` in every leg cgroup of the harness (`<base>/arena-<harness pid>-*/leg-*`: its workers' and its
  in-process items' processes, whatever their session) and removes those cgroups;
- kills every process whose initial environment carries the harness's marker prefix (`ARENA_LEG=<run token>`: a
  worker's tree without a cgroup), and their descendants.

After a normal exit the harness has done this itself and the reaper finds nothing. A worker dies with the harness by
itself (PR_SET_PDEATHSIG); a process the worker started does not: this is what ends it.
"""

from __future__ import annotations

import os
import select
import signal
import sys
import time
from pathlib import Path

PROC = Path("/proc")


def _stat(pid: int) -> list[str] | None:
    try:
        return (PROC / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None


def _running(pid: int, started: str) -> bool:
    fields = _stat(pid)
    return fields is not None and fields[0] not in ("Z", "X") and (started == "None" or fields[19] == started)


def wait_for(pid: int, started: str) -> None:
    """Until the harness has ended (a zombie not yet reaped counts as ended)."""
    try:
        fd = os.pidfd_open(pid)
    except (AttributeError, OSError):
        fd = None
    if fd is not None and _running(pid, started):
        poller = select.poll()
        poller.register(fd, select.POLLIN)
        while _running(pid, started):
            poller.poll(1000)
        return
    while _running(pid, started):
        time.sleep(0.2)


def _ppids() -> dict[int, int]:
    out = {}
    for entry in PROC.iterdir():
        if entry.name.isdigit():
            fields = _stat(int(entry.name))
            if fields is not None:
                out[int(entry.name)] = int(fields[1])
    return out


def _marked(needle: bytes) -> set[int]:
    found = set()
    for entry in PROC.iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            try:
                if any(var.startswith(needle) for var in (entry / "environ").read_bytes().split(b"\0")):
                    found.add(int(entry.name))
            except OSError:
                continue
    parents = _ppids()
    grew = True
    while grew:
        more = {pid for pid, ppid in parents.items() if ppid in found and pid not in found}
        found |= more
        grew = bool(more)
    found.discard(os.getpid())
    return found


def _cgroup_pids(path: Path) -> list[int]:
    try:
        return [int(p) for p in (path / "cgroup.procs").read_text().split()]
    except (OSError, ValueError):
        return []


def _kill(pids: list[int] | set[int]) -> None:
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def clean(harness: int, base: str, needle: bytes) -> None:
    parents = sorted(Path(base).glob(f"arena-{harness}-*")) if base != "-" else []
    for parent in parents:
        for leg in sorted(parent.glob("leg-*")):
            for _ in range(100):
                pids = _cgroup_pids(leg)
                if not pids:
                    break
                try:
                    (leg / "cgroup.kill").write_text("1")
                except OSError:
                    _kill(pids)
                time.sleep(0.02)
            try:
                leg.rmdir()
            except OSError:
                pass
    for _ in range(20):
        marked = _marked(needle)
        if not marked:
            break
        _kill(marked)
        time.sleep(0.05)
    for parent in parents:
        for _ in range(50):
            try:
                for probe in parent.glob("probe"):
                    probe.rmdir()
                parent.rmdir()
                break
            except FileNotFoundError:
                break
            except OSError:
                time.sleep(0.02)


def main(argv: list[str]) -> int:
    harness, started, base, marker = int(argv[1]), argv[2], argv[3], argv[4]
    for sig in (signal.SIGINT, signal.SIGHUP):  # a Ctrl-C or hang-up of the harness's terminal is not its end
        signal.signal(sig, signal.SIG_IGN)
    wait_for(harness, started)
    clean(harness, base, marker.encode())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
