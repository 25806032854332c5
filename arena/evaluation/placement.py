"""Where an adapter runs: in this process, or in worker processes (an isolated adapter's own environment, a
fork server); its second process for the items whose decision another process carries out; whether its items
may run at once. Preparing is done once per adapter and kept (`get_ready` does it for the next cell ahead)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from functools import cache, partial
from importlib import metadata
from typing import Any

from arena.catalog import AdapterEntry
from arena.spec import ArenaSpec
from arena.adapter import Adapter
from arena.types import AdapterInfo, EvalItem
from arena.evaluation.reporting import Reporter
from arena.evaluation.selection import Target


def prepare(target: Target, server: Any, restart_between_legs: bool, say: Callable[[str], None]
            ) -> tuple[AdapterInfo, str | None, Callable[[], Adapter], str]:
    """(info, framework version, adapter factory, how workers start); an isolated adapter's environment is
    built here, and its fork server started.

    Isolated adapters always run in a worker; with `restart_between_legs` every adapter does, and
    each leg gets a fresh worker process.
    """
    from arena.worker import envs
    from arena.worker.client import WorkerAdapter, start_mode

    cls = target.load() if isinstance(target, AdapterEntry) else target
    info = cls.info
    if isinstance(target, AdapterEntry) and target.isolated:
        python = envs.ensure_env(target.env_name, say=say)
        version = envs.installed_version(target.env_name, info.framework)
        mode = start_mode(str(python), target.target)
        return info, version, partial(WorkerAdapter, target.target, info, str(python), server, restart_between_legs,
                                      fork=mode == "fork"), mode
    version = _dist_version(info.framework)
    if restart_between_legs or not concurrent(target):
        module_target = f"{cls.__module__}:{cls.__qualname__}"
        mode = start_mode(sys.executable, module_target)
        # An adapter whose framework keeps process-wide state (not `concurrent`) would run its items one at a time
        # here; forked, each item has a process of its own, and they run at once. Spawned, each item would pay an
        # interpreter and its framework's import: it stays here, one at a time.
        if restart_between_legs or mode == "fork":
            return info, version, partial(WorkerAdapter, module_target, info, sys.executable, server,
                                          restart_between_legs, fork=mode == "fork"), mode
    return info, version, cls, "in-process"


def get_ready(spec: ArenaSpec, target: Target, server: Any, reporter: Reporter) -> None:
    """While a cell runs, make the next one ready: import its adapter, build its environment, start its fork
    server (each done once and kept, so the cell's own `prepare` finds them). What fails here fails again there,
    where it is reported."""
    try:
        prepare(target, server, spec.restart_between_legs, lambda message: reporter.say(message, "info"))
    except Exception:  # noqa: BLE001 - reported when the cell itself prepares
        pass


def _dist_version(dist: str) -> str | None:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def _worker_target(target: Target) -> str:
    """What a worker process imports to make the adapter: the registered target, or the class's `module:Class`."""
    return target.target if isinstance(target, AdapterEntry) else f"{target.__module__}:{target.__qualname__}"


@cache
def _why_not_importable(module_target: str) -> str | None:
    """Why a worker process cannot make this `module:Class` (None: it can). Asked of a process started as a worker
    is (this Python, the worker's environment, outside the current directory), once per target."""
    import subprocess
    import tempfile

    from arena.worker.client import worker_env

    module, _, name = module_target.partition(":")
    if module == "__main__" or "<locals>" in name or "." in name:
        return f"{module_target} is not importable by name (a class of __main__, or defined inside a function or class)"
    probe = "import sys\nfrom arena.catalog import load_target\nload_target(sys.argv[1])"
    with tempfile.TemporaryDirectory() as cwd:
        try:
            done = subprocess.run([sys.executable, "-c", probe, module_target], env=worker_env(), cwd=cwd,
                                  capture_output=True, text=True, timeout=120)
        except subprocess.TimeoutExpired:
            return f"importing {module_target} in a worker process took more than 120 s"
    if done.returncode == 0:
        return None
    lines = [line for line in done.stderr.strip().splitlines() if line.strip()]
    return lines[-1] if lines else f"importing {module_target} in a worker process exited {done.returncode}"


def no_second_process(arena: ArenaSpec, target: Target, worker_start: str, items: list[EvalItem]) -> str | None:
    """Why the items that need a second process of the adapter cannot have one (None: they can). A registered
    adapter always can; so can a `module:Class` a worker process can import. One that cannot (a class of `__main__`,
    or of a module only this process can reach) would be resumed where it paused: those items are not measured."""
    if arena.second_process is None or not any(arena.second_process(i) for i in items):
        return None
    if worker_start != "in-process" or isinstance(target, AdapterEntry):
        return None
    why = _why_not_importable(_worker_target(target))
    if why is None:
        return None
    return (f"{target_name(target)} is given as module:Class and a worker process cannot import it ({why}): the "
            "item's decision must be carried out by a second process of the adapter, so it is not measured")


def second_process(arena: ArenaSpec, target: Target, info: AdapterInfo, worker_start: str, server: Any,
                    items: list[EvalItem]) -> Callable[[], Adapter] | None:
    """For items whose decision is carried out by a second process (`ArenaSpec.second_process`: a state resumed
    twice at once, a decision given later from a new process): the second adapter, in a worker process of its own
    (a registered adapter, or a `module:Class` a worker can import, that otherwise runs in this process), so the
    two share only what the framework persisted. None: the adapter already runs in workers (each instance its own
    process), or no item needs one, or the class cannot be imported there (`no_second_process`: those items are
    not measured)."""
    from arena.worker.client import WorkerAdapter, start_mode

    if arena.second_process is None or not any(arena.second_process(i) for i in items):
        return None
    if worker_start != "in-process" or no_second_process(arena, target, worker_start, items) is not None:
        return None
    module_target = _worker_target(target)
    mode = start_mode(sys.executable, module_target)
    return partial(WorkerAdapter, module_target, info, sys.executable, server, False, fork=mode == "fork")


def concurrent(target: Target) -> bool:
    """Whether the adapter's items may run at once (its framework keeps no event-loop-bound state per process)."""
    return not isinstance(target, AdapterEntry) or target.concurrent


def isolated(target: Target) -> bool:
    return isinstance(target, AdapterEntry) and target.isolated


def target_name(target: Target) -> str:
    return target.name if isinstance(target, AdapterEntry) else f"{target.__module__}:{target.__qualname__}"
