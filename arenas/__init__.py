"""Arenas: one package per task class. Each exposes `ARENA`, an `arena.spec.ArenaSpec`.

Packages whose name starts with `_` hold what several arenas share; they are not arenas.
Third-party arenas register through the `arena.arenas` entry point group: name = arena name, value =
a module exposing `ARENA` (as a package here does) or "module:NAME" naming the ArenaSpec. They are
discovered from installed metadata only and imported when loaded.
"""

from __future__ import annotations

import functools
import importlib
import pkgutil
import sys
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING

from arena.errors import PluginError, exited_at_import  # the CLI prints a PluginError as one line, exit 2
from arena.spec import ArenaSpec

if TYPE_CHECKING:
    from arena.model.script import Policy
    from arena.report.columns import Column


def _builtin() -> list[str]:
    found = pkgutil.iter_modules([str(Path(__file__).parent)])
    return sorted(m.name for m in found if m.ispkg and not m.name.startswith("_"))


@functools.cache
def _plugins() -> dict[str, tuple[metadata.EntryPoint, str]]:
    from adapters import entry_points

    return entry_points("arena.arenas", set(_builtin()))


def names() -> list[str]:
    """Built-in arenas, then installed plugin arenas (nothing of a plugin is imported)."""
    return [*_builtin(), *sorted(_plugins())]


def distribution(name: str) -> str:
    """Who provides the arena: "arena", or a plugin's "<distribution> <version>"."""
    return _plugins()[name][1] if name in _plugins() else "arena"


_loaded: dict[str, ArenaSpec | PluginError] = {}  # plugin arenas, so that a broken one is imported once


def load(name: str) -> ArenaSpec:
    if name in _builtin():
        return importlib.import_module(f"arenas.{name}").ARENA
    if name not in _plugins():
        raise KeyError(name)
    if name not in _loaded:
        _loaded[name] = _load_plugin(name, *_plugins()[name])
    found = _loaded[name]
    if isinstance(found, PluginError):
        raise found
    return found


def _load_plugin(name: str, ep: metadata.EntryPoint, dist: str) -> ArenaSpec | PluginError:
    where = f"arena {name!r} (from {dist})"
    try:
        obj = ep.load()
    except Exception as exc:  # whatever the plugin raises on import: one line
        first = (str(exc).strip().splitlines() or [""])[0]
        return PluginError(f"{where}: importing {ep.value!r} failed: {type(exc).__name__}: {first}".rstrip(": "))
    except SystemExit as exc:  # it would end arena with its code and not a word
        return PluginError(f"{where}: {exited_at_import(ep.value, exc)}")
    spec = obj if isinstance(obj, ArenaSpec) else getattr(obj, "ARENA", None)
    if not isinstance(spec, ArenaSpec):
        return PluginError(f"{where}: {ep.value!r} is neither an ArenaSpec nor a module exposing ARENA")
    if spec.name != name:  # run directories and reports go by the name
        return PluginError(f"{where}: registered as {name!r} but its ArenaSpec is named {spec.name!r}")
    return spec


_skipped: set[str] = set()


def ordered() -> list[ArenaSpec]:
    """Every arena, in report order; a plugin arena that cannot be loaded is left out (one warning line)."""
    specs = []
    for name in names():
        try:
            specs.append(load(name))
        except PluginError as exc:
            if name not in _skipped:
                _skipped.add(name)
                print(f"arena: warning: {exc}; left out", file=sys.stderr)
    return sorted(specs, key=lambda spec: (spec.order, spec.name))


def columns() -> list[Column]:
    """Every arena's matrix columns, arenas in report order."""
    return [column for spec in ordered() for column in spec.columns]


def policies() -> dict[str, Policy]:
    """Every scripted profile of every arena, by name, for requests not made on behalf of a particular
    arena; where two arenas have a profile of the same name, the first arena's (in report order)."""
    out: dict[str, Policy] = {}
    for spec in ordered():
        for name, policy in spec.all_policies.items():
            out.setdefault(name, policy)
    return out
