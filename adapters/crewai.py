"""CrewAI: a Flow whose agent step carries `@human_feedback`, paused by `HumanFeedbackPending`.

CrewAI has one pause that really stops a run and resumes it later, from another process if need
be: a Flow method decorated with `@human_feedback(provider=...)` whose provider raises
`HumanFeedbackPending`. The Flow then stops, `kickoff_async()` returns the pending object, and
CrewAI itself saves the flow state and the pending context in its `SQLiteFlowPersistence`
database; `Flow.from_pending(flow_id, persistence)` rebuilds the flow and `resume_async(feedback)`
continues it, handing the feedback to the next listener as `HumanFeedbackResult.feedback`.
(`before_tool_call` hooks can only block a call or read stdin; `Task(human_input=True)` and
`Flow.ask()` block on a provider: none of them stops the run.)

The agent is a `crewai.Agent` over `crewai.LLM("openai/<model>", base_url=...)`, CrewAI's native
OpenAI chat-completions client pointed at the harness (`ctx.instructions` is its backstory, so it
is in CrewAI's system prompt). Its tools are `crewai.tools.BaseTool`s (JSON-schema `args_schema`)
around one `ctx.tools.call`. The approval tool never reaches the harness: it is a
`result_as_answer=True` tool, CrewAI's own way for a tool to end the agent's run, whose body only
returns a placeholder. CrewAI runs a turn's tool calls one by one and stops at it, so a sibling
after it in the same turn is never executed. The flow step returns the pending call, the feedback
provider raises `HumanFeedbackPending`, and the flow pauses. The conversation (the request and the
agent's turns after CrewAI's prompt, minus the placeholder result) lives in the flow state, which
CrewAI persists; the leg's state is only `{"db": <file in ctx.workdir>, "flow_id": ...}`, JSON.

On resume the decision is the flow's feedback: the next flow step appends it as the approval
call's tool result (`decision.as_text()`), answers any sibling CrewAI did not run with a NOT
EXECUTED result (a chat-completions transcript must answer every call), and kicks the agent off
again with the conversation (`Agent.kickoff_async(messages=[...])` keeps the trailing assistant and
tool turns after the request). If the agent asks again, the step pauses again.

Streamed legs (`--stream`): the flow runs through CrewAI's frame stream, read to its end. The first
leg is `Flow.astream()` (what `kickoff_async()` returns on a `stream=True` flow); CrewAI has no
streamed resume, so a resumed leg wraps `resume_async(feedback)` in the same parts `astream` is
built from (`create_frame_streaming_state`, `create_async_frame_generator`, `AsyncStreamSession`):
the frames are CrewAI's own events either way. The agent's LLM streams too (`LLM(stream=True)`), as
a UI showing tokens would have it. The pause still arrives as the session's result, the
`HumanFeedbackPending` the plain leg gets. What the frames tell is handed over in `_tell`.

Tool-level approval (a gated consequential tool) is not supported: CrewAI's `before_tool_call`
hooks can block a call or read stdin, not pause, so the gated call would have to be executed by
the adapter after the decision.
"""

from __future__ import annotations

import contextlib
import functools
import os
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

from arena.tools.box import parse_args
from arena.types import (
    AdapterInfo,
    Capabilities,
    Channel,
    Decision,
    LegContext,
    LegResult,
    PendingRequest,
    ToolKind,
    ToolSpec,
)

DB_NAME = "crewai-flows.sqlite"
MAX_ITER = 20
AWAITING = "AWAITING HUMAN APPROVAL: the run pauses here until a person decides."
NOT_EXECUTED = "NOT EXECUTED: the run paused for approval before this call ran"

# CrewAI's switches for telemetry (OpenTelemetry spans to CrewAI), trace upload and the PyPI
# version check. The harness is offline: these are forced, not defaulted.
OFFLINE_ENV = {
    "CREWAI_DISABLE_TELEMETRY": "true",
    "OTEL_SDK_DISABLED": "true",
    "CREWAI_TRACING_ENABLED": "false",
    "CREWAI_DISABLE_VERSION_CHECK": "true",
}


@contextlib.contextmanager
def _crewai_environment(workdir: str) -> Iterator[None]:
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
def _crewai() -> Any:
    """Import CrewAI (slow) once, and define the flow class against it."""
    from crewai.events.event_listener import event_listener
    from crewai.flow import Flow, HumanFeedbackPending, HumanFeedbackResult, human_feedback, listen, or_, router, start
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
            pending = self.state.pending
            if pending is None:
                return "done"
            if not isinstance(result, HumanFeedbackResult):
                raise TypeError(f"expected the step's HumanFeedbackResult, got {type(result).__name__}")
            feedback = result.feedback
            self.state.conversation.append(
                {"role": "tool", "tool_call_id": pending["id"], "name": pending["name"], "content": feedback}
            )
            for sibling in pending["siblings"]:
                self.state.conversation.append(
                    {"role": "tool", "tool_call_id": sibling["id"], "name": sibling["name"], "content": NOT_EXECUTED}
                )
            self.state.pending = None
            return "continue_agent"

    class HarnessTool(BaseTool):
        """A tool spec's stand-in: what it does is set per instance (`_call`), so the class is defined once, not a
        pydantic model class for every tool of every leg."""

        _call: Any = PrivateAttr(default=None)

        def _run(self, **kwargs: Any) -> str:
            return self._call(kwargs)

    return {"Flow": ArenaApprovalFlow, "Pending": HumanFeedbackPending, "Tool": HarnessTool}


def _schema_model(spec: ToolSpec) -> Any:
    from crewai.utilities.pydantic_schema_utils import create_model_from_schema

    return create_model_from_schema({"title": f"{spec.name}_args", **spec.parameters})


def _build_tool(spec: ToolSpec, ctx: LegContext) -> Any:
    approval = spec.kind is ToolKind.approval

    def call(kwargs: dict[str, Any]) -> str:
        if approval:  # intercepted: never executed by the harness; its call ends the agent's turn
            return AWAITING
        # No call_id: CrewAI runs a native tool call as `tool.run(**args)` (agent_executor.py
        # _execute_single_native_tool_call), and neither the tool nor its hooks' ToolCallHookContext get the id.
        return ctx.tools.call(spec.name, kwargs)

    tool = _crewai()["Tool"](
        name=spec.name, description=spec.description, args_schema=_schema_model(spec), result_as_answer=approval
    )
    tool._call = call
    return tool


class _Runtime:
    """What a flow needs in this process and never persists: the context and the agent factory."""

    def __init__(self, ctx: LegContext) -> None:
        self.ctx = ctx

    def agent(self) -> Any:
        from crewai import LLM, Agent

        ctx = self.ctx
        # max_retries=0: CrewAI's OpenAI provider retries twice by default; no adapter's client retries
        # a streamed leg streams the model's answers too (the flow stream's "llm" frames); a plain one as before
        streaming: dict[str, Any] = {"stream": True} if ctx.stream else {}
        llm = LLM(model="openai/" + ctx.model.name, base_url=ctx.model.base_url, api_key=ctx.model.api_key,
                  max_retries=0, **streaming)
        return Agent(
            role="Assistant",
            goal="Complete the user's request with the tools provided, following your instructions.",
            backstory=ctx.instructions,
            llm=llm,
            tools=[_build_tool(spec, ctx) for spec in ctx.tools.specs],
            allow_delegation=False,
            cache=False,  # a cached tool result would skip the harness's tool log
            max_iter=MAX_ITER,
            verbose=False,
        )

    async def agent_step(self, state: Any) -> dict[str, Any]:
        """Run the agent over the conversation until it finishes or calls the approval tool."""
        # no approval tool (approval_gate): CrewAI has no tool-level gate, so nothing pauses
        approval = next((s.name for s in self.ctx.tools.specs if s.kind is ToolKind.approval), None)
        output = await self.agent().kickoff_async(list(state.conversation))
        messages = [dict(m) for m in output.messages]
        # CrewAI rebuilds its system prompt and wraps the request on every kickoff: keep the turns
        # after the wrapped request, behind the plain request.
        first_user = next(i for i, m in enumerate(messages) if m.get("role") == "user")
        turns = messages[first_user + 1 :]
        last = turns[-1] if turns else {}
        if last.get("role") == "tool" and last.get("name") == approval:
            turns.pop()  # the placeholder result; the human's decision takes its place on resume
            call_msg = next(m for m in reversed(turns) if m.get("role") == "assistant" and m.get("tool_calls"))
            answered = {m.get("tool_call_id") for m in turns if m.get("role") == "tool"}
            calls = call_msg["tool_calls"]
            call = next(c for c in calls if c["id"] == last["tool_call_id"])
            siblings = [
                {"id": c["id"], "name": c["function"]["name"]}
                for c in calls
                if c is not call and c["id"] not in answered
            ]
            state.conversation = [state.conversation[0], *turns]
            state.pending = {"id": call["id"], "name": approval, "siblings": siblings}
            return {
                "status": "approval",
                "call": {"id": call["id"], "name": approval, "args": parse_args(call["function"]["arguments"])},
            }
        state.conversation = [state.conversation[0], *turns]
        state.final = output.raw
        return {"status": "finished", "text": output.raw}


class CrewAIAdapter:
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
        """Define the flow classes (`_crewai`) in the fork server: every worker forked per item defined them again."""
        _crewai()

    info = AdapterInfo(
        name="crewai",
        framework="crewai",
        channels=(
            Channel(
                name="ask",
                kind="native",
                mechanism=(
                    "Flow step with @human_feedback(provider=...) raising HumanFeedbackPending after the agent's "
                    "result_as_answer approval tool ends its turn; SQLiteFlowPersistence; "
                    "Flow.from_pending(flow_id).resume_async(feedback)"
                ),
                carries=Capabilities(
                    deny_reason=True,
                    approve_note=True,
                    free_text=True,
                    notes=(
                        "the flow's feedback is free text; the listener hands decision.as_text() to the model as the "
                        "approval call's tool result. CrewAI runs a turn's tool calls in order and stops at the "
                        "result_as_answer approval tool: later siblings never run and are reported to the model as "
                        "not executed"
                    ),
                ),
            ),
            Channel(
                name="recover",
                kind="native",
                mechanism=(
                    "Flow.from_pending(flow_id, SQLiteFlowPersistence) in a new process and resume_async with the "
                    "decision again (crewai docs, human feedback in flows: resume a pending flow from its "
                    "persistence)"
                ),
            ),
            Channel(
                name="stream",
                kind="native",
                mechanism=(
                    "Flow.astream() read to its end (CrewAI's StreamFrames; the agent's LLM(stream=True)); a resume "
                    "is resume_async wrapped in astream's own frame stream (create_async_frame_generator + "
                    "AsyncStreamSession), CrewAI having no streamed resume. Told: llm_call_completed tool-call "
                    "answers (with the calls' ids), tool_usage_finished (no call id in CrewAI's tool events), "
                    "flow_paused (its state's pending approval call); the pause is the session's "
                    "HumanFeedbackPending result"
                ),
            ),
            # `--store postgres|redis`: CrewAI's one flow persistence is SQLite
            Channel(
                name="postgres",
                kind="unsupported",
                mechanism=(
                    "crewai 1.15.30 keeps a paused flow (HumanFeedbackPending) only through FlowPersistence, whose "
                    "one implementation is SQLiteFlowPersistence (any other backend is the user's own FlowPersistence "
                    "subclass, given per flow or by set_flow_persistence_factory): no PostgreSQL flow persistence"
                ),
            ),
            Channel(
                name="redis",
                kind="unsupported",
                mechanism=(
                    "crewai 1.15.30 keeps a paused flow (HumanFeedbackPending) only through FlowPersistence, whose "
                    "one implementation is SQLiteFlowPersistence (any other backend is the user's own FlowPersistence "
                    "subclass, given per flow or by set_flow_persistence_factory): no Redis flow persistence"
                ),
            ),
        ),
    )

    async def start(self, ctx: LegContext) -> LegResult:
        with _crewai_environment(ctx.workdir):
            crew = _crewai()
            flow = crew["Flow"](persistence=_persistence(ctx, DB_NAME))
            flow._runtime = _Runtime(ctx)
            result = await (_streamed(flow.astream(), ctx) if ctx.stream else flow.kickoff_async())
            return _leg(flow, result, DB_NAME)

    async def resume(self, state: dict[str, Any], decision: Decision, ctx: LegContext) -> LegResult:
        with _crewai_environment(ctx.workdir):
            crew = _crewai()
            flow = crew["Flow"].from_pending(state["flow_id"], _persistence(ctx, state["db"]))
            flow._runtime = _Runtime(ctx)
            feedback = decision.as_text()
            if ctx.stream:
                result = await _streamed(_resume_stream(lambda: flow.resume_async(feedback)), ctx)
            else:
                result = await flow.resume_async(feedback)
            return _leg(flow, result, state["db"])


def _resume_stream(resume: Callable[[], Awaitable[Any]]) -> Any:
    """`resume_async` as a frame stream: CrewAI streams `kickoff` (`Flow.astream`) but not `resume`, so this
    is `astream`'s own construction around the resume, the same sink on CrewAI's event bus."""
    from crewai.types.streaming import AsyncStreamSession
    from crewai.utilities.streaming import create_async_frame_generator, create_frame_streaming_state

    holder: list[Any] = []
    sessions: list[Any] = []
    state = create_frame_streaming_state(holder, use_async=True)
    session = AsyncStreamSession(async_iterator=create_async_frame_generator(state, resume, sessions))
    sessions.append(session)
    return session


async def _streamed(session: Any, ctx: LegContext) -> Any:
    """Read the flow's frame stream to its end, handing over what it tells; the flow's result (a pause is
    CrewAI's `HumanFeedbackPending`, as `kickoff_async` returns it)."""
    approval = next((s.name for s in ctx.tools.specs if s.kind is ToolKind.approval), None)
    heads: dict[str, str] = {}  # call id -> tool name, from the model's streamed tool-call deltas
    async for frame in session:
        _tell(ctx, frame, approval, heads)
    return session.result


def _tell(ctx: LegContext, frame: Any, approval: str | None, heads: dict[str, str]) -> None:
    """Hand over what one frame tells: the model's tool calls (once its answer is complete: the tool-call
    `llm_call_completed`, with the calls' ids), a tool's output (`tool_usage_finished`; CrewAI's tool events
    carry no call id), the pause (`flow_paused`, whose flow state names the approval call the step stopped at)."""
    data = frame.data
    if frame.type == "llm_stream_chunk" and data.get("tool_call"):
        call = data["tool_call"]
        if call.get("id") and call["function"].get("name"):
            heads.setdefault(call["id"], call["function"]["name"])
    elif frame.type == "llm_call_completed" and data.get("call_type") == "tool_call":
        # the calls' names come from the deltas: a frame's data is cut at depth 5 (to_serializable), so the
        # completed answer's `function.name` arrives as a repr ("'search_rooms'")
        for call in data.get("response") or []:
            ctx.told("tool_call", heads.get(call["id"], call["function"]["name"]), call["id"])
    elif frame.type == "tool_usage_finished" and data.get("tool_name") != approval:
        # the approval tool's "output" is this adapter's placeholder that ends the turn, not a result
        ctx.told("tool_result", data["tool_name"], None, str(data.get("output")))
    elif frame.type == "flow_paused":
        pending = (data.get("state") or {}).get("pending")
        if pending:
            ctx.told("pause", pending["name"], pending["id"])


def _persistence(ctx: LegContext, db: str) -> Any:
    from crewai.flow.persistence import SQLiteFlowPersistence

    return SQLiteFlowPersistence(os.path.join(ctx.workdir, db))  # an absolute `db` stays as it is


def _leg(flow: Any, result: Any, db: str) -> LegResult:
    """Suspended only when the flow itself returned CrewAI's pending-feedback object."""
    if isinstance(result, _crewai()["Pending"]):
        call = result.context.method_output["call"]
        pending = PendingRequest(tool=call["name"], args=call["args"], call_id=call["id"])
        # JSON only: the database file (relative to ctx.workdir) and the flow id CrewAI keyed it by.
        return LegResult.suspended(pending, {"db": db, "flow_id": result.context.flow_id})
    if flow.state.final is None:
        return LegResult.errored(f"the flow ended without a final answer: {result!r}"[:300])
    return LegResult.finished(flow.state.final)
