"""CrewAI imported lazily (once: the flow classes defined against it, the fork server's warm-up), offline, with its
app data in the item's workdir; and the model client, CrewAI's `LLM` on `ctx.model`."""

from __future__ import annotations

import contextlib
import functools
import os
from collections.abc import Iterator
from typing import Any

from arena.for_adapters import LegContext

from .decision import apply_feedback

# CrewAI's switches for telemetry (OpenTelemetry spans to CrewAI), trace upload and the PyPI
# version check. The harness is offline: these are forced, not defaulted.
OFFLINE_ENV = {
    "CREWAI_DISABLE_TELEMETRY": "true",
    "OTEL_SDK_DISABLED": "true",
    "CREWAI_TRACING_ENABLED": "false",
    "CREWAI_DISABLE_VERSION_CHECK": "true",
}


@contextlib.contextmanager
def crewai_environment(workdir: str) -> Iterator[None]:
    """Telemetry off (for good: CrewAI reads some flags at import), and CrewAI's app-data directory
    (appdirs: XDG_DATA_HOME/CREWAI_STORAGE_DIR) inside the item's workdir for the leg."""
    os.environ.update(OFFLINE_ENV)
    data = os.path.join(workdir, "crewai-data")
    os.makedirs(data, exist_ok=True)
    scoped = {"XDG_DATA_HOME": data, "CREWAI_STORAGE_DIR": "arena"}
    saved = {name: os.environ.get(name) for name in scoped}
    os.environ.update(scoped)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


@functools.cache
def crewai_classes() -> Any:
    """Import CrewAI (slow) once, and define the flow class against it."""
    from crewai.events.event_listener import event_listener
    from crewai.flow import Flow, HumanFeedbackPending, human_feedback, listen, or_, router, start
    from crewai.flow.flow import FlowState
    from crewai.tools import BaseTool
    from pydantic import Field, PrivateAttr

    # CrewAI's console formatter prints agent, tool and flow panels to stdout whatever `verbose`
    # says; stdout belongs to the harness (JSON output, worker protocol). Console only.
    event_listener.formatter.console.quiet = True

    class ArenaProvider:
        """A `HumanFeedbackProvider`: pause when the step stopped on the approval tool."""

        def request_feedback(self, context: Any, flow: Any) -> str:
            output = context.method_output
            if isinstance(output, dict) and output.get("status") == "approval":
                raise HumanFeedbackPending(context=context, callback_info={"call": output["call"]})
            return ""  # the agent finished without asking: nothing to decide, no pause

    class ApprovalState(FlowState):
        conversation: list[dict[str, Any]] = Field(default_factory=list)  # the request, then the agent's turns
        pending: dict[str, Any] | None = None  # the approval call the flow is paused on
        final: str | None = None

    class ArenaApprovalFlow(Flow[ApprovalState]):
        _runtime: Any = PrivateAttr(default=None)
        # A Flow otherwise builds a LanceDB-backed `Memory` (a database directory and a thread pool)
        # that this flow never uses; CrewAI's own internal flows opt out with the same flag.
        _skip_auto_memory: bool = True

        @start()
        def begin(self) -> str:
            self.state.conversation = [{"role": "user", "content": self._runtime.ctx.item.input}]
            return "begun"

        @listen(or_(begin, "continue_agent"))
        @human_feedback(message="Approve this tool call?", provider=ArenaProvider())
        async def agent_step(self) -> dict[str, Any]:
            return await self._runtime.agent_step(self.state)

        @router(agent_step)
        def apply_decision(self, result: Any) -> str:
            return apply_feedback(self.state, result)

    class HarnessTool(BaseTool):
        """A tool spec's stand-in: what it does is set per instance (`_call`), so the class is defined once, not a
        pydantic model class for every tool of every leg."""

        _call: Any = PrivateAttr(default=None)

        def _run(self, **kwargs: Any) -> str:
            return self._call(kwargs)

    return {"Flow": ArenaApprovalFlow, "Pending": HumanFeedbackPending, "Tool": HarnessTool}


def llm_for(ctx: LegContext) -> Any:
    """CrewAI's native OpenAI chat-completions client, pointed at the harness's model."""
    from crewai import LLM

    # max_retries=0: CrewAI's OpenAI provider retries twice by default; no adapter's client retries
    # a streamed leg streams the model's answers too (the flow stream's "llm" frames); a plain one as before
    streaming: dict[str, Any] = {"stream": True} if ctx.stream else {}
    llm = LLM(model="openai/" + ctx.model.name, base_url=ctx.model.base_url, api_key=ctx.model.api_key,
              max_retries=0, **streaming)
    return llm
