"""A run's identity, typed: which arena, which adapter against which release, and which variant of the run.

Run directories, the matrix's rows and columns, meta.json and the verdict record name a run by two labels, and this
module is the one place that writes and reads them:

- the adapter label: `langgraph`, `langgraph@1.1.10` (a pinned release), `langgraph@path:/src/lg` (a checkout),
  `langgraph (streamed)` (every leg through the framework's streaming API);
- the arena label: `durable_state`, `durable_state@postgres` (the paused state on a server store),
  `durable_state@upgrade` (each leg after the first resumed by the next release).

`RunId.parse` gives back exactly what `RunId.labels` wrote; no other module splits a label.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from arena.types import StoreKind

SERVER_STORES: tuple[StoreKind, ...] = ("postgres", "redis")
STREAMED = " (streamed)"
UPGRADE = "upgrade"


@dataclass(frozen=True)
class AdapterLabel:
    """An adapter as a run names it: its registered name, the release or source of its framework ("" for the
    installed one), and whether the run is streamed."""

    name: str
    release: str = ""
    streamed: bool = False

    @property
    def text(self) -> str:
        pinned = f"{self.name}@{self.release}" if self.release else self.name
        return pinned + STREAMED if self.streamed else pinned

    @property
    def plain(self) -> AdapterLabel:
        """The same adapter and release, not streamed."""
        return replace(self, streamed=False)

    @property
    def main(self) -> bool:
        """A row of the main matrix: the installed release, not streamed (not a release row, not a streamed one)."""
        return self.installed and not self.streamed

    @property
    def installed(self) -> bool:
        """The framework's installed release (no pinned release or source)."""
        return not self.release

    @classmethod
    def parse(cls, text: str) -> AdapterLabel:
        """`name[@release][ (streamed)]`; a `module:Class` name (its part before any `@` holds a colon) is a name."""
        streamed = text.endswith(STREAMED)
        body = text[: -len(STREAMED)] if streamed else text
        name, at, release = body.partition("@")
        if not at or ":" in name:
            return cls(body, "", streamed)
        return cls(name, release, streamed)


@dataclass(frozen=True)
class ArenaLabel:
    """An arena as a run names it: the arena, the store the paused state was kept in, and whether the run was
    resumed across an upgrade."""

    name: str
    store: StoreKind = "sqlite"
    upgrade: bool = False

    @property
    def text(self) -> str:
        if self.upgrade:
            return f"{self.name}@{UPGRADE}"
        return self.name if self.store == "sqlite" else f"{self.name}@{self.store}"

    @property
    def scope(self) -> str:
        """What follows the `@`: the store, `upgrade`, or "" for the arena itself."""
        return self.text.partition("@")[2]

    @classmethod
    def parse(cls, text: str) -> ArenaLabel:
        name, _, scope = text.partition("@")
        if scope == UPGRADE:
            return cls(name, upgrade=True)
        if scope in SERVER_STORES:
            return cls(name, store=scope)  # one of SERVER_STORES
        return cls(text)


@dataclass(frozen=True)
class RunId:
    """One run: its arena label, its adapter label and the model profile it ran with."""

    arena: ArenaLabel
    adapter: AdapterLabel
    profile: str = ""

    @classmethod
    def of(cls, arena: str, adapter: str, profile: str = "", *, release: str = "", streamed: bool = False,
           store: StoreKind = "sqlite", upgrade: bool = False) -> RunId:
        return cls(ArenaLabel(arena, store, upgrade), AdapterLabel(adapter, release, streamed), profile)

    @classmethod
    def parse(cls, arena: str, adapter: str, profile: str = "") -> RunId:
        return cls(ArenaLabel.parse(arena), AdapterLabel.parse(adapter), profile)

    @property
    def labels(self) -> tuple[str, str]:
        """(arena label, adapter label): what meta.json's `arena` and `adapter` say."""
        return self.arena.text, self.adapter.text

    @property
    def key(self) -> str:
        """The cell key shards, jobs and `--resume` go by: `<arena>/<adapter>/<profile>`."""
        return cell_key(self.arena.text, self.adapter.text, self.profile)


def cell_key(arena: str, adapter: str, profile: str) -> str:
    """A cell's key from its labels as a run directory's meta.json gives them."""
    return f"{arena}/{adapter}/{profile}"

