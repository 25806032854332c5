"""`arena run` as a library: `evaluate()` runs one arena on adapters with one model, or completes an
interrupted run directory."""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from pathlib import Path

from arena import stores
from arena.errors import UserError
from arena.paths import writable_dir
from arena.spec import ArenaSpec
from arena.streaming import streamed_label
from arena.adapter import Adapter
from arena.types import StoreKind
from arena.evaluation.one_run import RunConfig, check_resume_on, default_concurrency, run_one
from arena.evaluation.reporting import Declined, Evaluation, Reporter, Silent
from arena.evaluation.resumption import resumable
from arena.evaluation.selection import Target, arena_spec, check_store, select_adapters


def evaluate(arena: str | ArenaSpec, adapters: Sequence[str | type[Adapter]] = (), *,
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
    spec = arena_spec(arena)
    if model:  # openai:<model> is openai/<model>: one run directory name, one report row
        model = canonical_model(model, spec.accepted_profiles)
    chosen: Sequence[str | type[Adapter]] = list(adapters)
    resumed = None
    if resume is not None:
        resumed = resumable(resume, spec.name, chosen, model, items, epochs, seed)
        chosen, model, items = [resumed.target], resumed.model, resumed.items
        epochs, seed, stream, store = resumed.epochs, resumed.seed, resumed.stream, resumed.store
    check_store(store)
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
        check_resume_on(spec, stream, store)
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
                config = RunConfig(spec, name, target, model, out, timeout=timeout, items=run_items,
                                   on_result=partial(reporter.result, key), base_url=base_url,
                                   concurrency=concurrency or default_concurrency(), resume=resume, epochs=epochs,
                                   seed=seed, say=reporter.say, stream=stream, store=store, resume_on=then)
                run = run_one(config, server)
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
