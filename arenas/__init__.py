"""Arenas: one package per task class. Each exposes `ARENA`, an `arena.spec.ArenaSpec`.

Packages whose name starts with `_` hold what several arenas share; they are not arenas.
"""

from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path
from typing import TYPE_CHECKING

from arena.spec import ArenaSpec

if TYPE_CHECKING:
    from arena.model.script import Policy
    from arena.report.columns import Column


def names() -> list[str]:
    found = pkgutil.iter_modules([str(Path(__file__).parent)])
    return sorted(m.name for m in found if m.ispkg and not m.name.startswith("_"))


def load(name: str) -> ArenaSpec:
    if name not in names():
        raise KeyError(name)
    return importlib.import_module(f"arenas.{name}").ARENA


def ordered() -> list[ArenaSpec]:
    """Every arena, in report order."""
    return sorted((load(n) for n in names()), key=lambda spec: (spec.order, spec.name))


def columns() -> list[Column]:
    """Every arena's matrix columns, arenas in report order."""
    return [column for spec in ordered() for column in spec.columns]


def policies() -> dict[str, Policy]:
    """Every scripted profile of every arena, by name, for requests not made on behalf of a particular
    arena; where two arenas have a profile of the same name, the first arena's (in report order)."""
    out: dict[str, Policy] = {}
    for spec in ordered():
        for name, policy in spec.policies.items():
            out.setdefault(name, policy)
    return out
