"""`example_vanilla`: the reference adapter (arena's `vanilla`) registered from a plugin under its own name.

It adds nothing to vanilla's loop, so it measures exactly what vanilla measures; it is here to show
the contract. A real plugin adapter implements `arena.types.ResumableRunner` for its framework
(docs/adapters.md, "Writing an adapter") and imports the framework inside its methods.
"""

from __future__ import annotations

from arena_builtins.adapters.vanilla import VanillaAdapter


class ExampleVanillaAdapter(VanillaAdapter):
    # `info.name` must be the entry point's name: run directories and reports go by it
    info = VanillaAdapter.info.model_copy(update={"name": "example_vanilla"})
