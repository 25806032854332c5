"""Where the paused flow is kept: CrewAI's SQLiteFlowPersistence, a database file in the item's workdir (CrewAI has
no other flow persistence: `--store postgres|redis` is declared unsupported)."""

from __future__ import annotations

import os
from typing import Any

from arena.for_adapters import LegContext

DB_NAME = "crewai-flows.sqlite"


def persistence(ctx: LegContext, db: str) -> Any:
    from crewai.flow.persistence import SQLiteFlowPersistence

    return SQLiteFlowPersistence(os.path.join(ctx.workdir, db))  # an absolute `db` stays as it is
