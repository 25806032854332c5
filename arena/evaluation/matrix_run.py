"""`arena matrix` as a library: `evaluate_matrix()` runs the plan's cells one after another (or a shard of
them, or as `--jobs` processes), and `run_job` is one of those processes."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path

from arena import stores
from arena.errors import UserError
from arena.paths import writable_dir
from arena.streaming import streamed_label
from arena.adapter import Adapter
from arena.types import StoreKind
from arena.evaluation.one_run import RunConfig, default_concurrency, run_one, upgraded
from arena.evaluation.placement import get_ready
from arena.evaluation.planning import Cell, cell_cost, job_name, module_of, planned
from arena.evaluation.reporting import Declined, Evaluation, Reporter, Silent


def evaluate_matrix(adapters: Sequence[str | type[Adapter]] = (), arenas: Sequence[str] = (), *,
                    versions: bool = False, out: Path = Path("reports") / "runs", timeout: float = 180.0,
                    concurrency: int | None = None, reporter: Reporter | None = None,
                    shard: str | None = None, jobs: int = 1, stream: bool = False,
                    store_kinds: Sequence[StoreKind] = (), stream_releases: bool = False) -> Evaluation:
    """Every arena (default: each that loads) × its scripted profiles × adapter (default: every installed
    one; with `versions`, also the default version set of older releases), one run directory each under
    `out`; return the runs. An adapter whose environment cannot be built is skipped for the rest.

    With `shard` ("K/N") only the cells of shard K of the plan's deterministic partition run, and
    `out/shard-K-of-N.json` says what the plan was and how the shard ended (arena/shard.py).

    With `jobs` > 1 each framework's cells run in a process of their own, that many at a time, costliest first
    (arena/jobs.py); their progress reaches `reporter` and their runs are returned as one evaluation's.

    With `stream` every cell of an adapter that streams is run a second time streamed (`matrix_plan`: its installed
    release, and with `stream_releases` its pinned older ones too, as a release history streams them); with
    `store_kinds` (postgres, redis) the arenas measured on stores run again on each (their servers must answer)."""
    from arena.shard import Shard, assign, write_manifest

    part = Shard.parse(shard) if shard is not None else None
    if jobs < 1:
        raise UserError(f"--jobs {jobs}: give 1 or more")
    if jobs > 1 and part is not None:
        raise UserError("--jobs splits the matrix over this machine's processes, --shard over machines: give one")
    reporter = reporter or Silent()
    out = Path(out)  # a str from a library caller too
    plan = planned(adapters, arenas, versions, stream, store_kinds, reporter, stream_releases)
    writable_dir(out)
    if jobs > 1:
        from arena.jobs import run_jobs

        costs: dict[str, float] = {}
        modules: dict[str, str] = {}
        cells: dict[str, list[str]] = {}
        for cell in plan:
            job = job_name(cell.name, cell.target)
            costs[job] = costs.get(job, 0.0) + cell_cost(cell.spec, cell.name, cell.target)
            modules[job] = module_of(cell.target)
            cells.setdefault(job, []).append(cell.key)
        outcome = run_jobs(costs, list(dict.fromkeys(cell.spec.name for cell in plan)), jobs=jobs,
                           out=out, timeout=timeout, concurrency=concurrency, reporter=reporter,
                           total=sum(len(cell.spec.items) for cell in plan), stream=stream, store_kinds=store_kinds,
                           stream_releases=stream_releases,
                           family=modules.__getitem__,  # the adapters of one module in one job (`module_of`)
                           cells=cells)
        made = Evaluation(outcome.runs)
        made.failed, made.declined = outcome.failed, outcome.declined
        return made
    shards: dict[str, int] = {}
    if part is not None:
        shards = assign([(cell.key, cell_cost(cell.spec, cell.name, cell.target)) for cell in plan], part.count)
        plan = [c for c in plan if shards[c.key] == part.index]
        write_manifest(out, part, shards, "started")
        reporter.say(f"shard {part}: {len(plan)} of {len(shards)} cells", "info")
    done, declined, failed = _run_plan(plan, out, timeout, concurrency, reporter)
    if part is not None:
        write_manifest(out, part, shards, "finished", declined, failed)
    return done


def run_job(adapters: Sequence[str], arenas: Sequence[str], *, out: Path, timeout: float, concurrency: int | None,
            reporter: Reporter, stream: bool, store_kinds: Sequence[StoreKind], claims: Path | None,
            from_end: bool, stream_releases: bool = False) -> Evaluation:
    """One process of `arena matrix --jobs N` (arena/jobs.py): the cells of its adapters, in plan order or
    `from_end`; with `claims`, only those this process claims first (`arena.jobs.Claims`)."""
    from arena.jobs import Claims

    plan = planned(adapters, arenas, False, stream, store_kinds, reporter, stream_releases)
    if from_end:
        plan.reverse()
    claim = Claims(claims).claim if claims is not None else None
    return _run_plan(plan, out, timeout, concurrency, reporter, claim)[0]


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
    reporter.started("matrix", "matrix (items)", sum(len(cell.spec.items) for cell in plan))
    with HarnessServer() as server, ThreadPoolExecutor(1, thread_name_prefix="arena-ahead") as ahead:
        for n, cell in enumerate(plan):
            spec, profile, name, target, streamed, kind, before = (cell.spec, cell.profile, cell.name, cell.target,
                                                                   cell.streamed, cell.store, cell.before)
            key = cell.key
            if claim is not None and not claim(key):  # another process of this framework has it
                continue
            if n + 1 < len(plan) and plan[n + 1].name not in done.failed:
                ahead.submit(get_ready, plan[n + 1].spec, plan[n + 1].target, server, reporter)
            shown = streamed_label(name) if streamed else name
            scope = f"{upgraded(spec.name)} from {before[0]}" if before else stores.scoped(spec.name, kind)
            reporter.started(key, f"{shown} · {scope} × {profile}", len(spec.items))
            if name in done.failed:
                failed[key] = done.failed[name]
                reporter.finished(key, "skipped")
                continue
            try:
                first = before or (name, target)  # a cell across an upgrade starts on the older release
                config = RunConfig(spec, first[0], first[1], profile, out, timeout=timeout,
                                   on_result=partial(reporter.result, key),
                                   concurrency=concurrency or default_concurrency(), say=reporter.say, stream=streamed,
                                   store=kind, resume_on=(name, target) if before else None)
                run = run_one(config, server)
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
