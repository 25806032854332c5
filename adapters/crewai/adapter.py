"""The CrewAI adapter class: its declaration and the legs, each a short dispatch to the package's concern modules."""

from __future__ import annotations

from typing import Any

from arena.for_adapters import Adapter, Decision, LegContext, LegResult

from .agent import Runtime
from .client import crewai_classes, crewai_environment
from .info import INFO
from .outcome import leg_result
from .store import DB_NAME, persistence
from .stream import resume_stream, streamed


class CrewAIAdapter(Adapter):
    order = 70  # where it stands in `arena list` and the reports (lower first)
    environment = "isolated"  # crewai needs openai<3: it runs in a worker in an environment of its own
    # what a fork server imports before it forks workers (arena/worker/forkserver.py)
    preload = (
        "crewai",
        "crewai.flow",
        "crewai.flow.persistence",
        "crewai.tools",
        "crewai.events.event_listener",
        "crewai.utilities.pydantic_schema_utils",
        # what a worker imported at its first leg (recorded in forked workers): CrewAI's hooks, LLM cache and skill
        # tool modules, and rich's emoji and Unicode width tables its console formatter loads
        "crewai.hooks.contexts",
        "crewai.llms.cache",
        "crewai.skills.tool",
        "rich._emoji_codes",
        "rich._unicode_data.unicode17-0-0",
    )
    # the openai SDK's models of an answer's tool call, built at a worker's first answer (the SDK defers them),
    # recorded in forked workers: built once in the fork server instead (arena/worker/forkserver.py, complete_models)
    complete = (
        "openai.types.chat.chat_completion_message_function_tool_call.ChatCompletionMessageFunctionToolCall",
        "openai.types.chat.chat_completion_message_function_tool_call.Function",
    )

    @staticmethod
    def warm() -> None:
        """Define the flow classes (`crewai_classes`) in the fork server: every worker forked per item defined them
        again."""
        crewai_classes()

    info = INFO

    async def start(self, ctx: LegContext) -> LegResult:
        with crewai_environment(ctx.workdir):
            crew = crewai_classes()
            flow = crew["Flow"](persistence=persistence(ctx, DB_NAME))
            flow._runtime = Runtime(ctx)
            result = await (streamed(flow.astream(), ctx) if ctx.stream else flow.kickoff_async())
            return leg_result(flow, result, DB_NAME)

    # narrower than Adapter.resume (mypy: override): the body reads one Decision (`as_text`), never a DecisionSet
    async def resume(  # type: ignore[override]
            self, state: dict[str, Any], decision: Decision, ctx: LegContext) -> LegResult:
        with crewai_environment(ctx.workdir):
            crew = crewai_classes()
            flow = crew["Flow"].from_pending(state["flow_id"], persistence(ctx, state["db"]))
            flow._runtime = Runtime(ctx)
            feedback = decision.as_text()
            if ctx.stream:
                result = await streamed(resume_stream(lambda: flow.resume_async(feedback)), ctx)
            else:
                result = await flow.resume_async(feedback)
            return leg_result(flow, result, state["db"])
