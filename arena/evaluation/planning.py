"""A matrix's plan: its cells (`Cell`: an arena's profile × an adapter, plain, streamed, on a store or across an
upgrade), in order (`matrix_plan`), what each is expected to cost (`cell_cost`), and how `--jobs` groups them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from arena import catalog
from arena.catalog import AdapterEntry
from arena.errors import UserError
from arena.report.matrix import arena_order
from arena.run_id import AdapterLabel, ArenaLabel, RunId
from arena.spec import ArenaSpec
from arena.streaming import why_not_streamed
from arena.adapter import Adapter
from arena.types import StoreKind
from arena.evaluation.placement import concurrent, isolated
from arena.evaluation.reporting import Reporter
from arena.evaluation.selection import Target, arena_spec, check_store, select_adapters


# arena, profile, adapter name, target, streamed, store, and the adapter of the first leg when the run resumes on
# another release (`run_one`'s resume_on: the cell is the later release's)
@dataclass(frozen=True)
class Cell:
    """One cell of a matrix to run: an arena's profile × an adapter (`name`, as registered or `name@release`, and
    how to load it), plain or streamed, on a store, or across an upgrade (`before`: the older release whose pause
    this adapter resumes)."""

    spec: ArenaSpec
    profile: str
    name: str
    target: Target
    streamed: bool = False
    store: StoreKind = "sqlite"
    before: tuple[str, Target] | None = None

    @property
    def run_id(self) -> RunId:
        """Its run's identity: what its run directory, its matrix row and column are named by."""
        label = AdapterLabel.parse(self.name)
        return RunId(ArenaLabel(self.spec.name, self.store, self.before is not None),
                     AdapterLabel(label.name, label.release, self.streamed), self.profile)

    @property
    def key(self) -> str:
        return self.run_id.key


def matrix_plan(adapters: list[tuple[str, Target]], arena_names: Sequence[str], stream: bool = False,
                store_kinds: Sequence[StoreKind] = (), stream_releases: bool = False) -> list[Cell]:
    """(arena spec, profile, adapter name, target, streamed, store) for every arena × its runnable profiles × adapter;
    with `stream`, each adapter that streams (its installed release, and with `stream_releases` its pinned older
    releases too: `arena matrix --history ADAPTER --stream`) again, streamed, right after it; with
    `store_kinds` (postgres, redis), every arena measured on stores (`ArenaSpec.stores`) again on each, for each
    adapter's installed release (one without a store there is declined when its cell runs: not measured). An arena
    measured across upgrades (`ArenaSpec.upgrades`) also runs, for every framework with several releases here, each
    release resumed from a pause made by the release before it (oldest to installed), as the later release's cell."""
    from arena.versions import is_versioned

    streaming = {name for name, target in adapters if stream and _streams(name, target, stream_releases)}
    plan: list[Cell] = []
    for arena_name in sorted(arena_names, key=arena_order):
        spec = arena_spec(arena_name)
        for profile in spec.profiles:
            for name, target in adapters:
                plan.append(Cell(spec, profile, name, target))
                if name in streaming:
                    plan.append(Cell(spec, profile, name, target, streamed=True))
        for kind in (k for k in store_kinds if k != "sqlite" and spec.stores):
            for profile in spec.profiles:
                plan.extend(Cell(spec, profile, name, target, store=kind) for name, target in adapters
                            if not is_versioned(name))
        if spec.upgrades:
            for profile in spec.profiles:
                plan.extend(Cell(spec, profile, name, target, before=before)
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


def _streams(name: str, target: Target, releases: bool = False) -> bool:
    """Whether the matrix streams this adapter: the installed release of one with a `stream` channel its
    framework supports (a pinned older release is run plain only, unless `releases`: a release history's)."""
    from arena.versions import is_versioned

    if is_versioned(name) and not releases:
        return False
    cls = target.load() if isinstance(target, AdapterEntry) else target
    return why_not_streamed(cls.info) is None


def job_name(name: str, target: Target) -> str:
    """How a job process names the adapter: its registered (or name@version) name, or module:Class."""
    if isinstance(target, AdapterEntry):
        return name
    if target.__module__ == "__main__" or "<locals>" in target.__qualname__:
        raise UserError(f"--jobs runs adapters in other processes: {target.__qualname__} must be importable "
                        "(module:Class), or run without --jobs")
    return f"{target.__module__}:{target.__qualname__}"


def module_of(target: Target) -> str:
    """The module an adapter is defined in: `--jobs` runs the adapters of one module in one job. A framework's
    releases (whose cells across an upgrade need both) and its variants (google_adk_confirm, langgraph_per_call,
    smolagents_emulated) share the framework's import in the job's process and, when they prepare a fork server
    alike, the server (`arena.worker.forkserver.preparation`)."""
    return target.target.split(":", 1)[0] if isinstance(target, AdapterEntry) else target.__module__


def cell_cost(spec: ArenaSpec, name: str, target: Target) -> float:
    """What a cell is expected to cost, for balancing shards and jobs: its items, three times over when every
    leg starts a process, twice over when every item does (an adapter in an environment of its own, or one whose
    framework keeps process-wide state, `concurrent = False`: google_adk, llama_index, DBOS)."""
    twice = isolated(target) or (not spec.restart_between_legs and not concurrent(target))
    return len(spec.items) * (3 if spec.restart_between_legs else 1) * (2 if twice else 1)


def planned(adapters: Sequence[str | type[Adapter]], arenas: Sequence[str], versions: bool, stream: bool,
             store_kinds: Sequence[StoreKind], reporter: Reporter, stream_releases: bool = False) -> list[Cell]:
    """The matrix's cells (`matrix_plan`) of these adapters (with `versions`, also the default version set) and
    arenas (default: each that loads; a broken plugin arena is left out, with one warning line)."""
    from arena.versions import default_set

    for name in arenas:
        arena_spec(name)
    for kind in store_kinds:
        check_store(kind)
    wanted: list[str | type[Adapter]] = list(adapters)
    if versions:
        wanted = [*(wanted or ["all"]), *default_set(catalog.builtin_adapters())]
    selected = select_adapters(wanted, reporter)
    if not selected:
        raise UserError("no adapter is installed here; see `arena list`")
    return matrix_plan(selected, list(arenas) or [a.name for a in catalog.arenas()], stream, store_kinds,
                       stream_releases)
