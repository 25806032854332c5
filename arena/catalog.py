"""One catalog of arenas and adapters: both found the same way, from installed entry points.

Arenas register in the `arena.arenas` group (name = arena name, value = a module exposing `ARENA` or
"module:NAME" naming an `ArenaSpec`); adapters in `arena.adapters` (name = adapter name, value =
"module:Class"). arena's own built-ins are registered in its pyproject.toml exactly as a plugin's are,
so the core imports neither the `arenas` nor the `adapters` package: it knows them only as entries.

Entries are read from metadata. A built-in adapter's class is imported to read what it needs installed
(its module imports its framework lazily, so this is cheap); a plugin's code is imported only when it
is loaded to run, so `arena list` cannot be broken by one. Where a plugin has a built-in's name, the
built-in wins (one warning line).
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from arena import DISTRIBUTION
from arena.errors import NotFound, PluginError, exited_at_import
from arena.adapter import Adapter, AdapterContractError, as_adapter

if TYPE_CHECKING:  # what workers import of the catalog (load_target) stays light: arenas load arena.spec
    from arena.spec import ArenaSpec
    from arena.model.script import Policy
    from arena.report.columns import Column

ARENAS = "arena.arenas"
ADAPTERS = "arena.adapters"
BUILT_IN = "arena"  # who provides a built-in, as `arena list` and meta.json show it


@dataclass(frozen=True)
class AdapterEntry:
    """An adapter as the catalog knows it: plain data, so listing one runs nothing of its framework."""

    name: str
    target: str  # "module:Class"
    framework: str  # the distribution whose version is reported (a plugin's: its own, until its class is loaded)
    requires: tuple[str, ...] = ()  # distributions that must be installed besides `framework`
    environment: Literal["shared", "isolated"] = "shared"  # "isolated": runs in a worker in its own environment
    # whether items may run at once in one process: not when the framework keeps process-wide state
    # bound to one event loop (each item runs in an event loop of its own)
    concurrent: bool = True
    # who provides it: "arena" for a built-in, "<distribution> <version>" for a plugin
    distribution: str = BUILT_IN
    # an isolated environment's name when not the adapter name's first word (an adapter run against
    # another release of its framework: "langgraph@1.1.10", arena/versions.py)
    env: str = ""
    # the framework's unreleased source, for `name@path:...` / `name@git+...` (arena/versions.py): meta.json records it
    source: str = ""

    @property
    def plugin(self) -> bool:
        return self.distribution != BUILT_IN

    @property
    def isolated(self) -> bool:
        return self.environment == "isolated"

    @property
    def env_name(self) -> str:
        return (self.env or self.name.split("_")[0]) if self.isolated else ""

    @property
    def version(self) -> str | None:
        """Installed version; for an isolated adapter, the version its committed requirements pin."""
        if self.isolated:
            from arena.worker import envs

            return envs.pinned_version(self.env_name, self.framework)
        try:
            return metadata.version(self.framework)
        except metadata.PackageNotFoundError:
            return None

    @property
    def available(self) -> bool:
        """Framework distributions installed and the adapter module present (nothing of a plugin is imported)."""
        if self.plugin:  # its top-level package only: finding `pkg.mod` would run pkg/__init__.py
            try:
                return importlib.util.find_spec(self.target.partition(":")[0].split(".")[0]) is not None
            except (ImportError, ValueError):
                return False
        if self.isolated:  # built on first use
            from arena.worker import envs

            return envs.known(self.env_name)
        for dist in (self.framework, *self.requires):
            try:
                metadata.version(dist)
            except metadata.PackageNotFoundError:
                return False
        return True

    def load(self) -> type[Adapter]:
        cls = load_target(self.target)
        if self.plugin and cls.info.name != self.name:  # run directories and reports go by the name
            raise PluginError(f"{self.target!r} is registered as {self.name!r} but its info.name is {cls.info.name!r}")
        return cls


# -- discovery ---------------------------------------------------------------------------------------

def _provider(ep: metadata.EntryPoint) -> str:
    dist = ep.dist
    if dist is None:
        return "unknown distribution"
    return BUILT_IN if dist.name == DISTRIBUTION else f"{dist.name} {dist.version}"


@functools.cache
def _entry_points(group: str) -> dict[str, tuple[metadata.EntryPoint, str]]:
    """A group's installed entry points by name, with who provides each; built-ins first, then plugins
    by name. Read from metadata, nothing imported; cached, so each name clash is warned about once."""
    kind = group.rpartition(".")[2].rstrip("s")
    eps = list(metadata.entry_points(group=group))
    own = [(ep, BUILT_IN) for ep in eps if _provider(ep) == BUILT_IN] or [(ep, BUILT_IN) for ep in _checkout(group)]
    others = sorted(((ep, _provider(ep)) for ep in eps if _provider(ep) != BUILT_IN), key=lambda e: e[0].name)
    found: dict[str, tuple[metadata.EntryPoint, str]] = {}
    for ep, dist in own + others:
        if ep.name in found:
            other = f"a built-in {kind}" if found[ep.name][1] == BUILT_IN else found[ep.name][1]
            print(f"arena: warning: {kind} {ep.name!r} from {dist} ignored: {other} has that name", file=sys.stderr)
        else:
            found[ep.name] = (ep, dist)
    return found


def _checkout(group: str) -> list[metadata.EntryPoint]:
    """The built-ins of a checkout that is not installed (an isolated environment that has the repository
    on its path, and not arena's metadata): the same entry points, read from its pyproject.toml."""
    import tomllib

    pyproject = Path(__file__).resolve().parent.parent / "pyproject.toml"
    try:
        project = tomllib.loads(pyproject.read_text()).get("project", {})
    except (OSError, ValueError):
        return []
    if project.get("name") != DISTRIBUTION:
        return []
    table = project.get("entry-points", {}).get(group, {})
    return [metadata.EntryPoint(name, value, group) for name, value in table.items()]


def _target(ep: metadata.EntryPoint) -> str:
    return f"{ep.module}:{ep.attr}" if ep.attr else ep.module


# -- adapters ----------------------------------------------------------------------------------------

@functools.cache
def adapters() -> dict[str, AdapterEntry]:
    """Every adapter: the built-ins in their declared `order`, then installed plugins by name."""
    builtin: list[tuple[int, AdapterEntry]] = []
    plugins: list[AdapterEntry] = []
    for name, (ep, dist) in _entry_points(ADAPTERS).items():
        if dist == BUILT_IN:
            cls = load_target(_target(ep))
            builtin.append((cls.order, AdapterEntry(name, _target(ep), cls.info.framework, cls.requires,
                                                    cls.environment, cls.concurrent)))
        else:
            plugins.append(AdapterEntry(name, _target(ep), ep.dist.name if ep.dist is not None else name,
                                        distribution=dist))
    ordered = [e for _, e in sorted(builtin, key=lambda pair: (pair[0], pair[1].name))]
    return {e.name: e for e in [*ordered, *plugins]}


def builtin_adapters() -> dict[str, AdapterEntry]:
    return {name: e for name, e in adapters().items() if not e.plugin}


def _first_line(exc: BaseException) -> str:
    """What went wrong, in one line: a pydantic error's own messages (its first line only says how many)."""
    from pydantic import ValidationError

    if isinstance(exc, ValidationError):
        return "; ".join(str(e.get("msg", "")).removeprefix("Value error, ") for e in exc.errors())
    return (str(exc).strip().splitlines() or [""])[0]


def load_target(target: str) -> type[Adapter]:
    """Import `module:Class` as an `Adapter` (its declared channels checked against its hooks); raises PluginError (a
    ValueError) with a one-line reason."""
    module_name, _, attr = target.partition(":")
    if not module_name or not attr:
        raise PluginError(f"adapter {target!r} is not a registered name or a 'module:Class' path")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise PluginError(f"cannot import {module_name!r}: {exc}") from None
    except Exception as exc:  # a module that fails on import (a syntax error, an exception): its own one line
        first = _first_line(exc)
        raise PluginError(f"importing {module_name!r} failed: {type(exc).__name__}: {first}".rstrip(": ")) from None
    except SystemExit as exc:  # it would end arena with its code and not a word
        raise PluginError(exited_at_import(module_name, exc)) from None
    try:
        cls = getattr(module, attr)
    except AttributeError:
        raise PluginError(f"{module_name!r} has no attribute {attr!r}") from None
    try:
        return as_adapter(cls, repr(target), discover=arenas)
    except AdapterContractError as exc:
        raise PluginError(str(exc)) from None


# -- arenas ------------------------------------------------------------------------------------------

def arena_names() -> list[str]:
    """Built-in arenas, then installed plugin arenas, each by name (nothing of a plugin is imported)."""
    found = _entry_points(ARENAS)
    return [*sorted(n for n, (_, d) in found.items() if d == BUILT_IN), *sorted(n for n, (_, d) in found.items()
                                                                               if d != BUILT_IN)]


def provider(name: str) -> str:
    """Who provides the arena: "arena", or a plugin's "<distribution> <version>"."""
    return _entry_points(ARENAS)[name][1]


_loaded: dict[str, ArenaSpec | PluginError] = {}  # so that a broken arena is imported once


def load_arena(name: str) -> ArenaSpec:
    """The arena's spec; NotFound if no such arena is registered, PluginError if it cannot be loaded."""
    found = _entry_points(ARENAS)
    if name not in found:
        raise NotFound(f"no arena {name!r} is registered")
    if name not in _loaded:
        _loaded[name] = _load_arena(name, *found[name])
    spec = _loaded[name]
    if isinstance(spec, PluginError):
        raise spec
    return spec


def _load_arena(name: str, ep: metadata.EntryPoint, dist: str) -> ArenaSpec | PluginError:
    from arena.spec import ArenaSpec

    where = f"arena {name!r} (from {dist})"
    try:
        obj = ep.load()
    except Exception as exc:  # whatever the arena raises on import: one line
        first = (str(exc).strip().splitlines() or [""])[0]
        return PluginError(f"{where}: importing {ep.value!r} failed: {type(exc).__name__}: {first}".rstrip(": "))
    except SystemExit as exc:  # it would end arena with its code and not a word
        return PluginError(f"{where}: {exited_at_import(ep.value, exc)}")
    spec = obj if isinstance(obj, ArenaSpec) else getattr(obj, "ARENA", None)
    if not isinstance(spec, ArenaSpec):
        return PluginError(f"{where}: {ep.value!r} is neither an ArenaSpec nor a module exposing ARENA")
    if spec.name != name:  # run directories and reports go by the name
        return PluginError(f"{where}: registered as {name!r} but its ArenaSpec is named {spec.name!r}")
    from arena.checks import validate_checks

    try:
        validate_checks(spec)
    except ValueError as exc:
        return PluginError(f"{where}: {exc}")
    return spec


_skipped: set[str] = set()


def arenas() -> list[ArenaSpec]:
    """Every arena, in report order; one that cannot be loaded is left out (one warning line)."""
    specs = []
    for name in arena_names():
        try:
            specs.append(load_arena(name))
        except PluginError as exc:
            if name not in _skipped:
                _skipped.add(name)
                print(f"arena: warning: {exc}; left out", file=sys.stderr)
    return sorted(specs, key=lambda spec: (spec.order, spec.name))


def find_arena(name: str) -> ArenaSpec | None:
    """The arena's spec, or None when this installation has no such arena (PluginError if it cannot be loaded)."""
    try:
        return load_arena(name)
    except NotFound:
        return None


def arena_of(name: str) -> ArenaSpec | None:
    """The arena a run of `name` measured: a run on a server store is named `<arena>@<store>` (arena/stores.py)."""
    from arena.run_id import ArenaLabel

    return find_arena(ArenaLabel.parse(name).name)


def columns() -> list[Column]:
    """Every arena's matrix columns, arenas in report order."""
    return [column for spec in arenas() for column in spec.columns]


def policies() -> Mapping[str, Policy]:
    """Every scripted profile of every arena, by name, for requests not made on behalf of a particular
    arena; where two arenas have a profile of the same name, the first arena's (in report order)."""
    out: dict[str, Policy] = {}
    for spec in arenas():
        for name, policy in spec.all_policies.items():
            out.setdefault(name, policy)
    return out
