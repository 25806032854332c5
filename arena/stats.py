"""Statistics of repeated runs (`arena run --epochs N`): how often each item passes, and how reliably.

A real model answers differently from one run to the next, so one run per item says little; with
N epochs per item the harness reports:

- per item, the epochs that passed out of those measured (`EpochTally`);
- **pass@1**: the mean over items of the fraction of each item's measured epochs that passed (the
  chance that one run of a random item passes);
- **pass^k** (tau-bench's): the mean over items of the unbiased estimator C(c, k) / C(n, k), with n
  the item's measured epochs and c those that passed (the chance that k runs of a random item all
  pass). With k = the epochs run, it is the fraction of items whose every epoch passed; items with
  fewer than k measured epochs cannot estimate it and are left out of it;
- a 95% confidence interval for pass@1: the **Wilson score interval** over all measured
  item-epochs as independent trials (closed-form and deterministic; it ignores that epochs of one
  item are correlated, so with items of very different difficulty it is narrower than an
  item-level bootstrap would be).

Errored epochs (the harness could not measure them) are excluded from every figure and counted
separately: an endpoint's failure is not the framework's.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pydantic import BaseModel

if TYPE_CHECKING:
    from arena.results import ItemResult

Z95 = 1.959963984540054  # the standard normal's 97.5th percentile


class EpochTally(BaseModel):
    """One item's epochs: passed, measured (passed or failed) and errored (not measured)."""

    passed: int = 0
    measured: int = 0
    errored: int = 0


def per_item(results: Iterable[ItemResult]) -> dict[str, EpochTally]:
    """Each item's epochs, items in the order they first appear."""
    out: dict[str, EpochTally] = {}
    for r in results:
        tally = out.setdefault(r.item_id, EpochTally())
        if r.status == "errored":
            tally.errored += 1
        else:
            tally.measured += 1
            tally.passed += r.status == "passed"
    return out


def pass_at_1(tallies: Iterable[EpochTally]) -> float | None:
    rates = [t.passed / t.measured for t in tallies if t.measured]
    return sum(rates) / len(rates) if rates else None


def pass_hat_k(tallies: Iterable[EpochTally], k: int) -> float | None:
    """tau-bench's pass^k: C(c, k) / C(n, k) averaged over the items with at least k measured epochs."""
    estimates = [math.comb(t.passed, k) / math.comb(t.measured, k) for t in tallies if t.measured >= k >= 1]
    return sum(estimates) / len(estimates) if estimates else None


def wilson(successes: int, trials: int, z: float = Z95) -> tuple[float, float] | None:
    """The Wilson score interval of a proportion (None with no trials)."""
    if trials <= 0:
        return None
    p = successes / trials
    denominator = 1 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denominator
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / denominator
    # at p = 0 or 1 a bound is exactly 0 or 1; computed, it misses by a rounding error
    return (0.0 if successes == 0 else max(0.0, centre - half)), (1.0 if successes == trials else min(1.0, centre + half))


@dataclass
class Repeated:
    """What a run of several epochs measured."""

    epochs: int
    items: dict[str, EpochTally]
    pass_at_1: float | None
    pass_hat_k: float | None
    ci: tuple[float, float] | None
    errored: int  # item-epochs the harness could not measure

    @property
    def sometimes(self) -> list[str]:
        """Items that passed in some measured epochs and failed in others."""
        return [i for i, t in self.items.items() if 0 < t.passed < t.measured]


def repeated(results: Iterable[ItemResult], epochs: int) -> Repeated:
    tallies = per_item(results)
    return summarise(tallies, epochs, errored=sum(t.errored for t in tallies.values()))


def summarise(tallies: dict[str, EpochTally], epochs: int, errored: int) -> Repeated:
    """The figures of these per-item tallies (a run's items, or the items one matrix cell counts)."""
    values = list(tallies.values())
    return Repeated(
        epochs=epochs, items=tallies, pass_at_1=pass_at_1(values), pass_hat_k=pass_hat_k(values, epochs),
        ci=wilson(sum(t.passed for t in values), sum(t.measured for t in values)), errored=errored,
    )


def percent(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def interval(ci: tuple[float, float] | None) -> str:
    return "-" if ci is None else f"{100 * ci[0]:.1f}–{100 * ci[1]:.1f}%"
