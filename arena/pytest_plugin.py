"""A pytest plugin for a framework's own test suite: run an arena on the installed framework, assert its cells.

Installed with arena (the `pytest11` entry point `arena`), it adds one fixture, `arena_cells`:

    def test_the_tool_level_gate_holds(arena_cells):
        cells = arena_cells("approval_gate", "langgraph")
        assert cells["gate_holds"].text == "24/24", cells.explain("gate_holds")

`arena_cells(arena, adapter)` (an adapter's name, `name@release`, or an adapter class) runs the arena's cells
on the adapter as `arena matrix` does (every profile its columns read, the scripted model on loopback, nothing
leaving the machine) and returns that row of the matrix: each column's cell by key or title, the items short of
it, and where the run directories are. A session runs each (arena, adapter, stream) once, however many tests
ask. The plugin imports nothing of arena's runner or of any framework until a test asks for a run, so it costs
a suite that does not use it nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from arena.errors import ArenaError

if TYPE_CHECKING:
    from arena.report.columns import Cell, Column
    from arena.report.matrix import Row


NOTE_CHARS = 160  # of each item's reason in `explain` (the run directory's trace has the rest)


class ArenaRunError(ArenaError):
    """The arena made no run of the adapter: not installed, declined by the arena, or its environment failed."""


class NoColumn(ArenaError, KeyError):
    """A column the arena does not have (a KeyError, as a mapping's missing key is; said without KeyError's quotes)."""

    __str__ = BaseException.__str__


@dataclass
class ArenaCells(Mapping[str, "Cell"]):
    """One adapter's row of one arena, as the matrix shows it: `cells["gate_holds"]` (or by its title,
    `cells["tool-level gate holds"]`) is a `Cell` (`text` "24/24", `status` pass/partial/fail/na/notrun/info,
    `n`, `total`, `evidence` per item)."""

    arena: str
    adapter: str
    row: Row
    columns: list[Column]
    run_dirs: list[Path] = field(default_factory=list)

    def _key(self, key: str) -> str:
        for column in self.columns:
            if key in (column.key, column.title):
                return column.key
        known = ", ".join(c.key for c in self.columns)
        raise NoColumn(f"{self.arena} has no column {key!r}; its columns: {known}")

    def __getitem__(self, key: str) -> Cell:
        return self.row.cells[self._key(key)]

    def __iter__(self) -> Iterator[str]:
        return iter(c.key for c in self.columns)

    def __len__(self) -> int:
        return len(self.columns)

    def short_of(self, key: str) -> list[str]:
        """The items that keep the cell from its pass (for a fault count, the items that show the fault)."""
        cell = self[key]
        return [f"{e.item} ({e.profile})" if e.profile else e.item for e in cell.evidence if cell.short_of(e)]

    def explain(self, key: str) -> str:
        """One line for an assertion message: the cell, the items short of it with why, the run directories."""
        from arena.report.facts import clip

        column = next(c for c in self.columns if c.key == self._key(key))
        cell = self[key]
        short = [f"{e.item}{f' ({e.profile})' if e.profile else ''}: {clip(e.note, NOTE_CHARS)}"
                 for e in cell.evidence if cell.short_of(e)]
        return (f"{self.adapter} x {self.arena}, {column.title}: {cell.text}"
                + (f"; short of it: {'; '.join(short)}" if short else "")
                + f" (run directories: {', '.join(str(p) for p in self.run_dirs)})")


def _run(arena: str, adapter: str | type, stream: bool, out: Path, timeout: float) -> ArenaCells:
    from arena.evaluation import evaluate_matrix
    from arena.report.matrix import compute_matrix

    runs = evaluate_matrix([adapter], [arena], out=out, timeout=timeout, stream=stream)
    mine = [r for r in runs if bool(r.meta.get("stream")) == stream]
    if not mine:
        why = "; ".join([*runs.failed.values(), *runs.declined.values()]) or "no run was made"
        raise ArenaRunError(f"{arena} made no {'streamed ' if stream else ''}run of {adapter}: {why}")
    label = str(mine[0].meta.get("adapter"))
    matrix = compute_matrix(mine)
    row = next(r for r in matrix.rows if r.adapter == label)
    columns = [c for c in matrix.columns if c.arena == arena]
    return ArenaCells(arena, label, row, columns, [r.path for r in mine])


@pytest.fixture(scope="session")
def arena_cells(tmp_path_factory: pytest.TempPathFactory) -> Callable[..., ArenaCells]:
    """`arena_cells(arena, adapter, *, stream=False, timeout=180.0)`: the adapter's row of the arena, run once
    per session (run directories under pytest's temporary directory)."""
    done: dict[tuple[str, str | type, bool], ArenaCells] = {}

    def run(arena: str, adapter: str | type, *, stream: bool = False, timeout: float = 180.0) -> ArenaCells:
        key = (arena, adapter, stream)
        if key not in done:
            name = adapter if isinstance(adapter, str) else adapter.__name__
            done[key] = _run(arena, adapter, stream, tmp_path_factory.mktemp(f"arena-{arena}-{name}"), timeout)
        return done[key]

    return run


def pytest_configure(config: Any) -> None:
    config.addinivalue_line("markers", "arena: a test that runs an arena through the arena_cells fixture")
