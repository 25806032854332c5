from __future__ import annotations

import ipaddress
import os
import socket

import pytest

from arena import catalog
from arena.catalog import builtin_adapters
from arena.results import ItemResult
from arena.runner import run_items
from arena.server import HarnessServer

# No test may reach the internet: every framework's telemetry is off before anything imports it.
os.environ.setdefault("OTEL_SDK_DISABLED", "true")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("CREWAI_DISABLE_TELEMETRY", "true")
os.environ.setdefault("HF_HUB_OFFLINE", "1")


# The suite runs in worker processes (pyproject's addopts: `-n auto --dist loadfile`; `-n 0` for one process).
FIRST = "tests/report/test_findings_committed.py"  # holds the longest test: a full fresh matrix (ARENA_FULL_MATRIX=1)


def pytest_xdist_auto_num_workers(config) -> int:
    """One worker more than the machine has cores: most tests wait (on the model, a watched pause, a worker
    process starting) rather than compute, and a third worker fills those waits on two cores."""
    return (os.cpu_count() or 1) + 1


def pytest_collection_modifyitems(session, config, items) -> None:
    """The full matrix's file first, so a worker starts it at once and the others share the rest meanwhile;
    then the files with the most tests first, as xdist orders them (`--no-loadscope-reorder` in pyproject's
    addopts keeps this order: xdist's own would put the matrix's file of three tests near the end)."""
    files = [item.nodeid.split("::")[0] for item in items]
    count = {f: files.count(f) for f in set(files)}
    first_at = {f: files.index(f) for f in count}
    order = {id(item): (f != FIRST, -count[f], first_at[f]) for item, f in zip(items, files)}
    items.sort(key=lambda item: order[id(item)])


def _is_loopback(address) -> bool:
    host = address[0] if isinstance(address, tuple) else address
    if not isinstance(host, str):
        return True  # AF_UNIX paths and the like never leave the machine
    if host in ("localhost", ""):
        return True
    try:
        return ipaddress.ip_address(host.split("%")[0]).is_loopback
    except ValueError:
        return False  # a host name: connect() is only handed one after a lookup we also watch


@pytest.fixture(scope="session", autouse=True)
def no_network():
    """Every test runs offline: a connection to anything but loopback is refused and reported."""
    attempts: list[str] = []
    real_connect, real_connect_ex = socket.socket.connect, socket.socket.connect_ex
    real_getaddrinfo = socket.getaddrinfo

    def guard(address) -> None:
        if not _is_loopback(address):
            attempts.append(repr(address))
            raise OSError(f"arena tests are offline: refused a connection to {address!r}")

    def connect(self, address):
        if self.family in (socket.AF_INET, socket.AF_INET6):
            guard(address)
        return real_connect(self, address)

    def connect_ex(self, address):
        if self.family in (socket.AF_INET, socket.AF_INET6):
            guard(address)
        return real_connect_ex(self, address)

    def getaddrinfo(host, *args, **kwargs):
        name = host.decode() if isinstance(host, bytes) else host
        if name is not None and not _is_loopback(name) and name not in ("127.0.0.1", "::1"):
            try:
                ipaddress.ip_address(name)
            except ValueError:
                attempts.append(f"lookup {name}")
                raise socket.gaierror(socket.EAI_NONAME, f"arena tests are offline: no lookup of {name}")
        return real_getaddrinfo(host, *args, **kwargs)

    socket.socket.connect, socket.socket.connect_ex, socket.getaddrinfo = connect, connect_ex, getaddrinfo
    try:
        yield attempts
    finally:
        socket.socket.connect, socket.socket.connect_ex, socket.getaddrinfo = real_connect, real_connect_ex, real_getaddrinfo
    assert not attempts, f"tests tried to reach the network: {sorted(set(attempts))}"


@pytest.fixture(scope="session")
def store_servers():
    """The project's PostgreSQL and Redis servers (`scripts/services up`: installed with apt-get first when run as
    root on a machine without them), for the tests of `--store postgres|redis`. Started once, under a lock, whichever
    of the suite's workers gets here first; left running for the others (`.ci/run` stops them at the end)."""
    import fcntl
    import subprocess
    import tempfile
    from pathlib import Path

    script = Path(__file__).resolve().parents[1] / "scripts" / "services"
    with open(Path(tempfile.gettempdir()) / f"arena-services-{os.getuid()}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        done = subprocess.run([str(script), "up"], capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, f"scripts/services up failed: {done.stderr.strip() or done.stdout.strip()}"
    return done.stdout


@pytest.fixture(scope="session")
def server():
    with HarnessServer() as srv:
        yield srv


@pytest.fixture(scope="session")
def run_adapter(server):
    """run_adapter(name_or_class, profile="scripted", arena="human_in_the_loop", items=None) -> results"""

    def run(adapter, profile: str = "scripted", arena: str = "human_in_the_loop", items=None, timeout_s: float = 60.0,
            concurrency: int | None = None) -> list[ItemResult]:
        """A registered adapter's items run four at a time where it allows it (as `arena run` does); a
        class given directly (a test's own, often stateful) runs them one at a time unless asked."""
        spec = catalog.load_arena(arena)
        at_once = 1
        if isinstance(adapter, str):
            entry = builtin_adapters()[adapter]
            if not entry.available:
                pytest.skip(f"{entry.framework} is not installed")
            adapter = entry.load()
            at_once = 4 if entry.concurrent else 1
        chosen = [i for i in spec.items if items is None or i.id in items]
        return run_items(adapter, spec, chosen, server=server, model=profile, timeout_s=timeout_s,
                         concurrency=concurrency or at_once)

    return run


def normalised(result: ItemResult, model: bool = False) -> list[dict]:
    """The normalised trace; without the model side (how frameworks phrase requests and how the model
    answers through them) unless `model`, so that behaviour at the pause compares across frameworks."""
    return [e.normalised() for e in result.trace if model or e.type != "model_call"]


def behaviour(result: ItemResult) -> list[tuple]:
    """(type, tool) of every event but model calls: the shape of a run, for tests that pin it."""
    return [(e.type, e.tool) for e in result.trace if e.type != "model_call"]


@pytest.fixture(scope="session")
def vanilla_by_id(run_adapter):
    """The reference traces, run once per (profile, arena) for the whole session."""
    cache: dict[tuple[str, str], dict[str, ItemResult]] = {}

    def get(profile: str = "scripted", arena: str = "human_in_the_loop") -> dict[str, ItemResult]:
        if (profile, arena) not in cache:
            cache[profile, arena] = {r.item_id: r for r in run_adapter("vanilla", profile=profile, arena=arena)}
        return cache[profile, arena]

    return get


@pytest.fixture(scope="session")
def vanilla(vanilla_by_id):
    return vanilla_by_id()


@pytest.fixture(scope="session")
def vanilla_eager(vanilla_by_id):
    return vanilla_by_id("scripted-eager")


def wire_slice(server, run):
    """(results, the request bodies the scripted model received while `run()` ran)."""
    before = len(server.chat.requests)
    results = run()
    return results, server.chat.requests[before:]


def assert_all_pass(results: list[ItemResult], count: int = 12, legs: int = 2) -> None:
    assert len(results) == count
    for r in results:
        assert r.status == "passed", (r.item_id, r.error, [c for c in r.checks if not c.passed])
        assert r.checks and all(c.passed for c in r.checks), r.item_id
        assert r.legs == legs, r.item_id


def run_durable_pair(server, adapter: str, timeout_s: float = 120.0) -> list[ItemResult]:
    """durable_state's first approved and first denied item, each leg in a fresh worker process (forked
    from the adapter's fork server where `arena run` would fork it).

    Asserts what every native adapter must show there: both items pass, and the leg that paused and
    the leg that finished ran in two different processes.
    """
    import sys

    from arena.worker.client import WorkerAdapter, start_mode

    entry = builtin_adapters()[adapter]
    info = entry.load().info
    spec = catalog.load_arena("durable_state")
    fork = start_mode(sys.executable, entry.target) == "fork"
    workers: list[WorkerAdapter] = []

    def factory() -> WorkerAdapter:
        workers.append(WorkerAdapter(entry.target, info, sys.executable, server, restart_between_legs=True, fork=fork))
        return workers[-1]

    items = [i for i in spec.items if i.id in ("durable-01", "durable-02")]
    assert [i.resume_with[0].approved for i in items] == [True, False]
    results = run_items(factory, spec, items, server=server, model="scripted", timeout_s=timeout_s)
    for r, worker in zip(results, workers):
        assert r.status == "passed", (r.item_id, r.error, [c for c in r.checks if not c.passed])
        assert {c.name for c in r.checks} >= {"resumed_in_new_process", "state_survived", "no_replay", "completed"}
        first, second = worker.pids
        assert first != second
        assert next(e for e in r.trace if e.type == "suspended").pid == first
        assert next(e for e in r.trace if e.type == "final").pid == second
    return results


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item, nextitem):
    """A test module leaves no event loop running in the worker's main thread once its fixtures are torn down: every
    later test of the worker that calls `asyncio.run` would fail for it (Playwright's sync API, held open past its
    module, did)."""
    yield
    if nextitem is None or nextitem.module is not item.module:
        import asyncio

        if asyncio.events._get_running_loop() is not None:
            pytest.fail(f"{item.module.__name__} left an event loop running in the main thread after its last test",
                        pytrace=False)
