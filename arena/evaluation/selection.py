"""Which adapters, arena and store a call names: adapter names ("all", a registered name, `name@version`,
"module:Class") or classes resolved to (name, `Target`); an arena's name (or an `ArenaSpec` given as it is) to
its spec; a store checked to be known and answering. What cannot be resolved is a UserError."""

from __future__ import annotations

from collections.abc import Sequence

from arena import catalog, stores
from arena.catalog import AdapterEntry
from arena.errors import UserError
from arena.spec import ArenaSpec
from arena.adapter import Adapter, AdapterContractError, as_adapter
from arena.evaluation.reporting import Reporter, Silent

Target = AdapterEntry | type[Adapter]  # a catalog entry, or a class given as module:Class


def select_adapters(names: Sequence[str | type[Adapter]], reporter: Reporter | None = None
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
            checked = _checked_class(name)
            chosen.append((checked.info.name, checked))
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


def _checked_class(cls: type) -> type[Adapter]:
    try:
        return as_adapter(cls, discover=catalog.arenas)
    except AdapterContractError as exc:
        raise UserError(str(exc)) from None


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


def arena_spec(arena: str | ArenaSpec) -> ArenaSpec:
    """The arena a call names (from the catalog), or the spec it gives (its checks validated here)."""
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


def check_store(kind: str) -> None:
    """A known store whose server answers, before anything runs: else one line (UserError)."""
    if kind not in stores.STORES:
        raise UserError(f"unknown store {kind!r}; choose from {', '.join(stores.STORES)}")
    if kind != "sqlite":
        try:
            stores.server_version(kind)
        except stores.StoreError as exc:
            raise UserError(str(exc)) from None
