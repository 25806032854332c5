"""arena: measures how agent frameworks pause for a human and resume.

The library entry points are `arena.evaluate()` (what `arena run` does) and `arena.evaluate_matrix()`
(what `arena matrix` runs); see arena/evaluation/. They are imported on first use, so that
`import arena` (and `arena --help`) stays instant.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"
DISTRIBUTION = "pause-arena"  # the name it is installed under (`arena` is another project's on the index)

if TYPE_CHECKING:
    from arena.evaluation import Evaluation, Reporter, evaluate, evaluate_matrix

_LAZY = {"evaluate", "evaluate_matrix", "Evaluation", "Reporter"}
__all__ = ["DISTRIBUTION", "Evaluation", "Reporter", "__version__", "evaluate", "evaluate_matrix"]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        from arena import evaluation

        return getattr(evaluation, name)
    raise AttributeError(f"module 'arena' has no attribute {name!r}")
