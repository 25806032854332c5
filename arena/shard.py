"""A matrix split over N machines of an existing scheduler, and what a merge of their runs is missing.

Every shard computes the same plan (arena × profile × adapter, with `--versions` the older releases too) and
the same partition of its cells, balanced by expected cost, so shard K of N needs nothing but K and N: a CI
job matrix, a Kubernetes Indexed Job or a Slurm array index is enough. Each shard writes a manifest beside its
run directories (`shard-K-of-N.json`: the whole plan, its own cells, and how it ended); a merge
(`arena matrix --runs DIR...`) reads the manifests it finds and names every planned cell that no run
directory and no shard's account delivered, so a shard that failed shows as missing cells, never as a gap.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena.run_id import cell_key  # noqa: F401  (re-exported: the matrix's cells go by it)
from arena.errors import UserError

MANIFEST = re.compile(r"^shard-(\d+)-of-(\d+)\.json$")


@dataclass(frozen=True)
class Shard:
    """Shard `index` (1-based) of `count`."""

    index: int
    count: int

    @classmethod
    def parse(cls, text: str) -> Shard:
        """'K/N' with 1 <= K <= N; a UserError of one line otherwise."""
        m = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", text)
        if m is None or not 1 <= int(m.group(1)) <= int(m.group(2)):
            raise UserError(f"--shard {text!r}: give K/N with 1 <= K <= N (e.g. 2/4)")
        return cls(int(m.group(1)), int(m.group(2)))

    @property
    def manifest_name(self) -> str:
        return f"shard-{self.index}-of-{self.count}.json"

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


def assign(costs: Sequence[tuple[str, float]], count: int) -> dict[str, int]:
    """Each cell's shard (1-based): the costliest cells first, each to the least loaded shard (ties: the lower
    index; cells of equal cost in key order), so every machine computes the same partition. More shards than
    cells is a UserError (some machines would have nothing to run, and a huge N would not fit in memory)."""
    if count > len(costs):
        raise UserError(f"--shard K/{count}: the matrix has {len(costs)} cell(s) to share; give N <= {len(costs)}")
    loads = [0.0] * count
    out: dict[str, int] = {}
    for key, cost in sorted(costs, key=lambda kc: (-kc[1], kc[0])):
        k = min(range(count), key=lambda i: (loads[i], i))
        loads[k] += cost
        out[key] = k + 1
    return out


@dataclass(frozen=True)
class Missing:
    """A planned cell that the merge has no run of and no shard's account for."""

    cell: str
    shard: str
    why: str

    def to_json(self) -> dict[str, str]:
        return {"cell": self.cell, "shard": self.shard, "why": self.why}

    def text(self) -> str:
        return f"{self.cell} (shard {self.shard}: {self.why})"


def write_manifest(out: Path, shard: Shard, plan: dict[str, int], status: str,
                   declined: dict[str, str] | None = None, failed: dict[str, str] | None = None) -> Path:
    """The shard's account, rewritten as it goes: `started` first, `finished` once every cell was tried."""
    path = out / shard.manifest_name
    data = {"shard": shard.index, "of": shard.count, "status": status, "plan": plan,
            "mine": sorted(k for k, s in plan.items() if s == shard.index),
            "declined": declined or {}, "failed": failed or {}}
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    tmp.replace(path)
    return path


def _manifests(dirs: Iterable[Path]) -> list[dict[str, Any]]:
    found = []
    for d in dirs:
        for p in sorted(d.iterdir()) if d.is_dir() else []:
            if MANIFEST.match(p.name):
                try:
                    found.append(json.loads(p.read_text()))
                except (OSError, ValueError):
                    continue  # unreadable: its cells count as missing (no account of them)
    return found


def missing(dirs: Iterable[Path], delivered: set[str]) -> list[Missing]:
    """The planned cells that neither a run directory (`delivered`: arena/adapter/profile keys) nor the
    account of a shard that finished covers. No manifest in `dirs`: the runs were not sharded, nothing is."""
    manifests = _manifests(dirs)
    if not manifests:
        return []
    plan: dict[str, int] = {}
    count = max(int(m["of"]) for m in manifests)
    for m in manifests:
        plan.update(m.get("plan") or {})
    accounts = {int(m["shard"]): m for m in manifests if int(m["of"]) == count}
    out = []
    for key in sorted(plan):
        if key in delivered:
            continue
        k = plan[key]
        account = accounts.get(k)
        if account is None:
            why = "no manifest of this shard among the merged directories: it never ran or its output was lost"
        elif key in account.get("declined", {}):
            continue  # the arena does not run this adapter: a `not run` cell with its reason, not a gap
        elif key in account.get("failed", {}):
            why = f"failed: {account['failed'][key]}"
        elif account.get("status") != "finished":
            why = "the shard did not finish"
        else:
            why = "the shard finished without a run directory for it"
        out.append(Missing(cell=key, shard=f"{k}/{count}", why=why))
    return out


__all__ = ["Missing", "Shard", "assign", "cell_key", "missing", "write_manifest"]
