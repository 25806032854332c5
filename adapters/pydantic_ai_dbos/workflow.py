"""The adapter's one DBOS workflow, each leg's run, and the item that holds DBOS in this process.

DBOS is process-global: the item it runs (the class is `concurrent = False`) and its one workflow, registered
once per process (DBOS keeps its registry across `DBOS.destroy()`)."""

from __future__ import annotations

from typing import Any

from .client import load_dbos

WORKFLOW_NAME = "arena_pydantic_ai_dbos.leg"
RESUME_SUFFIX = "/resume"

_CURRENT: Any = None  # the PydanticAIDBOSAdapter whose item holds DBOS in this process
_WORKFLOW: Any = None


def current() -> Any:
    """The adapter whose item holds DBOS in this process, if any."""
    return _CURRENT


def hold(adapter: Any) -> None:
    """`adapter`'s item holds DBOS in this process (its leg launches it)."""
    global _CURRENT
    _CURRENT = adapter


def release(adapter: Any) -> None:
    """`adapter`'s leg destroyed DBOS: no item holds it any more (unless another took it meanwhile)."""
    global _CURRENT
    if _CURRENT is adapter:
        _CURRENT = None


def workflow() -> Any:
    global _WORKFLOW
    if _WORKFLOW is None:
        DBOS = load_dbos().DBOS

        @DBOS.workflow(name=WORKFLOW_NAME)
        async def leg(prompt: str | None, history: str | None, results: Any) -> dict[str, Any]:
            """One leg of the agent's run: from the prompt, or from the paused history with the decision."""
            adapter = _CURRENT
            if adapter is None:
                raise RuntimeError("no pydantic_ai_dbos item is running in this process")
            return await adapter._run(prompt, history, results)

        _WORKFLOW = leg
    return _WORKFLOW
