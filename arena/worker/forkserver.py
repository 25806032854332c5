"""Fresh worker processes without the import cost: a fork server per adapter and environment (one for the
adapter classes of a module that prepare it alike, `preparation`).

A fork server is a process that imports an adapter's framework once (the adapter class's `preload`
modules) and then, for every worker the harness asks for, forks a child that becomes an ordinary
worker (`arena.worker.__main__`) on pipes the harness handed over. The server itself never runs any
adapter code, so a child starts with the framework imported but no run state: a leg that must run
in a new process (durable_state, an isolated environment) costs a fork, not an interpreter start and
a framework import.

Forking is only safe from a single-threaded process: a framework that starts a thread at import
(telemetry, a logging worker) would leave its locks held in the child. The server reports the
threads it has after the imports; with any, the harness falls back to a plain spawn for that
adapter and says why (meta.json `worker_start`). So does a harness that cannot put each forked child
in a process tree of its own (`procs.tracking_mode()` other than `cgroup`): an environment marker
cannot reach a forked child's initial environment.

The protocol, on a Unix socket: the harness sends one JSON line `{"env": {...}, "cwd": ...}` with
three file descriptors (the child's stdin, stdout and stderr); the server answers `{"pid": N}`, and
later `{"exit": code}` when that child has exited (it is the child's parent and reaps it).
"""

from __future__ import annotations

import asyncio
import atexit
import functools
import gc
import json
import os
import platform
import signal
import socket
import subprocess
import sys
import tempfile
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arena.errors import SetupError

READY_TIMEOUT_S = 180.0
# What every worker imports once it runs, whatever the adapter: imported in the server, not in each child.
WORKER_MODULES = ("arena.worker.__main__", "arena.worker.protocol", "arena.worker.deathsig", "ctypes.util",
                  "arena.tools.box", "arena.types",
                  "arena.streaming", "asyncio",
                  "concurrent.futures.thread", "httpx", "httpcore",
                  "encodings.idna", "stringprep")  # the loopback host's name, encoded by the first request


# -- the server process -------------------------------------------------------------------------------


def serve(path: str, target: str) -> None:
    import importlib

    from arena.catalog import load_target
    from arena.worker import deathsig

    cls = load_target(target)
    for module in (*cls.preload, *WORKER_MODULES):
        try:
            importlib.import_module(module)
        except ImportError:  # not in this release of the framework: a child imports what it needs itself
            pass
    from arena import http

    if "openai" in sys.modules:  # what the first client of every child would import and load, then builds
        http.warm()
        try:
            http.rehearse()
        except Exception:  # noqa: BLE001 - a release it cannot rehearse: each child builds it at its first request
            pass
    http.tls()  # the CA certificates every child's calls to the harness would load
    # Two answers each found by running a program, then kept: once here, not in every child. What SDKs report of
    # the machine (the openai SDK, at a client's first request) runs `uname -p`; the worker's libc, `ldconfig -p`.
    platform.platform()
    try:
        deathsig.libc()
    except OSError:  # no libc to load: each child finds out for itself (and lives without the parent-death signal)
        pass
    cls.warm()
    complete_models(cls.complete)
    threads = sorted(t.name for t in threading.enumerate() if t is not threading.main_thread())
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(64)
    print(json.dumps({"ready": True, "threads": threads, "pid": os.getpid()}), flush=True)
    if threads:
        return  # not safe to fork: the harness spawns instead
    children: dict[int, socket.socket] = {}

    def reap(*_: Any) -> None:
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            conn = children.pop(pid, None)
            if conn is not None:
                try:
                    conn.sendall((json.dumps({"exit": os.waitstatus_to_exitcode(status)}) + "\n").encode())
                except OSError:
                    pass
                conn.close()

    signal.signal(signal.SIGCHLD, reap)
    # Everything imported so far is moved out of the collector's reach: a child's collections would otherwise
    # write to every object's header and so copy every page of the server's memory it shares (the Python
    # docs' advice for fork without exec), most of a forked leg's own CPU.
    gc.freeze()
    while True:
        # stdin is a pipe the harness holds open and never writes: end of file means the harness is gone
        # (even killed by -9), and so the server goes, and its children with it (their parent-death signal).
        ready = _wait_readable([listener, sys.stdin])
        if sys.stdin in ready and not os.read(sys.stdin.fileno(), 1):
            os._exit(0)
        if listener not in ready:
            continue
        conn, _ = listener.accept()
        message, fds, _flags, _addr = socket.recv_fds(conn, 1 << 20, 3)
        if not message or len(fds) != 3:
            conn.close()
            continue
        request = json.loads(message.decode())
        pid = os.fork()
        if pid == 0:  # the child: a fresh worker on the harness's pipes
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            listener.close()
            conn.close()
            for other in children.values():
                other.close()
            os.setsid()
            for target_fd, fd in enumerate(fds):
                os.dup2(fd, target_fd)
                os.close(fd)
            os.chdir(request["cwd"])
            os.environ.update(request["env"])
            # the item's TMPDIR (its lock files, its caches): tempfile keeps the folder it first found, and the server's
            # imports may have asked already (crewai's do), which a child would otherwise inherit
            tempfile.tempdir = None
            os.environ["ARENA_PARENT_PID"] = str(os.getppid())  # the server: a child dies with it
            from arena.worker.__main__ import main

            try:
                main()
            finally:
                os._exit(1)
        for fd in fds:
            os.close(fd)
        children[pid] = conn
        conn.sendall((json.dumps({"pid": pid}) + "\n").encode())


def complete_models(names: Sequence[str]) -> list[str]:
    """Build the schemas of these pydantic models (`module.Class`), which their library defers to first use
    (`defer_build`, or a forward reference): every forked worker would otherwise build them again at its first
    call. A name not in this release, or a model that cannot be completed yet, is left to the worker. Returns the
    names completed."""
    import importlib

    done = []
    for name in names:
        module, _, attr = name.rpartition(".")
        try:
            model = getattr(importlib.import_module(module), attr)
            # depth 0: names resolve in the model's own module and where it was defined, not in this function
            if model.model_rebuild(raise_errors=False, _parent_namespace_depth=0) is not False:
                done.append(name)
        except Exception:  # noqa: BLE001 - another release: the worker completes what it uses itself
            continue
    return done


def _wait_readable(streams: list[Any]) -> list[Any]:
    import select

    while True:
        try:
            return select.select(streams, [], [])[0]
        except InterruptedError:  # SIGCHLD arrived: reaped; wait again
            continue


# -- the harness side ---------------------------------------------------------------------------------


class ForkedProcess:
    """A worker the fork server started: the interface of `asyncio.subprocess.Process` that WorkerAdapter uses."""

    def __init__(self, pid: int, stdin: asyncio.StreamWriter, stdout: asyncio.StreamReader,
                 status: asyncio.StreamReader, status_writer: asyncio.StreamWriter) -> None:
        self.pid = pid
        self.stdin = stdin
        self.stdout = stdout
        self.returncode: int | None = None
        self._status = status
        self._status_writer = status_writer

    async def wait(self) -> int:
        if self.returncode is None:
            line = await self._status.readline()
            try:
                self.returncode = int(json.loads(line)["exit"]) if line else -9
            except (ValueError, KeyError):
                self.returncode = -9
            self._status_writer.close()
        return self.returncode


@dataclass
class ForkServer:
    python: str
    target: str
    path: str = ""
    proc: subprocess.Popen[bytes] | None = None
    unsafe: str = ""  # why this adapter's workers are spawned instead
    lock: threading.Lock = field(default_factory=threading.Lock)

    def start(self, env: dict[str, str]) -> None:
        from arena import scratch

        folder = tempfile.mkdtemp(prefix=scratch.prefix("fork"))
        self.path = os.path.join(folder, "fork.sock")
        self.proc = subprocess.Popen(
            [self.python, "-m", "arena.worker.forkserver", self.path, self.target],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env,
            start_new_session=True,
        )  # stdin stays open, unwritten, for the server's life: its end of file is this process's death
        assert self.proc.stdout is not None
        line = _read_line(self.proc.stdout, READY_TIMEOUT_S)
        try:
            ready = json.loads(line)
        except json.JSONDecodeError:
            ready = {}
        if not ready.get("ready"):
            self.unsafe = "the fork server did not start"
        elif ready.get("threads"):
            self.unsafe = f"threads after import: {', '.join(ready['threads'][:3])}"
        if self.unsafe:
            self.stop()

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.proc.wait()
        if self.path:
            Path(self.path).unlink(missing_ok=True)
            try:
                Path(self.path).parent.rmdir()
            except OSError:
                pass

    def _request(self, env: dict[str, str], cwd: str, fds: list[int]) -> tuple[socket.socket, int]:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(READY_TIMEOUT_S)  # a server that stopped answering is an error, never a wait without end
        sock.connect(self.path)
        socket.send_fds(sock, [(json.dumps({"env": env, "cwd": cwd}) + "\n").encode()], fds)
        line = b""
        while not line.endswith(b"\n"):  # byte by byte: the exit line that follows stays in the socket
            try:
                chunk = sock.recv(1)
            except TimeoutError:
                sock.close()
                raise SetupError(f"the fork server did not answer within {READY_TIMEOUT_S:g}s") from None
            if not chunk:
                sock.close()
                raise SetupError("the fork server closed the connection")
            line += chunk
        sock.settimeout(None)  # the exit line comes when the worker ends, read by the event loop
        return sock, int(json.loads(line)["pid"])

    async def fork(self, env: dict[str, str], cwd: str, stderr_fd: int) -> ForkedProcess:
        loop = asyncio.get_running_loop()
        child_in, harness_in = os.pipe()
        harness_out, child_out = os.pipe()
        try:
            sock, pid = await loop.run_in_executor(None, self._request, env, cwd, [child_in, child_out, stderr_fd])
        except BaseException:
            os.close(harness_in)
            os.close(harness_out)
            raise
        finally:
            os.close(child_in)
            os.close(child_out)
        reader, writer = await asyncio.open_unix_connection(sock=sock)
        stdout = asyncio.StreamReader(limit=1 << 26, loop=loop)
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(stdout, loop=loop), os.fdopen(harness_out, "rb", 0))
        transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, os.fdopen(harness_in, "wb", 0))
        stdin = asyncio.StreamWriter(transport, protocol, None, loop)
        return ForkedProcess(pid, stdin, stdout, reader, writer)


def _read_line(stream: Any, timeout: float) -> str:
    """One line from a blocking pipe, or '' after `timeout` seconds."""
    out: list[bytes] = []

    def read() -> None:
        out.append(stream.readline())

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(timeout)
    return out[0].decode(errors="replace") if out else ""


_SERVERS: dict[tuple[str, Any], ForkServer] = {}
_LOCK = threading.Lock()


@functools.cache
def preparation(target: str) -> Any:
    """What a fork server for `target` is: its module and what its class has the server do before it forks
    (`preload`, `complete`, `warm`). Adapter classes of one module that prepare alike (google_adk and
    google_adk_confirm, smolagents and smolagents_emulated, langgraph and langgraph_per_call) share a server, and its
    start: a child loads its own class; the server only imports and builds. A class the harness cannot load here
    has a server of its own."""
    from arena.catalog import load_target

    try:
        cls = load_target(target)
    except Exception:  # noqa: BLE001 - not loadable in the harness's environment: a server of its own
        return target
    warm = cls.warm
    return (target.split(":", 1)[0], tuple(cls.preload), tuple(cls.complete), f"{warm.__module__}.{warm.__qualname__}")


def server_for(python: str, target: str, env: dict[str, str]) -> ForkServer:
    """The fork server of this adapter's kind (`preparation`) in this environment, started on first use (shared by
    all its items)."""
    key = (python, preparation(target))
    with _LOCK:
        server = _SERVERS.get(key)
        if server is None:
            server = _SERVERS[key] = ForkServer(python, target)
    with server.lock:
        if server.proc is None and not server.unsafe:
            server.start(env)
    return server


@atexit.register
def _stop_all() -> None:
    for server in list(_SERVERS.values()):
        server.stop()


if __name__ == "__main__":
    serve(sys.argv[1], sys.argv[2])
