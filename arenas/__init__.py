"""Arenas: one package per task class. Each exposes `ARENA`, an `arena.spec.ArenaSpec`."""

from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path

from arena.spec import ArenaSpec


def names() -> list[str]:
    return sorted(m.name for m in pkgutil.iter_modules([str(Path(__file__).parent)]) if m.ispkg)


def load(name: str) -> ArenaSpec:
    if name not in names():
        raise KeyError(name)
    return importlib.import_module(f"arenas.{name}").ARENA
