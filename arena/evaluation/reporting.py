"""What an evaluation tells and returns: the `Reporter` that hears it (`Silent` by default), the `Evaluation`
it returns (its runs, and the adapters that made none), `Declined` (an arena that does not run an adapter), and
the JSON line `arena run --json` prints for a run."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Literal, Protocol

from arena.errors import ArenaError
from arena.report.matrix import Run
from arena.results import ItemResult, RunSummary

Level = Literal["info", "dim", "warning", "error"]


class Reporter(Protocol):
    """Hears what happens during an evaluation (the CLI draws progress bars from it)."""

    def say(self, message: str, level: Level = "info") -> None:
        """A line for the person running it: an environment being built, an adapter skipped, a warning."""

    def started(self, key: str, label: str, total: int) -> None:
        """A run of one arena × adapter × model begins: `total` item runs."""

    def result(self, key: str, result: ItemResult) -> None:
        """One item run of that run ended (also each result a resumed run already had)."""

    def finished(self, key: str, outcome: str) -> None:
        """That run ended: "n/m passed", or why it did not run ("not run: ...", "failed: ...")."""


class Silent:
    """The default reporter: hears everything, says nothing."""

    def say(self, message: str, level: Level = "info") -> None:
        pass

    def started(self, key: str, label: str, total: int) -> None:
        pass

    def result(self, key: str, result: ItemResult) -> None:
        pass

    def finished(self, key: str, outcome: str) -> None:
        pass


class Declined(ArenaError):
    """The arena does not run this adapter (ArenaSpec.declines): nothing would be measured."""


class Evaluation(list[Run]):
    """The runs an evaluation made (each as its run directory holds it: meta, results with their traces,
    the summary), and the adapters that made none: `failed` (their environment could not be built) and
    `declined` (their arena does not run them), each with the reason."""

    def __init__(self, runs: Sequence[Run] = ()) -> None:
        super().__init__(runs)
        self.failed: dict[str, str] = {}
        self.declined: dict[str, str] = {}
        self.nothing_to_do = False  # a resumed run directory that was already complete

    @property
    def summaries(self) -> list[RunSummary]:
        return [r.summary for r in self if r.summary is not None]


def run_summary_json(run: Run) -> str:
    """The one JSON line `arena run --json` prints for a run."""
    from arena.redact import redact

    if not run.summary:
        return "{}"
    if not run.meta.get("stream"):
        return redact(run.summary.model_dump_json())
    return redact(json.dumps({**run.summary.model_dump(mode="json"), "stream": True}))
