"""arena as a library: `evaluate()` runs an arena on adapters, `evaluate_matrix()` runs the matrix.

This is what `arena run` and `arena matrix` do, without the command line: the CLI parses, calls these,
and renders what they return. Bad input raises `UserError` (one line); an adapter whose environment
cannot be built, or that its arena declines, is left out and named in the returned `Evaluation`; what
happens while it runs is told to a `Reporter` (progress, warnings), silent by default.

    import arena
    runs = arena.evaluate("human_in_the_loop", ["vanilla"], out=Path("runs"))
    assert all(r.status == "passed" for run in runs for r in run.results)

One concept per module (each imports its siblings, never this package):

- `reporting.py`: what an evaluation tells (`Reporter`, `Silent`) and returns (`Evaluation`, `Declined`,
  `run_summary_json`).
- `selection.py`: the adapters (`select_adapters`, `Target`), arena and store a call names, resolved and checked.
- `placement.py`: where an adapter runs (this process, workers, fork servers, a second process), prepared once.
- `one_run.py`: one arena × adapter × model into its run directory (`RunConfig`, `run_one`).
- `resumption.py`: `--resume`, what an interrupted run directory was running, checked against the call.
- `arena_run.py`: `evaluate()`, what `arena run` does.
- `planning.py`: a matrix's cells, their order and cost (`Cell`, `matrix_plan`, `cell_cost`).
- `matrix_run.py`: `evaluate_matrix()` and `run_job`, what `arena matrix` (and each of its `--jobs`) does.
"""

from __future__ import annotations

from arena.errors import UserError as UserError
from arena.evaluation.arena_run import evaluate
from arena.evaluation.matrix_run import evaluate_matrix, run_job as run_job
from arena.evaluation.one_run import RunConfig as RunConfig, default_concurrency, run_one, upgraded as upgraded
from arena.evaluation.planning import Cell as Cell, cell_cost, matrix_plan, upgrade_pairs as upgrade_pairs
from arena.evaluation.reporting import Declined, Evaluation, Level as Level, Reporter, Silent
from arena.evaluation.reporting import run_summary_json as run_summary_json
from arena.evaluation.selection import Target as Target, select_adapters

__all__ = ["Declined", "Evaluation", "Reporter", "Silent", "cell_cost", "default_concurrency", "evaluate",
           "evaluate_matrix", "matrix_plan", "run_one", "select_adapters"]
