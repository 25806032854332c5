"""`arena view`: the site's pages served from run directories, re-read as they change.

Every request first looks at the run directories on disk (a stat of a few files each): a directory that appeared,
an item appended to a results.jsonl, a run that completed or whose process died is read again, and the pages are
rebuilt from what is there now; nothing changed, nothing is read. A run directory arena/rundir.py is still
creating (under a hidden `.<name>.staged` before its rename into place) shows as "being created", one whose
process is still writing it as "in progress".
"""

from __future__ import annotations

import socket
import threading
from dataclasses import dataclass
from pathlib import Path

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

from arena.report.matrix import DamagedRun, Run, _recency, compute_matrix, is_run_dir, load_run
from arena.rundir import status_of
from arena.report.site.pages import Site

WATCHED = ("meta.json", "results.jsonl", "late.jsonl", "summary.json")  # what a run directory changes as it is written
Signature = tuple[tuple[int, int] | None, ...]


def _signature(path: Path) -> Signature:
    out: list[tuple[int, int] | None] = []
    for name in WATCHED:
        try:
            st = (path / name).stat()
            out.append((st.st_mtime_ns, st.st_size))
        except OSError:
            out.append(None)
    return tuple(out)


def is_staged(path: Path) -> bool:
    """A run directory arena/rundir.py is still creating: hidden, renamed into place once its files are written."""
    return path.name.startswith(".") and path.name.endswith(".staged")


@dataclass
class _Read:
    signature: Signature
    run: Run | None  # None: it could not be read (the warning says why)
    warnings: list[str]
    state: str  # complete, interrupted, running, staged (arena.report.site.pages.STATE_TEXT)


class RunFolders:
    """The run directories under some folders (or given directly), each read again only when its files change."""

    def __init__(self, dirs: list[Path]):
        self.dirs = dirs
        self._read: dict[Path, _Read] = {}
        self._site: Site | None = None
        self._lock = threading.Lock()

    def _found(self) -> list[Path]:
        found: list[Path] = []
        for d in self.dirs:
            if is_run_dir(d):
                found.append(d)
            elif d.is_dir():
                try:
                    children = sorted(d.iterdir())
                except OSError:
                    continue
                found.extend(p for p in children if (not p.name.startswith(".") or is_staged(p)) and is_run_dir(p))
        return found

    def _load(self, path: Path, signature: Signature) -> _Read:
        warnings: list[str] = []
        try:
            run: Run | None = load_run(path, warnings.append)
        except DamagedRun as exc:
            return _Read(signature, None, [f"skipped a damaged run directory: {exc}"], "")
        assert run is not None
        return _Read(signature, run, warnings, "staged" if is_staged(path) else status_of(run.meta))

    def site(self) -> Site:
        """The pages as of now: run directories that changed since the last call read again, the rest kept."""
        with self._lock:
            found = self._found()
            changed = self._site is None or set(found) != set(self._read)
            for gone in set(self._read) - set(found):
                del self._read[gone]
            for path in found:
                signature = _signature(path)
                known = self._read.get(path)
                if known is None or known.signature != signature:
                    self._read[path] = self._load(path, signature)
                    changed = True
                elif known.run is not None and known.state == "running" and status_of(known.run.meta) != "running":
                    known.state = status_of(known.run.meta)  # its process is gone without a word: interrupted
                    changed = True
            if changed or self._site is None:
                self._site = self._build()
            return self._site

    def _build(self) -> Site:
        newest: dict[tuple[str, str, str], Run] = {}  # the matrix reads the runs `arena matrix --runs` would
        others: list[tuple[Run, str]] = []
        for read in self._read.values():
            if read.run is None:
                continue
            if read.state == "staged":
                others.append((read.run, read.state))
                continue
            current = newest.get(read.run.key)
            if current is None or _recency(read.run) > _recency(current):
                if current is not None:
                    others.append((current, self._state_of(current)))
                newest[read.run.key] = read.run
            else:
                others.append((read.run, read.state))
        m = compute_matrix(sorted(newest.values(), key=lambda r: r.key))
        warnings = [w for read in self._read.values() for w in read.warnings]
        return Site(m, others=others, warnings=warnings, live=True)

    def _state_of(self, run: Run) -> str:
        read = self._read.get(run.path)
        return read.state if read is not None else status_of(run.meta)


def make_app(folders: RunFolders) -> Starlette:
    """The site's paths, each page rendered from the run directories as they are at the request."""

    async def page(request: Request) -> Response:
        path = str(request.path_params.get("path", ""))
        site = await run_in_threadpool(folders.site)
        found = await run_in_threadpool(site.render, path)
        if found is None:
            return PlainTextResponse(f"no such page: /{path}", status_code=404)
        return Response(found[0], media_type=found[1], headers={"Cache-Control": "no-store"})

    return Starlette(routes=[Route("/{path:path}", page)])


def listen(host: str, port: int) -> socket.socket:
    """A listening socket on host:port (port 0: a free one), so the URL printed is the one that answers."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
        sock.listen(128)
    except OSError:
        sock.close()
        raise
    return sock


def serve(folders: RunFolders, sock: socket.socket) -> None:
    """Serve until Ctrl-C (or SIGTERM): uvicorn stops gracefully, then re-raises the signal to the caller."""
    import uvicorn

    config = uvicorn.Config(make_app(folders), log_level="warning", access_log=False, lifespan="off")
    uvicorn.Server(config).run(sockets=[sock])
