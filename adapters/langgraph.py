"""LangGraph: `interrupt()` inside the approval tool, a SQLite checkpointer, `Command(resume=...)`.

The agent is LangChain's current constructor, `langchain.agents.create_agent`, over
`langchain_openai.ChatOpenAI` pointed at the harness's OpenAI-compatible endpoint. The harness's
tools become LangChain `StructuredTool`s (JSON-schema `args_schema`) around one `ctx.tools.acall`.
The approval tool never reaches the harness: its body calls `langgraph.types.interrupt(...)`, which
stops the graph; the run's state lives in an `AsyncSqliteSaver` database under `ctx.workdir`, keyed
by a thread id. A leg opens the database, runs, and closes it again, so the state a leg hands back
is only how to reopen it (`db` path and `thread_id`): every resume reloads the run from the file,
exactly as a new process would. The decision goes in as the resume value and comes out of
`interrupt()` in the re-executed approval tool, which returns `decision.as_text()` to the model as
request_approval's tool result.

What LangGraph does with sibling tool calls is not steered here: `create_agent` sends each tool call
of a turn to the `tools` node as its own task (`Send`), and whatever those tasks do before or after
the interrupt shows in the harness's tool log.
"""

from __future__ import annotations

import os
import uuid
from typing import Any

from arena.types import (
    AdapterInfo,
    Capabilities,
    Decision,
    LegContext,
    LegResult,
    PendingRequest,
    ToolKind,
    ToolSpec,
)

DB_NAME = "langgraph-checkpoints.sqlite"
RECURSION_LIMIT = 50


class LangGraphAdapter:
    info = AdapterInfo(
        name="langgraph",
        framework="langgraph",
        pause_mechanism=(
            "langgraph.types.interrupt() in the approval tool of langchain.agents.create_agent; "
            "AsyncSqliteSaver checkpoint; resumed with Command(resume=decision)"
        ),
        pause_kind="native",
        capabilities=Capabilities(
            deny_reason=True,
            approve_note=True,
            free_text=True,
            notes="the resume value is arbitrary data; the approval tool returns decision.as_text() as its result",
        ),
    )

    def __init__(self) -> None:
        self._http: Any = None

    async def aclose(self) -> None:
        if self._http is not None:
            await self._http.aclose()

    def _http_client(self) -> Any:
        """This item's own async HTTP client for ChatOpenAI.

        Without one, langchain-openai shares a process-wide cached `httpx.AsyncClient` between all
        ChatOpenAI instances; it is bound to the first event loop that used it, and the runner gives
        every item a fresh loop, so the second item fails with "Event loop is closed".
        """
        if self._http is None:
            import httpx

            self._http = httpx.AsyncClient()
        return self._http

    async def start(self, ctx: LegContext) -> LegResult:
        state = {"db": os.path.join(ctx.workdir, DB_NAME), "thread_id": f"arena-{ctx.item.id}-{uuid.uuid4().hex}"}
        graph_input = {"messages": [{"role": "user", "content": ctx.item.input}]}
        return await _leg(ctx, state, graph_input, self._http_client())

    async def resume(self, state: dict[str, str], decision: Decision, ctx: LegContext) -> LegResult:
        from langgraph.types import Command

        return await _leg(ctx, state, Command(resume=decision.model_dump(mode="json")), self._http_client())


async def _leg(ctx: LegContext, state: dict[str, str], graph_input: Any, http: Any) -> LegResult:
    """One leg: reopen the checkpoint database, run the graph until it ends or interrupts, close it."""
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
    from langsmith import tracing_context

    config = {"configurable": {"thread_id": state["thread_id"]}, "recursion_limit": RECURSION_LIMIT}
    async with AsyncSqliteSaver.from_conn_string(state["db"]) as saver:
        agent = _build_agent(ctx, saver, http)
        with tracing_context(enabled=False):  # no LangSmith tracing, whatever the environment says
            output = await agent.ainvoke(graph_input, config, version="v2")
    if output.interrupts:
        value = output.interrupts[0].value
        pending = PendingRequest(tool=value["tool"], args=value["args"], call_id=value.get("call_id"))
        return LegResult.suspended(pending, state)
    messages = output.value["messages"]
    return LegResult.finished(_text(messages[-1].content) if messages else "")


def _build_agent(ctx: LegContext, checkpointer: Any, http: Any) -> Any:
    from langchain.agents import create_agent
    from langchain_openai import ChatOpenAI

    model = ChatOpenAI(
        model=ctx.model.name,
        base_url=ctx.model.base_url,
        api_key=ctx.model.api_key,
        max_retries=0,
        http_async_client=http,
    )
    tools = [
        _approval_tool(spec) if spec.kind is ToolKind.approval else _harness_tool(spec, ctx) for spec in ctx.tools.specs
    ]
    return create_agent(model, tools, system_prompt=ctx.instructions, checkpointer=checkpointer)


def _harness_tool(spec: ToolSpec, ctx: LegContext) -> Any:
    """A LangChain tool whose whole body is one harness call (which logs it)."""
    from langchain_core.tools import StructuredTool

    async def run(**kwargs: Any) -> str:
        return await ctx.tools.acall(spec.name, kwargs)

    return StructuredTool(name=spec.name, description=spec.description, args_schema=spec.parameters, coroutine=run)


def _approval_tool(spec: ToolSpec) -> Any:
    """The approval tool: `interrupt()` pauses the graph; on resume it returns the human's decision."""
    from langchain_core.tools import StructuredTool
    from langgraph.prebuilt import ToolRuntime
    from langgraph.types import interrupt

    async def approve(runtime: Any, **kwargs: Any) -> str:
        answer = interrupt({"tool": spec.name, "args": kwargs, "call_id": runtime.tool_call_id})
        return Decision.model_validate(answer).as_text()

    # ToolNode injects `runtime` (it carries this call's id) when the annotation is ToolRuntime.
    approve.__annotations__ = {"runtime": ToolRuntime, "kwargs": Any, "return": str}
    return StructuredTool(name=spec.name, description=spec.description, args_schema=spec.parameters, coroutine=approve)


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") if isinstance(p, dict) else str(p) for p in content)
    return str(content or "")
