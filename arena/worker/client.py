"""The harness side of a worker: an `Adapter` that forwards each leg to a subprocess.

The worker's tool calls come back over the harness's loopback endpoint into the item's own
executor, so they are logged exactly as in-process calls. A worker that crashes or stops replying
becomes that item's error; `terminate()` kills its whole process tree from any thread, which is
how the runner's timeout reclaims a hung worker.

Process identity is the harness's own: `leg_pid` is the pid the harness spawned for the leg (not
what the worker says about itself), and every worker lives in a process tree (`procs.py`) that the
harness lists after the worker is closed: whatever of it is still alive at a resume is a survivor.
"""

from __future__ import annotations

import asyncio
import os
import signal
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena.adapter import Adapter
from arena.types import AdapterInfo, Decision, DecisionSet, LegContext, LegResult
from arena.worker import forkserver, procs
from arena.worker.protocol import Reply, Request, WireContext
from arena.errors import ArenaError, UserError

REPO_ROOT = Path(__file__).resolve().parents[2]
QUIET_ENV = {
    # telemetry and hub look-ups off in every worker, whatever the framework
    "OTEL_SDK_DISABLED": "true",
    "CREWAI_DISABLE_TELEMETRY": "true",
    "CREWAI_TRACING_ENABLED": "false",
    "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    "HF_HUB_OFFLINE": "1",
    "LANGSMITH_TRACING": "false",
    "PYTHONUNBUFFERED": "1",
}


KILLED_EXIT_S = 10.0  # how long a killed worker's exit status is waited for


class WorkerError(ArenaError, RuntimeError):
    def __init__(self, message: str, remote_traceback: str | None = None):
        super().__init__(message)
        self.remote_traceback = remote_traceback  # the adapter's own, as its worker formatted it


def worker_env(extra_env: dict[str, str] | None = None) -> dict[str, str]:
    """The environment every worker (and fork server) starts with: telemetry off, the repository importable."""
    env = {**os.environ, **QUIET_ENV, **(extra_env or {})}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO_ROOT), env.get("PYTHONPATH", "")) if p)
    env["ARENA_PARENT_PID"] = str(os.getpid())  # workers and fork servers die with this process
    return env


def start_mode(python: str, target: str, extra_env: dict[str, str] | None = None) -> str:
    """How this adapter's workers start here: `fork` (from a fork server that imported the framework
    once), or `spawn (why not fork)`. Starts the fork server if it can be used."""
    if procs.tracking_mode() != "cgroup":
        return "spawn (forked workers need a cgroup of their own; process tracking here: " \
               f"{procs.tracking_mode()})"
    server = forkserver.server_for(python, target, worker_env(extra_env))
    return f"spawn ({server.unsafe})" if server.unsafe else "fork"


@dataclass
class WorkerState:
    """What the harness keeps of a suspended leg: a handle into the worker, and the JSON state if any."""

    handle: str | None
    value: Any
    is_json: bool


class WorkerAdapter(Adapter):
    """An adapter run in a worker process: each leg forwarded to the process that holds the paused run."""

    in_process = False
    def __init__(
        self,
        target: str,
        info: AdapterInfo,
        python: str,
        register: Any,  # HarnessServer.register / unregister pair owner
        restart_between_legs: bool = False,
        extra_env: dict[str, str] | None = None,
        fork: bool = False,
    ):
        self.info = info
        self.target = target
        self.python = python
        self.server = register
        self.restart_between_legs = restart_between_legs
        self.extra_env = extra_env or {}
        self.fork = fork  # start workers from the adapter's fork server (see start_mode)
        self.pids: list[int] = []
        self.lifecycle: list[tuple[str, int]] = []  # ("spawned" | "exited", pid), in order
        self.leg_pid: int | None = None  # the spawned process that ran the latest leg
        self._proc: asyncio.subprocess.Process | None = None
        self._tree: procs.ProcessTree | None = None
        self._closed: list[procs.ProcessTree] = []  # trees of workers that were closed between legs
        # the harness's tool endpoint per executor this adapter's legs were given (a leg may get another: the
        # runner's held tools in a concurrent replay)
        self._endpoints: dict[int, str] = {}
        self._stderr: Any = None
        # an arena's director may have the paused worker killed (SIGKILL) instead of closed at a suspension
        # when each leg gets a new process: a crash during the pause rather than an orderly exit
        self.kill_at_pause = False
        self.killed = None  # what the latest crash (`crash`, `kill_at_pause`) ended, as a trace says it
        # `--resume-on`: every leg after the first runs this adapter instead (another release of the framework, in
        # its own environment: target, python, fork), as a rolling deploy resumes a run paused by the old release
        self.then: tuple[str, str, bool] | None = None

    def resume_on(self, other: WorkerAdapter) -> WorkerAdapter:
        """Every leg after the first in a new process of `other`'s adapter and environment (it needs a new process
        per leg: the paused state passes only as the framework persisted it)."""
        if not self.restart_between_legs:
            raise UserError("--resume-on needs a new process for every leg (an arena with restart_between_legs)")
        self.then = (other.target, other.python, other.fork)
        return self

    async def _spawn(self, workdir: str) -> Any:
        tree = procs.new_tree()
        own = dict(tree.env())
        # a framework's files (config, keys, caches, lock files) stay inside the item's directory
        for var, sub in (("HOME", "home"), ("TMPDIR", "tmp"), ("XDG_DATA_HOME", "xdg-data")):
            own[var] = os.path.join(workdir, sub)
            os.makedirs(own[var], exist_ok=True)
        self._stderr = tempfile.TemporaryFile(mode="w+b")
        server = forkserver.server_for(self.python, self.target, worker_env(self.extra_env)) if self.fork else None
        if server is not None and not server.unsafe:
            proc: Any = await server.fork(own, workdir, self._stderr.fileno())
        else:
            proc = await asyncio.create_subprocess_exec(
                self.python, "-m", "arena.worker",
                stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=self._stderr,
                env={**worker_env(self.extra_env), **own}, cwd=workdir, start_new_session=True, limit=1 << 26,
            )
        tree.adopt(proc.pid)  # before the worker is sent anything, so before any adapter code runs
        self._tree = tree
        self.pids.append(proc.pid)
        self.lifecycle.append(("spawned", proc.pid))
        return proc

    def _stderr_tail(self) -> str:
        if self._stderr is None:
            return ""
        self._stderr.seek(0)
        lines = [l for l in self._stderr.read().decode(errors="replace").splitlines() if l.strip()]
        return lines[-1].strip()[:300] if lines else ""

    async def _call(self, req: Request, workdir: str) -> Reply:
        if self._proc is not None and self._proc.returncode is not None:  # it died (a crash): the next leg gets a new one
            await self._close_worker()
        if self._proc is None:
            self._proc = await self._spawn(workdir)
        proc = self._proc
        assert proc.stdin is not None and proc.stdout is not None
        try:
            proc.stdin.write((req.model_dump_json() + "\n").encode())
            await proc.stdin.drain()
        except (BrokenPipeError, ConnectionResetError):
            pass  # reported below from the exit code
        self.leg_pid = proc.pid
        line = await proc.stdout.readline()
        if not line:
            try:
                code: object = await asyncio.wait_for(proc.wait(), KILLED_EXIT_S)
            except asyncio.TimeoutError:
                code = "unknown (its fork server did not say)"
            tail = self._stderr_tail()
            raise WorkerError(f"worker exited with code {code} mid-leg" + (f": {tail}" if tail else ""))
        reply = Reply.model_validate_json(line)
        if not reply.ok:
            raise WorkerError(reply.error or "worker reported an error", reply.traceback)
        return reply

    def _wire(self, ctx: LegContext) -> WireContext:
        executor = ctx.tools.executor
        if id(executor) not in self._endpoints:
            self._endpoints[id(executor)] = self.server.register(executor)
        return WireContext.of(ctx, self._endpoints[id(executor)])

    def _result(self, reply: Reply) -> LegResult:
        result = reply.result
        assert result is not None
        if result.status == "suspended":
            result.state = WorkerState(reply.handle, reply.state, reply.state_is_json)
        return result

    async def start(self, ctx: LegContext) -> LegResult:
        reply = await self._call(Request(op="start", adapter=self.target, ctx=self._wire(ctx)), ctx.workdir)
        result = self._result(reply)
        if result.status == "suspended" and self.restart_between_legs:
            await self._close_worker()
        return result

    async def resume(self, state: WorkerState, decision: Decision | DecisionSet, ctx: LegContext) -> LegResult:
        return await self._resume(Request(op="resume", adapter=self.target, ctx=self._wire(ctx), decision=decision),
                                  state, ctx)

    async def continue_run(self, state: WorkerState, ctx: LegContext) -> LegResult:
        """A crashed run continued from what its framework persisted (`recover` channel, way `continue`)."""
        result: LegResult = await self.run_hook("continue_run", state, ctx=ctx)
        return result

    async def add_input(self, state: WorkerState, text: str, ctx: LegContext) -> WorkerState:
        """Input added to the paused run (the `input` channel). Returns the state to resume."""
        added: WorkerState = await self.run_hook("add_input", state, text, ctx=ctx)
        return added

    async def run_hook(self, hook: str, state: Any, *args: Any, ctx: LegContext) -> Any:
        """A channel's hook (Adapter.run_hook) run by the adapter in the worker that holds the paused state (a new
        worker given the JSON state, when every leg gets a new process, which then exits: the next leg gets a new one
        of its own). A hook that runs a leg returns its LegResult, as a resume does; one that returns a state, the
        state to resume."""
        req = Request(op="hook", adapter=self.target, ctx=self._wire(ctx), hook=hook, args=list(args))
        self._pass_state(req, state)
        reply = await self._call(req, ctx.workdir)
        if reply.result is not None:
            result = self._result(reply)
            if result.status == "suspended" and self.restart_between_legs:
                await self._close_worker()
            return result
        if self.restart_between_legs:
            await self._close_worker()
        return WorkerState(reply.handle, reply.state, reply.state_is_json)

    def _pass_state(self, req: Request, state: WorkerState) -> None:
        """What a request after the pause carries of the paused state (and which adapter takes it)."""
        if self.then is not None and self._proc is None:  # the first leg's worker is gone: the new release takes over
            self.target, self.python, self.fork = self.then
            req.adapter = self.target
        if self.restart_between_legs:
            if not state.is_json:
                raise WorkerError(f"{self.info.name} keeps its paused state in memory only; it cannot resume in a new process")
            req.state = state.value
        else:  # the live handle; its JSON state too, for a worker that does not hold it (a replayed resume)
            req.handle = state.handle
            req.state = state.value if state.is_json else None

    async def _resume(self, req: Request, state: WorkerState, ctx: LegContext) -> LegResult:
        self._pass_state(req, state)
        result = self._result(await self._call(req, ctx.workdir))
        if result.status == "suspended" and self.restart_between_legs:
            await self._close_worker()
        return result

    async def close_worker(self) -> None:
        """Close the worker as a process ends between legs (its tree kept: `survivors` lists what outlived it)."""
        await self._close_worker()

    async def _close_worker(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        if self.kill_at_pause and proc.returncode is None:
            self._kill_group(proc.pid)
            self.killed = self._kill_trees()
        if proc.returncode is None:
            try:
                assert proc.stdin is not None and proc.stdout is not None
                proc.stdin.write(b'{"op": "close"}\n')
                await proc.stdin.drain()
                await asyncio.wait_for(proc.stdout.readline(), 10)
                await asyncio.wait_for(proc.wait(), 5)
            except (asyncio.TimeoutError, BrokenPipeError, ConnectionResetError, AssertionError):
                pass
        self._kill_group(proc.pid)
        try:  # killed: its exit is at hand, unless its fork server no longer says (then it is not waited for)
            await asyncio.wait_for(proc.wait(), KILLED_EXIT_S)
        except asyncio.TimeoutError:
            pass
        self.lifecycle.append(("exited", proc.pid))
        if self._tree is not None:  # kept, not killed: what survives is measured before the resume
            self._closed.append(self._tree)
            self._tree = None

    def _trees(self) -> list[procs.ProcessTree]:
        return [*self._closed, *([self._tree] if self._tree is not None else [])]

    def _kill_trees(self) -> str:
        """SIGKILL to every process of every tree of this adapter's workers (kept: what still lives is a survivor
        at the next resume); returns what was killed, as a trace says it."""
        trees = self._trees()
        for tree in trees:
            tree.kill()
        scope = trees[-1].scope if trees else procs.ProcessTree().scope
        return f"{scope}; likewise every earlier leg's" if len(trees) > 1 else scope

    def crash(self) -> str:
        """A crash of the host the legs run on, from any thread: SIGKILL to the running worker and to every process
        this adapter's workers started (each worker's tree, `procs`: its cgroup, or the fallback, which says so).
        Unlike `terminate`, the trees are kept, so a process the kill could not end is a survivor at the
        recovery's resume. Returns what was killed, for the `crashed` event."""
        proc = self._proc
        if proc is not None:
            self._kill_group(proc.pid)
        self.killed = self._kill_trees()
        return self.killed

    def survivors(self) -> list[procs.ProcInfo]:
        """Processes of closed workers' trees still alive now: they left the group (and session)."""
        return [p for tree in self._closed for p in tree.members()]

    async def aclose(self) -> None:
        try:
            await self._close_worker()
        finally:
            for tree in self._closed:
                tree.release()
            self._closed.clear()
            for endpoint in self._endpoints.values():
                self.server.unregister(endpoint)
            self._endpoints.clear()
            if self._stderr is not None:
                self._stderr.close()

    @staticmethod
    def _kill_group(pid: int) -> None:
        try:
            os.killpg(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass

    def terminate(self) -> None:
        """Kill the worker and everything it started; safe from any thread."""
        proc = self._proc
        if proc is not None:
            self._kill_group(proc.pid)
        for tree in [*self._closed, *([self._tree] if self._tree is not None else [])]:
            tree.release()
