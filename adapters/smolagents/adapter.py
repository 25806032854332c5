"""The smolagents adapters: `SmolagentsAdapter` (no pause, the run goes to completion in one leg) and
`SmolagentsEmulatedAdapter` (an interrupt from a step callback, resumed on the live agent), on one base that builds
the `ToolCallingAgent`."""

from __future__ import annotations

import asyncio
from abc import abstractmethod
from typing import TYPE_CHECKING, Any

from arena.for_adapters import Adapter, Decision, LegContext, LegResult, ToolSpec

from .client import server_model, smolagents, tool_calling_agent
from .info import EMULATED_INFO, INFO
from .outcome import Interrupted, final_text, step_callbacks, suspended
from .stream import run_agent
from .tools import PENDING, harness_tools

if TYPE_CHECKING:
    from arena.for_adapters import DecisionSet


class SmolagentsBase(Adapter):
    """Builds the agent; subclasses decide what the approval tool does."""

    # what a fork server imports before it forks workers (arena/worker/forkserver.py); smolagents imports openai at its
    # first model client, and its prompts and the console's colour style at its first agent
    preload = ("smolagents", "smolagents.utils", "openai", "smolagents.prompts", "pygments.styles.gh_dark")

    def __init__(self) -> None:
        self._model: Any = None

    async def aclose(self) -> None:
        if self._model is not None:
            self._model.client.close()
            self._model = None

    @abstractmethod
    def _approval_body(self, ctx: LegContext, spec: ToolSpec) -> Any:
        """What the approval tool does in this adapter."""

    def _step_callbacks(self, ctx: LegContext) -> dict[Any, Any] | None:
        return None

    def _build(self, ctx: LegContext) -> Any:
        sa = smolagents()
        tools = harness_tools(ctx, self._approval_body)
        self._model = server_model(sa, ctx)
        return tool_calling_agent(sa, ctx, tools, self._model, self._step_callbacks(ctx))


class SmolagentsAdapter(SmolagentsBase):
    order = 80
    info = INFO

    def _approval_body(self, ctx: LegContext, spec: ToolSpec) -> Any:
        # smolagents cannot pause on it: the call is simply executed, by the harness, which logs it.
        return lambda kwargs: ctx.tools.call(spec.name, kwargs)

    async def start(self, ctx: LegContext) -> LegResult:
        agent = self._build(ctx)
        output = await asyncio.to_thread(run_agent, agent, ctx.item.input, ctx)
        return LegResult.finished(final_text(output))

    async def resume(self, state: Any, decision: Decision | DecisionSet, ctx: LegContext) -> LegResult:
        return LegResult.errored("smolagents never suspends, so there is nothing to resume")


class SmolagentsEmulatedAdapter(SmolagentsBase):
    order = 81
    info = EMULATED_INFO

    def __init__(self) -> None:
        super().__init__()
        self._approval_name: str | None = None
        self._interrupted: Interrupted | None = None

    def _approval_body(self, ctx: LegContext, spec: ToolSpec) -> Any:
        # Adapter-owned: the harness's request_approval is never executed. The observation is a
        # placeholder until resume() replaces it with the human's decision.
        return lambda kwargs: PENDING

    def _step_callbacks(self, ctx: LegContext) -> dict[Any, Any]:
        return step_callbacks(self, ctx)

    async def _run(self, agent: Any, task: str, reset: bool, ctx: LegContext) -> LegResult:
        from smolagents.utils import AgentError

        self._interrupted = None
        try:
            output = await asyncio.to_thread(run_agent, agent, task, ctx, reset)
        except AgentError as exc:
            if self._interrupted is None or str(exc) != "Agent interrupted.":
                raise  # any other framework error is the item's error
            return suspended(self._interrupted)
        return LegResult.finished(final_text(output))

    async def start(self, ctx: LegContext) -> LegResult:
        agent = self._build(ctx)
        return await self._run(agent, ctx.item.input, reset=True, ctx=ctx)

    # narrower than Adapter.resume (mypy: override): the body reads one Decision (`as_text`), never a DecisionSet
    async def resume(  # type: ignore[override]
            self, state: Interrupted, decision: Decision, ctx: LegContext) -> LegResult:
        step = state.step
        step.observations = step.observations.replace(PENDING, decision.as_text(), 1)
        return await self._run(state.agent, ctx.item.input, reset=False, ctx=ctx)
