"""The leg's tool box under DBOS: each harness call a DBOS step of its own inside the workflow."""

from __future__ import annotations

from typing import Any

from arena_builtins.adapters.pydantic_ai import LegTools

from .client import load_dbos


class StepTools(LegTools):
    """The leg's tool box, each call a DBOS step inside a workflow (the documented `@DBOS.step` for a
    function tool's I/O): a recovered workflow gets a recorded answer back instead of calling again."""

    async def acall(self, name: str, args: dict[str, Any], call_id: str | None = None) -> str:
        DBOS = load_dbos().DBOS
        if DBOS.workflow_id is None or DBOS.step_id is not None:  # outside a workflow's own code: a plain call
            return str(await self._tools.acall(name, args, call_id=call_id))
        options = {"name": f"tool.{name}", "retries_allowed": False}
        return str(await DBOS.run_step_async(options, self._tools.acall, name, args, call_id=call_id))
