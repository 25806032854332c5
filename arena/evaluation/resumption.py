"""`--resume`: what an interrupted run directory was running (its adapter, model, items, epochs, seed, stream,
store), checked against what the call asks for."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from arena import stores
from arena.errors import UserError
from arena.types import StoreKind


@dataclass
class Resumed:
    target: str
    model: str
    items: list[str]
    status: str
    epochs: int
    seed: int
    stream: bool = False
    store: StoreKind = "sqlite"


def resumable(path: Path, arena_name: str, adapters: Sequence[object], model: str | None,
               items: Sequence[str] | None, epochs: int | None, seed: int | None) -> Resumed:
    """What an interrupted run directory was running (its adapter, model, items), checked against the call."""
    from arena.rundir import status_of

    if items:
        raise UserError("--resume runs the run directory's own items; leave out --item")
    try:
        meta = json.loads((path / "meta.json").read_text())
        with (path / "results.jsonl").open("rb"):  # a file that opens (not a directory), as resuming reads it
            pass
    except (OSError, ValueError):
        raise UserError(f"--resume {str(path)!r} is not a run directory (meta.json and results.jsonl)") from None
    ran_arena, ran_store = stores.unscoped(str(meta.get("arena")))
    if ran_arena != arena_name:
        raise UserError(f"--resume {str(path)!r} is a run of {ran_arena!r}, not {arena_name!r}")
    status = status_of(meta)
    if status == "running":
        raise UserError(f"--resume {str(path)!r} is still running (pid {meta.get('pid')})")
    target = meta.get("target") or meta.get("adapter")
    if adapters and list(adapters) != [target]:
        raise UserError(f"--resume {str(path)!r} is a run of adapter {target!r}; leave out --adapter or give that one")
    if model and model != meta.get("model"):
        raise UserError(f"--resume {str(path)!r} is a run with model {meta.get('model')!r}; "
                        "leave out --model or give that one")
    ran = {"epochs": meta.get("epochs") or 1, "seed": meta.get("seed") or 0}
    for flag, value in (("epochs", epochs), ("seed", seed)):
        if value is not None and value != ran[flag]:
            raise UserError(f"--resume {str(path)!r} is a run with --{flag} {ran[flag]}; "
                            f"leave out --{flag} or give that one")
    return Resumed(target=target, model=meta.get("model"), items=list(meta.get("items") or []), status=status,
                    epochs=ran["epochs"], seed=ran["seed"], stream=bool(meta.get("stream")), store=ran_store)
