"""The LangGraph adapters: start, resume and the hooks, each leg one run of the thread (`_leg`) between opening its
checkpointer and closing it."""

from __future__ import annotations

from typing import Any

from arena.for_adapters import (
    Adapter,
    Decision,
    DecisionKind,
    DecisionSet,
    LegContext,
    LegResult,
    async_client,
)
from arena_builtins.arenas.delegation.channel import agents_of

from .client import build_agent
from .context import run_kwargs
from .decision import resume_command
from .delegation import delegated, held_in
from .info import INFO, PER_CALL_INFO
from .input import message_turn, noted, user_turn, with_note
from .outcome import leg_result, values_and_interrupts
from .store import DURABILITY, checkpointer, handle, new_thread
from .stream import run_streamed

RECURSION_LIMIT = 50


class LangGraphAdapter(Adapter):
    order = 20  # where it stands in `arena list` and the reports (lower first)
    requires = ("langchain", "langchain-openai", "langgraph-checkpoint-sqlite")  # installed besides the framework
    interrupt_mode = "batched"  # HumanInTheLoopMiddleware's mode for gated tools
    # what a fork server imports before it forks workers (arena/worker/forkserver.py)
    preload = (
        "httpx",
        "langgraph.checkpoint.sqlite.aio",
        "langsmith",
        "langgraph.types",
        "langchain.agents",
        "langchain.agents.middleware",
        "langchain_openai",
        "langchain_core.tools",
        "langchain_core.tracers.stdout",
        "langchain_core.tracers.run_collector",
        "langgraph.prebuilt",
        # imported at a graph's first run
        "langchain_core.tracers.context",
        "langchain_core.messages.block_translators.langchain_v0",
    )

    info = INFO

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
            self._http = async_client()
        return self._http

    async def start(self, ctx: LegContext) -> LegResult:
        state = new_thread(ctx)
        return await _leg(ctx, state, user_turn(ctx.item.input), self._http_client(), self.interrupt_mode,
                          first=True)

    async def resume(self, state: dict[str, str], decision: Decision | DecisionSet, ctx: LegContext) -> LegResult:
        if isinstance(decision, Decision) and decision.kind is DecisionKind.message:
            # a new message instead of a decision: the thread's next user turn, as any turn of a conversation goes
            # in (a plain input, not a Command); what LangGraph does with the interrupt it leaves is measured
            turn = message_turn(state, decision.text)  # input added first
            return await _leg(ctx, state, turn, self._http_client(), self.interrupt_mode)
        return await _leg(ctx, state, decision, self._http_client(), self.interrupt_mode)

    async def add_input(self, state: dict[str, Any], text: str, ctx: LegContext) -> dict[str, Any]:
        """Input while paused (the `input` channel), deciding nothing: the text is kept with the paused state, and
        the resume sends it with the decision in one `Command(resume=..., update={"messages": [user turn]})`, which
        LangGraph applies to the thread before it re-runs the interrupted task. Not `aupdate_state` now: an update
        on the interrupted thread makes a new checkpoint without the pending interrupt, so a resume keyed by its
        interrupt id (per_call mode) would answer nothing and the call would be asked again."""
        return with_note(state, text)

    async def continue_run(self, state: dict[str, str], ctx: LegContext) -> LegResult:
        """Recovery way `continue`: `ainvoke(None)` runs the thread on from its last checkpoint."""
        return await _leg(ctx, state, None, self._http_client(), self.interrupt_mode)


class LangGraphPerCallAdapter(LangGraphAdapter):
    """The same agent with the approval middleware's other mode: one interrupt per gated call, raised where
    each call would run (langchain documents it as the coming default)."""
    order = 21

    interrupt_mode = "per_call"
    info = PER_CALL_INFO


async def _leg(ctx: LegContext, state: dict[str, Any], graph_input: Any, http: Any,
               interrupt_mode: str = "batched", first: bool = False) -> LegResult:
    """One leg: reopen the checkpointer, run the graph until it ends or interrupts, close it.

    `graph_input` is a user turn (the first leg's input, or a new message sent at a pause), None to run the thread
    on from its last checkpoint (a recovery), or the human's `Decision` for a resume: it is turned into
    the `Command(resume=...)` the pending interrupt, read back from the checkpoint, expects.
    """
    from langsmith import tracing_context

    config = {"configurable": {"thread_id": state["thread_id"]}, "recursion_limit": RECURSION_LIMIT}
    async with checkpointer(ctx, state, first) as saver:
        agent = build_agent(ctx, saver, http, interrupt_mode)
        if isinstance(graph_input, (Decision, DecisionSet)):
            graph_input = resume_command(state.get("pause", {}), graph_input, noted(state))
        with tracing_context(enabled=False):  # no LangSmith tracing, whatever the environment says
            if ctx.stream:  # as a UI runs it: the stream read to its end, then the thread's state as checkpointed
                output = await run_streamed(agent, graph_input, config, ctx)
            else:
                output = await agent.ainvoke(graph_input, config, version="v2", durability=DURABILITY,
                                             **run_kwargs(ctx))
        values, interrupts = values_and_interrupts(output)
        held = await held_in(saver, state["thread_id"], interrupts) if agents_of(ctx) and interrupts else {}
    messages = values["messages"]
    if interrupts and agents_of(ctx):
        pending, pause = delegated(interrupts, held, ctx)
        paused = handle(state, pause)
        return LegResult.suspended(pending if len(pending) > 1 else pending[0], paused)
    return leg_result(state, interrupts, messages)
