"""arena as a library: `evaluate()` runs an arena on adapters, `evaluate_matrix()` runs the matrix.

This is what `arena run` and `arena matrix` do, without the command line: the CLI parses, calls these,
and renders what they return. Bad input raises `UserError` (one line); an adapter whose environment
cannot be built, or that its arena declines, is left out and named in the returned `Evaluation`; what
happens while it runs is told to a `Reporter` (progress, warnings), silent by default.

    import arena
    runs = arena.evaluate("human_in_the_loop", ["vanilla"], out=Path("runs"))
    assert all(r.status == "passed" for run in runs for r in run.results)
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache, partial
from importlib import metadata
from pathlib import Path
from typing import Any, Literal, Protocol

from arena import catalog, stores
from arena.catalog import AdapterEntry
from arena.errors import UserError
from arena.paths import writable_dir
from arena.report.matrix import Run, arena_order
from arena.results import ItemResult, RunSummary
from arena.spec import ArenaSpec
from arena.streaming import streamed_label, why_not_streamed
from arena.types import AdapterInfo, EvalItem, ResumableRunner, StoreKind

Target = AdapterEntry | type[ResumableRunner]  # a catalog entry, or a class given as module:Class
Level = Literal["info", "dim", "warning", "error"]


class Reporter(Protocol):
    """Hears what happens during an evaluation (the CLI draws progress bars from it)."""

    def say(self, message: str, level: Level = "info") -> None:
        """A line for the person running it: an environment being built, an adapter skipped, a warning."""

    def started(self, key: str, label: str, total: int) -> None:
        """A run of one arena × adapter × model begins: `total` item runs."""

    def result(self, key: str, result: ItemResult) -> None:
        """One item run of that run ended (also each result a resumed run already had)."""

    def finished(self, key: str, outcome: str) -> None:
        """That run ended: "n/m passed", or why it did not run ("not run: ...", "failed: ...")."""


class Silent:
    """The default reporter: hears everything, says nothing."""

    def say(self, message: str, level: Level = "info") -> None:
        pass

    def started(self, key: str, label: str, total: int) -> None:
        pass

    def result(self, key: str, result: ItemResult) -> None:
        pass

    def finished(self, key: str, outcome: str) -> None:
        pass


class Declined(Exception):
    """The arena does not run this adapter (ArenaSpec.declines): nothing would be measured."""


class Evaluation(list[Run]):
    """The runs an evaluation made (each as its run directory holds it: meta, results with their traces,
    the summary), and the adapters that made none: `failed` (their environment could not be built) and
    `declined` (their arena does not run them), each with the reason."""

    def __init__(self, runs: Sequence[Run] = ()) -> None:
        super().__init__(runs)
        self.failed: dict[str, str] = {}
        self.declined: dict[str, str] = {}
        self.nothing_to_do = False  # a resumed run directory that was already complete

    @property
    def summaries(self) -> list[RunSummary]:
        return [r.summary for r in self if r.summary is not None]


def default_concurrency() -> int:
    """Items at once when not asked: most of an item's time is waiting (the model, the watched pause),
    so twice the cores, at most 8."""
    return max(1, min(8, 2 * (os.cpu_count() or 1)))


# -- which adapters ----------------------------------------------------------------------------------

def select_adapters(names: Sequence[str | type[ResumableRunner]], reporter: Reporter | None = None
                    ) -> list[tuple[str, Target]]:
    """Resolve adapter names ("all", a registered name, `name@version`, "module:Class") or classes to
    (name, target); an unknown or uninstalled one is a UserError."""
    from arena.versions import is_versioned

    reporter = reporter or Silent()
    registry = catalog.adapters()

    def broken(entry: AdapterEntry) -> str | None:
        """Why a plugin adapter cannot run: its class is imported here, just before it runs."""
        try:
            entry.load()
        except ValueError as exc:
            return f"adapter {entry.name!r} (from {entry.distribution}): {exc}"
        return None

    chosen: list[tuple[str, Target]] = []
    for name in names or ["all"]:
        if isinstance(name, type):
            chosen.append((_checked_class(name).info.name, name))
        elif name == "all":
            available = [e for e in registry.values() if e.available]
            skipped = [e.name for e in registry.values() if not e.available]
            if skipped:
                reporter.say(f"not installed here, skipped: {', '.join(skipped)}", "dim")
            for entry in available:
                why = broken(entry) if entry.plugin else None
                if why is not None:  # one broken plugin does not stop the others
                    reporter.say(f"{why}; skipped", "warning")
                else:
                    chosen.append((entry.name, entry))
        elif name in registry:
            entry = registry[name]
            if entry.plugin:
                why = broken(entry)
                if why is not None:
                    raise UserError(why)
            elif not entry.available:
                raise UserError(f"adapter {name!r} needs {entry.framework} installed: uv sync --extra {name}")
            chosen.append((name, entry))
        elif is_versioned(name):
            chosen.append(_versioned(name, registry))
        elif ":" in name:
            try:
                cls = catalog.load_target(name)
            except ValueError as exc:
                raise UserError(str(exc)) from None
            chosen.append((cls.info.name, cls))
        else:
            raise UserError(f"unknown adapter {name!r}; choose from {', '.join([*registry, 'all'])} or module:Class")
    unique: dict[str, Target] = {}
    for n, a in chosen:
        unique.setdefault(n, a)
    return list(unique.items())


def _checked_class(cls: type) -> type[ResumableRunner]:
    if not isinstance(getattr(cls, "info", None), AdapterInfo) or not hasattr(cls, "start") or not hasattr(cls, "resume"):
        raise UserError(f"{cls.__qualname__} does not implement ResumableRunner (an AdapterInfo `info`, start, resume)")
    return cls


def _versioned(name: str, registry: dict[str, AdapterEntry]) -> tuple[str, Target]:
    """`adapter@version`: the registered adapter against that release of its framework, in its own environment."""
    from arena.versions import VersionError, split, versioned_entry

    try:
        base, version = split(name)
        if base not in registry:
            raise UserError(f"unknown adapter {base!r} in {name!r}; choose from {', '.join(registry)}")
        entry = versioned_entry(registry[base], version)
    except VersionError as exc:
        raise UserError(str(exc)) from None
    return entry.name, entry


# -- one run -----------------------------------------------------------------------------------------

def _prepare(target: Target, server: Any, restart_between_legs: bool, say: Callable[[str], None]
             ) -> tuple[AdapterInfo, str | None, Callable[[], ResumableRunner], str]:
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
    if restart_between_legs or not _concurrent(target):
        module_target = f"{cls.__module__}:{cls.__qualname__}"
        mode = start_mode(sys.executable, module_target)
        # An adapter whose framework keeps process-wide state (not `concurrent`) would run its items one at a time
        # here; forked, each item has a process of its own, and they run at once. Spawned, each item would pay an
        # interpreter and its framework's import: it stays here, one at a time.
        if restart_between_legs or mode == "fork":
            return info, version, partial(WorkerAdapter, module_target, info, sys.executable, server,
                                          restart_between_legs, fork=mode == "fork"), mode
    return info, version, cls, "in-process"


def _get_ready(spec: ArenaSpec, target: Target, server: Any, reporter: Reporter) -> None:
    """While a cell runs, make the next one ready: import its adapter, build its environment, start its fork
    server (each done once and kept, so the cell's own `_prepare` finds them). What fails here fails again there,
    where it is reported."""
    try:
        _prepare(target, server, spec.restart_between_legs, lambda message: reporter.say(message, "info"))
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


def _no_second_process(arena: ArenaSpec, target: Target, worker_start: str, items: list[EvalItem]) -> str | None:
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
    return (f"{_target_name(target)} is given as module:Class and a worker process cannot import it ({why}): the "
            "item's decision must be carried out by a second process of the adapter, so it is not measured")


def _second_process(arena: ArenaSpec, target: Target, info: AdapterInfo, worker_start: str, server: Any,
                    items: list[EvalItem]) -> Callable[[], ResumableRunner] | None:
    """For items whose decision is carried out by a second process (`ArenaSpec.second_process`: a state resumed
    twice at once, a decision given later from a new process): the second adapter, in a worker process of its own
    (a registered adapter, or a `module:Class` a worker can import, that otherwise runs in this process), so the
    two share only what the framework persisted. None: the adapter already runs in workers (each instance its own
    process), or no item needs one, or the class cannot be imported there (`_no_second_process`: those items are
    not measured)."""
    from arena.worker.client import WorkerAdapter, start_mode

    if arena.second_process is None or not any(arena.second_process(i) for i in items):
        return None
    if worker_start != "in-process" or _no_second_process(arena, target, worker_start, items) is not None:
        return None
    module_target = _worker_target(target)
    mode = start_mode(sys.executable, module_target)
    return partial(WorkerAdapter, module_target, info, sys.executable, server, False, fork=mode == "fork")


def _concurrent(target: Target) -> bool:
    """Whether the adapter's items may run at once (its framework keeps no event-loop-bound state per process)."""
    return not isinstance(target, AdapterEntry) or target.concurrent


def _isolated(target: Target) -> bool:
    return isinstance(target, AdapterEntry) and target.isolated


def _target_name(target: Target) -> str:
    return target.name if isinstance(target, AdapterEntry) else f"{target.__module__}:{target.__qualname__}"


def run_one(arena: ArenaSpec, adapter_name: str, target: Target, model: str, out: Path, server: Any, *,
            timeout: float = 60.0, items: list[EvalItem] | None = None,
            on_result: Callable[[ItemResult], None] | None = None, base_url: str | None = None,
            concurrency: int = 1, resume: Path | None = None, epochs: int = 1, seed: int = 0,
            say: Callable[[str, Level], None] = lambda message, level: None, stream: bool = False,
            store: StoreKind = "sqlite", resume_on: tuple[str, Target] | None = None) -> Run:
    """Run one arena on one adapter with one model; write its run directory; return the run as written.

    With `store` postgres or redis the adapter keeps each item's paused state on that server, in its framework's own
    store for it (its `postgres` / `redis` channel; an adapter without one is Declined): the run is named
    `<arena>@<store>` and its meta says which server (`"store"`).

    With `resume_on` (name, target), every leg after the first runs that adapter instead, in a new process of its own
    environment (another release of the same framework: a run paused by one release resumed by the next, the state
    passing only through the framework's own store, as in a rolling deploy): the run is named `<arena>@upgrade`, its
    row is `resume_on`'s, and its meta says which releases (`"upgrade"`).

    With `stream` every leg is streamed (the adapter's `stream` channel): the run is named
    `<adapter> (streamed)` and its meta says `"stream": true`; an adapter without the channel is Declined.

    With `epochs` > 1 every item runs that many times (a resumed run completes its missing (item, epoch) pairs).

    Raises EnvError when an isolated adapter's environment cannot be built, Declined when the arena does
    not run the adapter.
    """
    from arena.model.resolve import resolve_model
    from arena import leftovers
    from arena.rundir import RunDir, fold_late
    from arena.runner import PAUSE_DWELL_S, QUIET_MAX_S, QUIET_S, run_items, settle
    from arena.worker.procs import tracking_mode

    items = arena.items if items is None else items
    model_target = resolve_model(model, base_url, arena.accepted_profiles)
    info, version, factory, worker_start = _prepare(target, server, arena.restart_between_legs,
                                                    lambda message: say(message, "info"))
    why = arena.declined(info) or (why_not_streamed(info) if stream else None) or stores.why_not_kept(info, store)
    if why is not None:
        raise Declined(why)
    upgrade: dict[str, Any] | None = None
    if resume_on is not None:
        then_name, then_target = resume_on
        _check_resume_on(arena, stream, store)
        then_info, then_version, then_factory, _ = _prepare(then_target, server, True,
                                                            lambda message: say(message, "info"))
        if then_info.framework != info.framework:
            raise UserError(f"--resume-on {then_name}: {then_info.framework} is not {adapter_name}'s framework "
                            f"({info.framework})")
        why = arena.declined(then_info)
        if why is not None:
            raise Declined(why)
        upgrade = {"from": adapter_name, "from_version": version, "to": then_name, "to_version": then_version}
        first_factory = factory

        def factory() -> ResumableRunner:  # the first leg's worker, moving to the next release after it
            return first_factory().resume_on(then_factory())  # type: ignore[attr-defined, no-any-return]

        adapter_name, version, target = then_name, then_version, then_target
    items, not_measured = arena.items_for(info, items)
    alone = _no_second_process(arena, target, worker_start, items)
    if alone is not None and arena.second_process is not None:  # those items would be resumed where they paused
        not_measured.update({i.id: alone for i in items if arena.second_process(i)})
        items = [i for i in items if i.id not in not_measured]
    if not_measured:
        reasons = sorted(set(not_measured.values()))
        say(f"{adapter_name}: {len(not_measured)} item(s) not measured ({', '.join(not_measured)}): "
            f"{'; '.join(reasons)}", "warning")
    if not items:
        raise Declined(f"none of the items can be measured: {'; '.join(sorted(set(not_measured.values())))}")
    if worker_start == "in-process" and not _concurrent(target):
        concurrency = 1
    pause_kind, mechanism = arena.pause_kind_of(info), arena.pause_mechanism_of(info)
    if pause_kind == "unsupported":
        what = "tool-level approval gate" if arena.gated else "pause primitive"
        say(f"{adapter_name}: {info.framework} has no {what} (pause kind unsupported); "
            "items still run to show what happens without one", "warning")
    meta = {"framework": info.framework, "framework_version": version, "pause_mechanism": mechanism,
            "pause_kind": pause_kind, "capabilities": info.carries("ask").model_dump(),
            "restart_between_legs": arena.restart_between_legs,
            "declared_capabilities": arena.capabilities_of(info).model_dump(),
            "base_url": "loopback (scripted)" if model_target.scripted else model_target.upstream,
            "model_gateway": "scripted" if model_target.scripted else "recording proxy",
            "process_tracking": tracking_mode() if worker_start != "in-process" else "in-process",
            "body_pause": info.kind("body_pause"), "body_pause_mechanism": info.mechanism("body_pause"),
            "pause_dwell_s": PAUSE_DWELL_S, "quiet_s": QUIET_S,
            "worker_start": worker_start, "concurrency": concurrency, "items": [i.id for i in items],
            "epochs": epochs, "seed": seed, "target": _target_name(target)}
    if not_measured:  # only then: other runs' meta stays as it was
        meta["not_measured"] = not_measured
    if isinstance(target, AdapterEntry) and target.source:  # a framework from a checkout or a git ref
        from arena.versions import framework_source

        meta["framework_source"] = framework_source(target.source)
    if stream:  # likewise
        meta["stream"], meta["stream_mechanism"] = True, info.mechanism("stream")
        adapter_name = streamed_label(adapter_name)
    if store != "sqlite":  # likewise
        try:
            meta["store"] = {**stores.describe(store), "mechanism": info.mechanism(store)}
        except stores.StoreError as exc:
            raise UserError(str(exc)) from None
    arena_name = stores.scoped(arena.name, store)
    if upgrade is not None:  # likewise
        meta["upgrade"], meta["framework_version"], meta["target"] = upgrade, version, _target_name(target)
        arena_name = upgraded(arena.name)
    done: list[ItemResult] = []
    if resume is not None:  # complete an interrupted run: only its missing items, into it
        run_dir, done = RunDir.reopen(resume)
        for result in done:
            if on_result is not None:
                on_result(result)
    else:
        run_dir = RunDir(out, arena_name, adapter_name, model, meta)
    finished = {(r.item_id, r.epoch): r for r in done}

    def record(result: ItemResult) -> None:
        run_dir.add(result)
        if on_result is not None:
            on_result(result)

    todo = [i for i in items if any((i.id, e) not in finished for e in range(1, epochs + 1))]
    leftovers.attribute()  # an in-process adapter's threads: those its items' threads start from here on
    before = leftovers.snapshot()
    fresh = run_items(factory, arena, todo, server=server, model=model_target, timeout_s=timeout,
                      on_result=record, on_late=run_dir.add_late, concurrency=concurrency,
                      spare_factory=_second_process(arena, target, info, worker_start, server, todo),
                      epochs=epochs, seed=seed, skip=set(finished), stream=stream, store=store)
    if todo:  # what the last items left running still lands in late.jsonl: wait for it, then a last quiet period
        still = leftovers.wait_for(before, started_by=leftovers.ITEM_PREFIX) if worker_start == "in-process" else []
        settle(lambda: run_dir.last_late, QUIET_S, QUIET_MAX_S)
        if still:  # what they do from now on is in late.jsonl, folded by whoever reads the run directory
            run_dir.meta["leftovers_at_end"] = still
            say(f"{adapter_name}: {len(still)} thread(s) the adapter left were still running when the run wrote its "
                f"results, {leftovers.LEFTOVER_MAX_S:g} s after its last item ({', '.join(still)}); what they do "
                "later is in late.jsonl and in every reading of the run directory, not in this summary", "warning")
    finished.update(((r.item_id, r.epoch), r) for r in fresh)
    results = [finished[(i.id, e)] for e in range(1, epochs + 1) for i in items if (i.id, e) in finished]
    results = fold_late(run_dir.path, results, arena)  # so the summary, table and --json show it too
    summary = RunSummary.tally(
        results, epochs=epochs, arena=arena_name, adapter=adapter_name, framework=info.framework, framework_version=version,
        pause_mechanism=mechanism, pause_kind=pause_kind, model=model, run_dir=str(run_dir.path),
    )
    run_dir.finish(summary, results)
    # as a reader of the run directory gets it (meta as JSON data), without reading it back
    return Run(path=run_dir.path, meta=json.loads(json.dumps(run_dir.meta)), results=results, summary=summary)


# -- arena run ---------------------------------------------------------------------------------------

def upgraded(arena: str) -> str:
    """The name a run of `arena` across an upgrade goes by (`--resume-on`): `durable_state@upgrade`."""
    return f"{arena}@upgrade"


def _check_resume_on(spec: ArenaSpec, stream: bool, store: str) -> None:
    """`--resume-on` needs a new process for every leg (the state passes only through the framework's store)."""
    if not spec.restart_between_legs or stream or store != "sqlite":
        raise UserError(f"--resume-on needs an arena whose every leg runs in a new process (not {spec.name}), "
                        "plain and on the default store")


def _check_store(kind: str) -> None:
    """A known store whose server answers, before anything runs: else one line (UserError)."""
    if kind not in stores.STORES:
        raise UserError(f"unknown store {kind!r}; choose from {', '.join(stores.STORES)}")
    if kind != "sqlite":
        try:
            stores.server_version(kind)
        except stores.StoreError as exc:
            raise UserError(str(exc)) from None


def _arena(arena: str | ArenaSpec) -> ArenaSpec:
    if isinstance(arena, ArenaSpec):  # given as it is, not from the catalog: its checks are looked at here
        from arena.checks import validate_checks

        try:
            validate_checks(arena)
        except ValueError as exc:
            raise UserError(f"arena {arena.name!r}: {exc}") from None
        return arena
    spec = catalog.find_arena(arena)
    if spec is None:
        raise UserError(f"unknown arena {arena!r}; choose from {', '.join(catalog.arena_names())}")
    return spec


@dataclass
class _Resumed:
    target: str
    model: str
    items: list[str]
    status: str
    epochs: int
    seed: int
    stream: bool = False
    store: StoreKind = "sqlite"


def _resumable(path: Path, arena_name: str, adapters: Sequence[object], model: str | None,
               items: Sequence[str] | None, epochs: int | None, seed: int | None) -> _Resumed:
    """What an interrupted run directory was running (its adapter, model, items), checked against the call."""
    from arena.rundir import status_of

    if items:
        raise UserError("--resume runs the run directory's own items; leave out --item")
    try:
        meta = json.loads((path / "meta.json").read_text())
        with (path / "results.jsonl").open("rb"):  # a file that opens (not a directory), as resuming reads it
            pass
    except (OSError, ValueError):
        raise UserError(f"--resume {str(path)!r} is not a run directory (meta.json and results.jsonl)") from None
    ran_arena, ran_store = stores.unscoped(str(meta.get("arena")))
    if ran_arena != arena_name:
        raise UserError(f"--resume {str(path)!r} is a run of {ran_arena!r}, not {arena_name!r}")
    status = status_of(meta)
    if status == "running":
        raise UserError(f"--resume {str(path)!r} is still running (pid {meta.get('pid')})")
    target = meta.get("target") or meta.get("adapter")
    if adapters and list(adapters) != [target]:
        raise UserError(f"--resume {str(path)!r} is a run of adapter {target!r}; leave out --adapter or give that one")
    if model and model != meta.get("model"):
        raise UserError(f"--resume {str(path)!r} is a run with model {meta.get('model')!r}; "
                        "leave out --model or give that one")
    ran = {"epochs": meta.get("epochs") or 1, "seed": meta.get("seed") or 0}
    for flag, value in (("epochs", epochs), ("seed", seed)):
        if value is not None and value != ran[flag]:
            raise UserError(f"--resume {str(path)!r} is a run with --{flag} {ran[flag]}; "
                            f"leave out --{flag} or give that one")
    return _Resumed(target=target, model=meta.get("model"), items=list(meta.get("items") or []), status=status,
                    epochs=ran["epochs"], seed=ran["seed"], stream=bool(meta.get("stream")), store=ran_store)


def evaluate(arena: str | ArenaSpec, adapters: Sequence[str | type[ResumableRunner]] = (), *,
             model: str | None = None, base_url: str | None = None, items: Sequence[str] | None = None,
             out: Path = Path("runs"), timeout: float = 180.0, concurrency: int | None = None,
             epochs: int | None = None, seed: int | None = None, resume: Path | None = None,
             reporter: Reporter | None = None, stream: bool = False, store: StoreKind = "sqlite",
             resume_on: str | None = None) -> Evaluation:
    """Run `arena` on each adapter (names as `arena run -a` takes them, or adapter classes; none: every
    installed one) with one model (a scripted profile, default the arena's first, or a real model
    `openai/<model>`), writing one run directory per adapter under `out`; return the runs.

    With `stream` every leg drives the framework's streaming API (adapters without a `stream` channel are
    declined: not measured). With `store` postgres or redis each adapter keeps the paused state on that server
    (`scripts/services up`, or ARENA_POSTGRES_URL / ARENA_REDIS_URL), in its framework's own store for it; an adapter
    without one is declined (not measured), never run on SQLite instead. With `resume_on` (an adapter name, with or
    without a release: `langgraph@1.2.24`) every leg after the first runs that adapter instead (`run_one`).

    `resume` completes an interrupted run directory instead (its own adapter, model and items)."""
    from arena.model.resolve import ModelError, canonical_model, resolve_model, split_model
    from arena.server import HarnessServer
    from arena.worker.envs import EnvError

    reporter = reporter or Silent()
    out = Path(out)  # a str from a library caller too
    spec = _arena(arena)
    if model:  # openai:<model> is openai/<model>: one run directory name, one report row
        model = canonical_model(model, spec.accepted_profiles)
    chosen: Sequence[str | type[ResumableRunner]] = list(adapters)
    resumed = None
    if resume is not None:
        resumed = _resumable(resume, spec.name, chosen, model, items, epochs, seed)
        chosen, model, items = [resumed.target], resumed.model, resumed.items
        epochs, seed, stream, store = resumed.epochs, resumed.seed, resumed.stream, resumed.store
    _check_store(store)
    epochs, seed = epochs or 1, seed or 0
    model = model or spec.profiles[0]
    run_items = spec.items
    if items:
        known = {i.id for i in spec.items}
        unknown = [i for i in items if i not in known]
        if unknown:
            raise UserError(f"unknown item {unknown[0]!r} in {spec.name}; choose from {', '.join(sorted(known))}")
        run_items = [i for i in spec.items if i.id in items]
    if base_url and (model in spec.accepted_profiles or split_model(model)[0] != "openai"):
        raise UserError("--base-url applies only to a real model (--model openai/<model>)")
    try:
        resolve_model(model, base_url, spec.accepted_profiles)  # validate before starting anything
    except ModelError as exc:
        raise UserError(str(exc)) from None
    selected = select_adapters(chosen, reporter)  # an `adapter@version` whose index cannot be read: SetupError
    if not selected:
        raise UserError("no adapter is installed here; see `arena list`")
    then: tuple[str, Target] | None = None
    if resume_on is not None:
        _check_resume_on(spec, stream, store)
        if resume is not None:
            raise UserError("--resume-on starts a run; --resume completes one: give one")
        found = select_adapters([resume_on], reporter)
        if len(found) != 1:
            raise UserError(f"--resume-on names one adapter, not {resume_on!r}")
        then = found[0]
    done = Evaluation()
    if resume is not None and resumed is not None and resumed.status == "complete":
        from arena.rundir import to_run_again

        damaged = to_run_again(resume)  # a complete run whose items cannot all be read back runs those again
        if not damaged:
            reporter.say(f"{resume} is complete: nothing to resume")
            done.nothing_to_do = True
            return done
        reporter.say(f"{resume} is complete but {len(damaged)} item(s) cannot be read back; running them again: "
                     + "; ".join(f"{item} ({why})" for item, why in damaged.items()), "warning")
    if resumed is None:
        writable_dir(out)
    with HarnessServer() as server:
        for name, target in selected:
            key = f"{stores.scoped(spec.name, store)}/{name}/{model}"
            reporter.started(key, streamed_label(name) if stream else name, len(run_items) * epochs)
            try:
                run = run_one(spec, name, target, model, out, server, timeout=timeout, items=run_items,
                              on_result=partial(reporter.result, key), base_url=base_url,
                              concurrency=concurrency or default_concurrency(), resume=resume, epochs=epochs,
                              seed=seed, say=reporter.say, stream=stream, store=store, resume_on=then)
            except EnvError as exc:
                done.failed[name] = str(exc)
                reporter.finished(key, f"failed: {exc}")
                reporter.say(f"{name}: {exc}", "error")
                continue
            except Declined as exc:
                done.declined[name] = str(exc)
                reporter.finished(key, f"not run: {exc}")
                reporter.say(f"{name}: {exc}", "warning")
                continue
            reporter.finished(key, f"{run.summary.passed}/{run.summary.items} passed" if run.summary else "")
            done.append(run)
    return done


# -- arena matrix ------------------------------------------------------------------------------------

# arena, profile, adapter name, target, streamed, store, and the adapter of the first leg when the run resumes on
# another release (`run_one`'s resume_on: the cell is the later release's)
Cell = tuple[ArenaSpec, str, str, Target, bool, StoreKind, "tuple[str, Target] | None"]


def matrix_plan(adapters: list[tuple[str, Target]], arena_names: Sequence[str], stream: bool = False,
                store_kinds: Sequence[StoreKind] = ()) -> list[Cell]:
    """(arena spec, profile, adapter name, target, streamed, store) for every arena × its runnable profiles × adapter;
    with `stream`, each adapter that streams (its installed release) again, streamed, right after it; with
    `store_kinds` (postgres, redis), every arena measured on stores (`ArenaSpec.stores`) again on each, for each
    adapter's installed release (one without a store there is declined when its cell runs: not measured). An arena
    measured across upgrades (`ArenaSpec.upgrades`) also runs, for every framework with several releases here, each
    release resumed from a pause made by the release before it (oldest to installed), as the later release's cell."""
    from arena.versions import is_versioned

    streaming = {name for name, target in adapters if stream and _streams(name, target)}
    plan: list[Cell] = []
    for arena_name in sorted(arena_names, key=arena_order):
        spec = _arena(arena_name)
        for profile in spec.profiles:
            for name, target in adapters:
                plan.append((spec, profile, name, target, False, "sqlite", None))
                if name in streaming:
                    plan.append((spec, profile, name, target, True, "sqlite", None))
        for kind in (k for k in store_kinds if k != "sqlite" and spec.stores):
            for profile in spec.profiles:
                plan.extend((spec, profile, name, target, False, kind, None) for name, target in adapters
                            if not is_versioned(name))
        if spec.upgrades:
            for profile in spec.profiles:
                plan.extend((spec, profile, name, target, False, "sqlite", before)
                            for before, (name, target) in upgrade_pairs(adapters))
    return plan


def upgrade_pairs(adapters: list[tuple[str, Target]]) -> list[tuple[tuple[str, Target], tuple[str, Target]]]:
    """(older, newer) for each framework's adjacent releases among these adapters: its pinned releases oldest first,
    then the installed one (`langgraph@1.0.10` → `langgraph@1.1.10` → `langgraph`); releases from source are left
    out."""
    from arena.versions import base_name, is_source, is_versioned, order_key, split

    families: dict[str, list[tuple[str, Target]]] = {}
    for name, target in adapters:
        if isinstance(target, AdapterEntry) and not (is_versioned(name) and is_source(split(name)[1])):
            families.setdefault(base_name(name), []).append((name, target))
    pairs = []
    for base, members in families.items():
        chain = sorted((m for m in members if m[0] != base), key=lambda m: order_key(m[0]))
        chain += [m for m in members if m[0] == base]
        pairs += list(zip(chain, chain[1:]))
    return pairs


def _streams(name: str, target: Target) -> bool:
    """Whether the matrix streams this adapter: the installed release of one with a `stream` channel its
    framework supports (a pinned older release is run plain only)."""
    from arena.versions import is_versioned

    if is_versioned(name):
        return False
    cls = target.load() if isinstance(target, AdapterEntry) else target
    return why_not_streamed(cls.info) is None


def _job_name(name: str, target: Target) -> str:
    """How a job process names the adapter: its registered (or name@version) name, or module:Class."""
    if isinstance(target, AdapterEntry):
        return name
    if target.__module__ == "__main__" or "<locals>" in target.__qualname__:
        raise UserError(f"--jobs runs adapters in other processes: {target.__qualname__} must be importable "
                        "(module:Class), or run without --jobs")
    return f"{target.__module__}:{target.__qualname__}"


def _module_of(target: Target) -> str:
    """The module an adapter is defined in: `--jobs` runs the adapters of one module in one job. A framework's
    releases (whose cells across an upgrade need both) and its variants (google_adk_confirm, langgraph_per_call,
    smolagents_emulated) share the framework's import in the job's process and, when they prepare a fork server
    alike, the server (`arena.worker.forkserver.preparation`)."""
    return target.target.split(":", 1)[0] if isinstance(target, AdapterEntry) else target.__module__


def cell_cost(spec: ArenaSpec, name: str, target: Target) -> float:
    """What a cell is expected to cost, for balancing shards and jobs: its items, three times over when every
    leg starts a process, twice over when every item does (an adapter in an environment of its own, or one whose
    framework keeps process-wide state, `concurrent = False`: google_adk, llama_index, DBOS)."""
    twice = _isolated(target) or (not spec.restart_between_legs and not _concurrent(target))
    return len(spec.items) * (3 if spec.restart_between_legs else 1) * (2 if twice else 1)


def evaluate_matrix(adapters: Sequence[str | type[ResumableRunner]] = (), arenas: Sequence[str] = (), *,
                    versions: bool = False, out: Path = Path("reports") / "runs", timeout: float = 180.0,
                    concurrency: int | None = None, reporter: Reporter | None = None,
                    shard: str | None = None, jobs: int = 1, stream: bool = False,
                    store_kinds: Sequence[StoreKind] = ()) -> Evaluation:
    """Every arena (default: each that loads) × its scripted profiles × adapter (default: every installed
    one; with `versions`, also the default version set of older releases), one run directory each under
    `out`; return the runs. An adapter whose environment cannot be built is skipped for the rest.

    With `shard` ("K/N") only the cells of shard K of the plan's deterministic partition run, and
    `out/shard-K-of-N.json` says what the plan was and how the shard ended (arena/shard.py).

    With `jobs` > 1 each framework's cells run in a process of their own, that many at a time, costliest first
    (arena/jobs.py); their progress reaches `reporter` and their runs are returned as one evaluation's.

    With `stream` every cell of an adapter that streams is run a second time streamed (`matrix_plan`); with
    `store_kinds` (postgres, redis) the arenas measured on stores run again on each (their servers must answer)."""
    from arena.shard import Shard, assign, write_manifest

    part = Shard.parse(shard) if shard is not None else None
    if jobs < 1:
        raise UserError(f"--jobs {jobs}: give 1 or more")
    if jobs > 1 and part is not None:
        raise UserError("--jobs splits the matrix over this machine's processes, --shard over machines: give one")
    reporter = reporter or Silent()
    out = Path(out)  # a str from a library caller too
    plan = _planned(adapters, arenas, versions, stream, store_kinds, reporter)
    writable_dir(out)
    if jobs > 1:
        from arena.jobs import run_jobs

        costs: dict[str, float] = {}
        modules: dict[str, str] = {}
        cells: dict[str, list[str]] = {}
        for cell in plan:
            spec, _profile, name, target, _streamed, _store, _before = cell
            job_name = _job_name(name, target)
            costs[job_name] = costs.get(job_name, 0.0) + cell_cost(spec, name, target)
            modules[job_name] = _module_of(target)
            cells.setdefault(job_name, []).append(_cell_key(cell))
        outcome = run_jobs(costs, list(dict.fromkeys(spec.name for spec, *_ in plan)), jobs=jobs,
                           out=out, timeout=timeout, concurrency=concurrency, reporter=reporter,
                           total=sum(len(spec.items) for spec, *_ in plan), stream=stream, store_kinds=store_kinds,
                           family=modules.__getitem__,  # the adapters of one module in one job (`_module_of`)
                           cells=cells)
        made = Evaluation(outcome.runs)
        made.failed, made.declined = outcome.failed, outcome.declined
        return made
    shards: dict[str, int] = {}
    if part is not None:
        shards = assign([(_cell_key(cell), cell_cost(cell[0], cell[2], cell[3])) for cell in plan], part.count)
        plan = [c for c in plan if shards[_cell_key(c)] == part.index]
        write_manifest(out, part, shards, "started")
        reporter.say(f"shard {part}: {len(plan)} of {len(shards)} cells", "info")
    done, declined, failed = _run_plan(plan, out, timeout, concurrency, reporter)
    if part is not None:
        write_manifest(out, part, shards, "finished", declined, failed)
    return done


def run_job(adapters: Sequence[str], arenas: Sequence[str], *, out: Path, timeout: float, concurrency: int | None,
            reporter: Reporter, stream: bool, store_kinds: Sequence[StoreKind], claims: Path | None,
            from_end: bool) -> Evaluation:
    """One process of `arena matrix --jobs N` (arena/jobs.py): the cells of its adapters, in plan order or
    `from_end`; with `claims`, only those this process claims first (`arena.jobs.Claims`)."""
    from arena.jobs import Claims

    plan = _planned(adapters, arenas, False, stream, store_kinds, reporter)
    if from_end:
        plan.reverse()
    claim = Claims(claims).claim if claims is not None else None
    return _run_plan(plan, out, timeout, concurrency, reporter, claim)[0]


def _planned(adapters: Sequence[str | type[ResumableRunner]], arenas: Sequence[str], versions: bool, stream: bool,
             store_kinds: Sequence[StoreKind], reporter: Reporter) -> list[Cell]:
    """The matrix's cells (`matrix_plan`) of these adapters (with `versions`, also the default version set) and
    arenas (default: each that loads; a broken plugin arena is left out, with one warning line)."""
    from arena.versions import default_set

    for name in arenas:
        _arena(name)
    for kind in store_kinds:
        _check_store(kind)
    wanted: list[str | type[ResumableRunner]] = list(adapters)
    if versions:
        wanted = [*(wanted or ["all"]), *default_set(catalog.builtin_adapters())]
    selected = select_adapters(wanted, reporter)
    if not selected:
        raise UserError("no adapter is installed here; see `arena list`")
    return matrix_plan(selected, list(arenas) or [a.name for a in catalog.arenas()], stream, store_kinds)


def _run_plan(plan: list[Cell], out: Path, timeout: float, concurrency: int | None, reporter: Reporter,
              claim: Callable[[str], bool] | None = None) -> tuple[Evaluation, dict[str, str], dict[str, str]]:
    """Run these cells one after another (the next one's environment made ready meanwhile), each into a run
    directory under `out`; with `claim`, only the cells it grants. Returns the runs, and the cells declined and
    failed (by cell key)."""
    from concurrent.futures import ThreadPoolExecutor

    from arena.server import HarnessServer
    from arena.worker.envs import EnvError

    declined: dict[str, str] = {}
    failed: dict[str, str] = {}
    done = Evaluation()
    reporter.started("matrix", "matrix (items)", sum(len(spec.items) for spec, *_ in plan))
    with HarnessServer() as server, ThreadPoolExecutor(1, thread_name_prefix="arena-ahead") as ahead:
        for n, cell in enumerate(plan):
            spec, profile, name, target, streamed, kind, before = cell
            key = _cell_key(cell)
            if claim is not None and not claim(key):  # another process of this framework has it
                continue
            if n + 1 < len(plan) and plan[n + 1][2] not in done.failed:
                ahead.submit(_get_ready, plan[n + 1][0], plan[n + 1][3], server, reporter)
            shown = streamed_label(name) if streamed else name
            scope = f"{upgraded(spec.name)} from {before[0]}" if before else stores.scoped(spec.name, kind)
            reporter.started(key, f"{shown} · {scope} × {profile}", len(spec.items))
            if name in done.failed:
                failed[key] = done.failed[name]
                reporter.finished(key, "skipped")
                continue
            try:
                first = before or (name, target)  # a cell across an upgrade starts on the older release
                run = run_one(spec, first[0], first[1], profile, out, server, timeout=timeout,
                              on_result=partial(reporter.result, key), concurrency=concurrency or default_concurrency(),
                              say=reporter.say, stream=streamed, store=kind, resume_on=(name, target) if before else None)
            except EnvError as exc:
                done.failed[name] = failed[key] = str(exc)
                reporter.say(f"{name}: {exc}", "error")
                reporter.finished(key, "failed")
                continue
            except Declined as exc:
                done.declined.setdefault(name, str(exc))
                declined[key] = str(exc)
                reporter.finished(key, f"not run: {exc}")
                continue
            reporter.finished(key, f"{run.summary.passed}/{run.summary.items} passed" if run.summary else "")
            done.append(run)
    reporter.finished("matrix", f"{len(done)} runs")
    return done, declined, failed


def _cell_key(cell: Cell) -> str:
    from arena.shard import cell_key

    spec, profile, name, _target, streamed, kind, before = cell
    scope = upgraded(spec.name) if before else stores.scoped(spec.name, kind)
    return cell_key(scope, streamed_label(name) if streamed else name, profile)


def run_summary_json(run: Run) -> str:
    """The one JSON line `arena run --json` prints for a run."""
    from arena.redact import redact

    if not run.summary:
        return "{}"
    if not run.meta.get("stream"):
        return redact(run.summary.model_dump_json())
    return redact(json.dumps({**run.summary.model_dump(mode="json"), "stream": True}))


__all__ = ["Declined", "Evaluation", "Reporter", "Silent", "cell_cost", "default_concurrency", "evaluate",
           "evaluate_matrix", "matrix_plan", "run_one", "select_adapters"]
