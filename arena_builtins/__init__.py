"""arena's built-in arenas and adapters, under the name they are installed with.

`arena_builtins.arenas` and `arena_builtins.adapters` are the repository's top-level folders `arenas/`
and `adapters/` (the layout shows the architecture: core, adapters, arenas side by side). Installed, they
live in this package, so that arena puts no top-level `arenas` or `adapters` module into site-packages
(`adapters` is another distribution's name on the package index); in a checkout, this package's path
reaches the folders where they are. Import them only by these names: the entry points in pyproject.toml
do, and so does everything else, so that each module is loaded once.
"""

from __future__ import annotations

from pathlib import Path

_here = Path(__file__).resolve().parent
if not (_here / "arenas").is_dir():  # a checkout: the folders sit beside this package
    __path__.append(str(_here.parent))  # type: ignore[name-defined]  # noqa: F821
