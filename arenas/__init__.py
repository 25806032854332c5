"""The built-in arenas: one package per task class, each exposing `ARENA`, an `arena.spec.ArenaSpec`.

They are registered in pyproject.toml's `arena.arenas` entry points, exactly as a plugin's are, and
found through `arena.catalog`. Packages whose name starts with `_` hold what several arenas share.
"""
