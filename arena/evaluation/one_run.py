"""One run: an arena on one adapter with one model (`RunConfig`), written to its run directory (`run_one`);
plain, streamed, on a store, or across an upgrade (a run paused by one release resumed by the next)."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass
from pathlib import Path
from typing import Any

from arena import stores
from arena.catalog import AdapterEntry
from arena.errors import UserError
from arena.report.matrix import Run
from arena.results import ItemResult, RunSummary
from arena.run_id import ArenaLabel
from arena.spec import ArenaSpec
from arena.streaming import streamed_label, why_not_streamed
from arena.adapter import Adapter
from arena.types import EvalItem, StoreKind
from arena.evaluation.placement import concurrent, no_second_process, prepare, second_process, target_name
from arena.evaluation.reporting import Declined, Level
from arena.evaluation.selection import Target


def default_concurrency() -> int:
    """Items at once when not asked: most of an item's time is waiting (the model, the watched pause),
    so twice the cores, at most 8."""
    return max(1, min(8, 2 * (os.cpu_count() or 1)))


def _quiet(message: str, level: Level) -> None:
    """What a run says when nobody listens: nothing."""


@dataclass(frozen=True)
class RunConfig:
    """What one run is configured with: `arena` on the adapter `adapter_name` (loaded from `target`) with `model`,
    into a run directory under `out` (`run_one`); `items` (default: the arena's), each at most `timeout` seconds,
    `concurrency` at once, `epochs` times each from `seed`; `on_result` hears each result, `say` each line for the
    person running it. `base_url`, `resume`, `stream`, `store` and `resume_on`: see `run_one`."""

    arena: ArenaSpec
    adapter_name: str
    target: Target
    model: str
    out: Path
    _: KW_ONLY
    timeout: float = 60.0
    items: list[EvalItem] | None = None
    on_result: Callable[[ItemResult], None] | None = None
    base_url: str | None = None
    concurrency: int = 1
    resume: Path | None = None
    epochs: int = 1
    seed: int = 0
    say: Callable[[str, Level], None] = _quiet
    stream: bool = False
    store: StoreKind = "sqlite"
    resume_on: tuple[str, Target] | None = None


def run_one(config: RunConfig, server: Any) -> Run:
    """Run one arena on one adapter with one model (`config`); write its run directory; return the run as written.

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

    arena, adapter_name, target, model, out = config.arena, config.adapter_name, config.target, config.model, config.out
    timeout, on_result, base_url, concurrency, resume = (config.timeout, config.on_result, config.base_url,
                                                         config.concurrency, config.resume)
    epochs, seed, say, stream, store, resume_on = (config.epochs, config.seed, config.say, config.stream, config.store,
                                                   config.resume_on)
    items = arena.items if config.items is None else config.items
    model_target = resolve_model(model, base_url, arena.accepted_profiles)
    info, version, factory, worker_start = prepare(target, server, arena.restart_between_legs,
                                                   lambda message: say(message, "info"))
    why = arena.declined(info) or (why_not_streamed(info) if stream else None) or stores.why_not_kept(info, store)
    if why is not None:
        raise Declined(why)
    upgrade: dict[str, Any] | None = None
    if resume_on is not None:
        then_name, then_target = resume_on
        check_resume_on(arena, stream, store)
        then_info, then_version, then_factory, _ = prepare(then_target, server, True,
                                                           lambda message: say(message, "info"))
        if then_info.framework != info.framework:
            raise UserError(f"--resume-on {then_name}: {then_info.framework} is not {adapter_name}'s framework "
                            f"({info.framework})")
        why = arena.declined(then_info)
        if why is not None:
            raise Declined(why)
        upgrade = {"from": adapter_name, "from_version": version, "to": then_name, "to_version": then_version}
        first_factory = factory

        def factory() -> Adapter:  # the first leg's worker, moving to the next release after it
            return first_factory().resume_on(then_factory())  # type: ignore[attr-defined, no-any-return]

        adapter_name, version, target = then_name, then_version, then_target
    items, not_measured = arena.items_for(info, items)
    alone = no_second_process(arena, target, worker_start, items)
    if alone is not None and arena.second_process is not None:  # those items would be resumed where they paused
        not_measured.update({i.id: alone for i in items if arena.second_process(i)})
        items = [i for i in items if i.id not in not_measured]
    if not_measured:
        reasons = sorted(set(not_measured.values()))
        say(f"{adapter_name}: {len(not_measured)} item(s) not measured ({', '.join(not_measured)}): "
            f"{'; '.join(reasons)}", "warning")
    if not items:
        raise Declined(f"none of the items can be measured: {'; '.join(sorted(set(not_measured.values())))}")
    if worker_start == "in-process" and not concurrent(target):
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
            "epochs": epochs, "seed": seed, "target": target_name(target)}
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
        meta["upgrade"], meta["framework_version"], meta["target"] = upgrade, version, target_name(target)
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
                      spare_factory=second_process(arena, target, info, worker_start, server, todo),
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


def upgraded(arena: str) -> str:
    """The name a run of `arena` across an upgrade goes by (`--resume-on`): `durable_state@upgrade`."""
    return ArenaLabel(arena, upgrade=True).text


def check_resume_on(spec: ArenaSpec, stream: bool, store: str) -> None:
    """`--resume-on` needs a new process for every leg (the state passes only through the framework's store)."""
    if not spec.restart_between_legs or stream or store != "sqlite":
        raise UserError(f"--resume-on needs an arena whose every leg runs in a new process (not {spec.name}), "
                        "plain and on the default store")
