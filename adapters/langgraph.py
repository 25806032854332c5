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

Tool-level gate (approval_gate): every tool marked `requires_approval` is listed in
`langchain.agents.middleware.HumanInTheLoopMiddleware(interrupt_on={name: {"allowed_decisions":
["approve", "reject"]}})`, in its default `batched` mode: after a model turn that calls a gated tool,
the middleware's `after_model` node raises one `interrupt(HITLRequest)` before any tool of that turn
runs. The resume value is the middleware's `HITLResponse`, `{"decisions": [{"type": "approve"}]}` or
`{"decisions": [{"type": "reject", "message": decision.as_text()}]}`; on approve the `tools` node
executes the gated tool (one harness call), on reject the middleware puts its own ToolMessage
("User rejected the tool call for `book_room` with reason: DENIED: ...") in its place and the tool
never runs. Which kind of interrupt a resume answers (with its interrupt ids and held calls) is
recorded in the paused state at the pause, so a resume answers the pause it was given for; nothing is
checked against the checkpoint first (resume_safety measures what LangGraph does with a malformed,
repeated or stale resume).

A new message instead of a decision (interruptions) goes in as every user turn of a conversation does: the
same thread invoked with a plain input, `{"messages": [{"role": "user", "content": text}]}`, not a
`Command` (LangGraph's interrupts docs: "pass a plain input dict" to continue a conversation). LangGraph
then starts a new run from START and discards the unfinished (interrupted) task (`PregelLoop._first`,
langgraph/pregel/_loop.py); the checkpointed AIMessage keeps its held call, and nothing here answers it.
What becomes of it, and what a later resume of the old pause does, is measured, not steered.

Input while paused (interruptions, `add_input`) decides nothing: the note is kept with the paused state and goes
in with the decision as the resume Command's `update` (`Command(resume=..., update={"messages": [note]})`), which
LangGraph appends to the thread's messages as it resumes: after the held AIMessage, before the held call's result.
There is no "approve always": the middleware's decisions are each for one call, so the `always` channel is
declared unsupported.

Delegation (`ctx.agents`; the delegation arena only): every agent is a `create_agent` graph named after it
(create_agent puts that `name` on the AIMessages it makes), holding its own tools, its gated tools behind its own
HumanInTheLoopMiddleware (the adapter's mode), and no checkpointer of its own. A delegate `via: tool` (`nested`) is
langchain's "subagents" pattern: a tool of the desk named after the agent whose body runs
`await delegate.ainvoke({"messages": [task]})` and returns its last message; the desk's graph is the top graph and
holds the AsyncSqliteSaver, and the delegate runs as a subgraph of the desk's `tools` task. A delegate `via: handoff`
is a node of a parent `StateGraph(MessagesState)` beside the desk's graph, reached by the desk's
`transfer_to_<agent>` tool returning `Command(goto=<agent>, graph=Command.PARENT, update={"messages": [...]})`
(LangGraph's documented handoff tool); the parent holds the saver. A delegate's interrupt stops the whole top graph.
The paused state is still only the database path and thread id, plus what each interrupt of the pause holds: its
id, its checkpoint namespace and the held call ids (the resume answers each by id: `Command(resume={interrupt id:
answer, ...})`, the middleware's `{"decisions": [...]}` in batched mode, one decision in per_call mode). The
namespace and the delegate's messages are read from the checkpointer (`alist` over the thread: the checkpoint whose
pending writes hold that `__interrupt__`); `Interrupt` itself carries no namespace in langgraph >= 0.6. The agent of a
held call (`PendingRequest.agent`): the node of that namespace when it is a delegate's (handoff:
`booking_agent:<task>`), else (nested: `tools:<task>`, the desk's tool node, which names no agent) the `name` on the
delegate's AIMessage that made the call. On resume LangGraph re-runs the desk's tool (nested) or re-enters the
delegate's node (handoff) from its start, and the delegate's graph goes on from its own checkpoint: whatever that
re-run repeats shows in the trace (inner_rerun_on_resume).

Stores (`--store`): on PostgreSQL every leg's checkpointer is LangGraph's own `AsyncPostgresSaver`
(langgraph-checkpoint-postgres) instead of the AsyncSqliteSaver, on a connection to the item's own database
(`ctx.store.url`) opened by the leg and closed with it; the first leg runs its `setup()` (the checkpoint tables and
their migrations, idempotent) once in that database. The paused state is then only the thread id (and the pause), no
file path. On Redis LangGraph's saver is langgraph-checkpoint-redis, which needs the RedisJSON and RediSearch server
modules: the `redis` channel is unsupported (its mechanism says what was tried), and the harness declines the run.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from arena.http import async_client, client as blocking_client
from arena.tools import body as bodypause
from arena.types import (
    AdapterInfo,
    AgentSpec,
    Capabilities,
    Channel,
    Decision,
    DecisionKind,
    DecisionSet,
    LegContext,
    LegResult,
    PendingRequest,
    ToolKind,
    ToolSpec,
)

DB_NAME = "langgraph-checkpoints.sqlite"
RECURSION_LIMIT = 50



# Each step's checkpoint is written before the next step starts (LangGraph's durable-execution mode): with the default
# "async", a crash right after a model step may find that step unsaved, and what a recovery then does depends on timing.
DURABILITY = "sync"

class LangGraphAdapter:
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

    info = AdapterInfo(
        name="langgraph",
        framework="langgraph",
        channels=(
            Channel(
                name="ask",
                kind="native",
                mechanism=(
                    "langgraph.types.interrupt() in the approval tool of langchain.agents.create_agent; "
                    "AsyncSqliteSaver checkpoint; resumed with Command(resume=decision)"
                ),
                carries=Capabilities(
                    deny_reason=True,
                    approve_note=True,
                    free_text=True,
                    notes="the resume value is arbitrary data; the approval tool returns decision.as_text() as its result",
                ),
            ),
            Channel(
                name="tool_gate",
                kind="native",
                mechanism=(
                    "langchain.agents.middleware.HumanInTheLoopMiddleware(interrupt_on={gated tool: approve|edit|reject}) "
                    "on create_agent (batched: one interrupt in after_model, before the turn's tools run); "
                    "AsyncSqliteSaver checkpoint; resumed with Command(resume={'decisions': [{'type': 'approve'} | "
                    "{'type': 'edit', 'edited_action': ...} | {'type': 'reject', 'message': decision.as_text()}, ...]}), "
                    "one per gated call in the turn's order; an approval carries no note"
                ),
                carries=Capabilities(
                    deny_reason=True, approve_note=False, free_text=False, edit_args=True,
                    notes="the middleware's reject message becomes the held call's tool result; approve has no message; "
                          "edit runs the call with edited_action's arguments",
                ),
            ),
            Channel(
                name="body_pause",
                kind="native",
                mechanism=(
                    "langgraph.types.interrupt() inside the tool's body after its prepare step; resumed with "
                    "Command(resume=decision): LangGraph runs the tool again from its first line"
                ),
            ),
            Channel(
                name="multi_call",
                kind="native",
                mechanism=(
                    "one batched interrupt listing the turn's gated calls (action_requests, no ids: matched to the "
                    "AIMessage's tool calls by position); resumed with Command(resume={'decisions': [approve | "
                    "edit(edited_action) | reject(message), ...]}) in that order"
                ),
            ),
            Channel(
                name="recover",
                kind="native",
                ways=("resume", "continue"),
                mechanism=(
                    "the thread is continued from its AsyncSqliteSaver checkpoint in a new process, with the same "
                    "Command(resume=decision) again, or (way continue) with ainvoke(None, config), which runs the "
                    "thread on from its last checkpoint and the resume value saved there as a pending write "
                    "(LangGraph docs, persistence and interrupts: a resumed node re-runs from its start); every leg "
                    "runs with durability='sync', LangGraph's documented mode for durable execution (each step's "
                    "checkpoint written before the next step starts; the default 'async' may lose the last step "
                    "to a crash)"
                ),
            ),
            Channel(
                name="message",
                kind="native",
                mechanism=(
                    "the paused thread invoked again with a plain input, ainvoke (astream when streamed)"
                    "({'messages': [{'role': 'user', 'content': text}]}, config) on the same thread_id, as a "
                    "multi-turn conversation continues; not a Command(resume=...): LangGraph starts a new run from "
                    "START and discards the interrupted task"
                ),
            ),
            Channel(
                name="always",
                kind="unsupported",
                mechanism=(
                    "HumanInTheLoopMiddleware has no decision that outlives its call: its decisions are approve, "
                    "edit, reject and respond, each for one action request (langchain/agents/middleware/"
                    "human_in_the_loop.py, the Decision union; docs.langchain.com/oss/python/langchain/"
                    "human-in-the-loop, 'Interrupt decision types'), and nothing in langgraph's interrupt()/Command "
                    "keeps one; InterruptOnConfig.when is a predicate fixed when the agent is built (and can only "
                    "skip the interrupt, i.e. approve), not a human's approve/reject always"
                ),
            ),
            Channel(
                name="input",
                kind="native",
                mechanism=(
                    "the note kept with the paused state, then sent with the decision in one Command(resume=..., "
                    "update={'messages': [{'role': 'user', 'content': note}]}) (langgraph.types.Command: 'update: "
                    "update to apply to the graph's state'): LangGraph appends it to the thread's messages as it "
                    "resumes, after the held AIMessage and before the held call's result; not aupdate_state, which "
                    "checkpoints the thread anew without its pending interrupt"
                ),
            ),
            Channel(
                name="stream",
                kind="native",
                mechanism=(
                    "graph.astream(input, config, stream_mode=['updates', 'messages']) read to its end (the model's "
                    "tokens, each node's update: AIMessage tool calls, ToolMessages, the '__interrupt__' update); "
                    "the paused state read back with graph.aget_state(config)"
                ),
            ),
            Channel(
                name="nested",
                kind="native",
                mechanism=(
                    "each delegate a langchain.agents.create_agent graph (name=<agent>, its own tools, its gated tools "
                    "behind its own HumanInTheLoopMiddleware, no checkpointer of its own) invoked inside a tool of "
                    "the desk's create_agent (`await delegate.ainvoke({'messages': [task]})`, the langchain "
                    "'subagents' pattern): its interrupt stops the whole graph as a subgraph interrupt; the top "
                    "graph's AsyncSqliteSaver keeps the delegate's checkpoint under the calling task's namespace; "
                    "resumed with Command(resume={interrupt id: the middleware's answer, ...}), which re-runs the "
                    "desk's tool from its start and the delegate's graph from its checkpoint"
                ),
            ),
            Channel(
                name="postgres",
                kind="native",
                mechanism=(
                    "langgraph.checkpoint.postgres.aio.AsyncPostgresSaver (langgraph-checkpoint-postgres) as the "
                    "graph's checkpointer wherever SQLite's AsyncSqliteSaver is otherwise (every leg: the pause, "
                    "resume, recovery, delegates' subgraph checkpoints): AsyncPostgresSaver.from_conn_string(item's "
                    "database URL) opened and closed by each leg, setup() run once on the first leg (checkpoint "
                    "tables and migrations); the paused state keeps only the thread id"
                ),
            ),
            Channel(
                name="redis",
                kind="unsupported",
                mechanism=(
                    "LangGraph's Redis checkpointer, langgraph-checkpoint-redis (tried 0.5.2 with langgraph 1.2.24, "
                    "redisvl 0.28.0, redis-py 8.2.0; and 0.1.2 with langgraph 1.1.10, redis-py 6.4.0), needs the "
                    "RedisJSON and RediSearch server modules; Redis 7.0.15 here (Debian's redis-server) has neither: "
                    "AsyncRedisSaver.from_conn_string(url) + "
                    "asetup() fails with redisvl.exceptions.RedisSearchError: \"Error while fetching checkpoint "
                    "index info: unknown command 'FT.INFO', with args beginning with: 'checkpoint'\" (FT._LIST and "
                    "JSON.GET are unknown commands too)"
                ),
            ),
            Channel(
                name="handoff",
                kind="native",
                mechanism=(
                    "StateGraph(MessagesState) with the desk's create_agent graph and each delegate's as nodes; the "
                    "desk's transfer_to_<agent> tool returns Command(goto=<agent>, graph=Command.PARENT, "
                    "update={'messages': [...desk's messages, its ToolMessage]}) (LangGraph's handoff pattern); the "
                    "delegate's HumanInTheLoopMiddleware interrupt stops the parent graph; AsyncSqliteSaver on the "
                    "parent; resumed with Command(resume={interrupt id: answer}), which re-enters the delegate's "
                    "node and resumes its subgraph from its checkpoint"
                ),
            ),
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
            self._http = async_client()
        return self._http

    async def start(self, ctx: LegContext) -> LegResult:
        state = {"thread_id": f"arena-{ctx.item.id}-{uuid.uuid4().hex}"}
        if ctx.store.kind == "sqlite":  # a server store keeps no file: the thread id is all a leg needs
            state = {"db": os.path.join(ctx.workdir, DB_NAME), **state}
        return await _leg(ctx, state, _user_turn(ctx.item.input), self._http_client(), self.interrupt_mode,
                          first=True)

    async def resume(self, state: dict[str, str], decision: Decision | DecisionSet, ctx: LegContext) -> LegResult:
        if isinstance(decision, Decision) and decision.kind is DecisionKind.message:
            # a new message instead of a decision: the thread's next user turn, as any turn of a conversation goes
            # in (a plain input, not a Command); what LangGraph does with the interrupt it leaves is measured
            turn = {"messages": [*_noted(state), *_user_turn(decision.text)["messages"]]}  # input added first
            return await _leg(ctx, state, turn, self._http_client(), self.interrupt_mode)
        return await _leg(ctx, state, decision, self._http_client(), self.interrupt_mode)

    async def add_input(self, state: dict[str, Any], text: str, ctx: LegContext) -> dict[str, Any]:
        """Input while paused (the `input` channel), deciding nothing: the text is kept with the paused state, and
        the resume sends it with the decision in one `Command(resume=..., update={"messages": [user turn]})`, which
        LangGraph applies to the thread before it re-runs the interrupted task. Not `aupdate_state` now: an update
        on the interrupted thread makes a new checkpoint without the pending interrupt, so a resume keyed by its
        interrupt id (per_call mode) would answer nothing and the call would be asked again."""
        return {**state, "notes": [*state.get("notes", ()), text]}

    async def continue_run(self, state: dict[str, str], ctx: LegContext) -> LegResult:
        """Recovery way `continue`: `ainvoke(None)` runs the thread on from its last checkpoint."""
        return await _leg(ctx, state, None, self._http_client(), self.interrupt_mode)


class LangGraphPerCallAdapter(LangGraphAdapter):
    """The same agent with the approval middleware's other mode: one interrupt per gated call, raised where
    each call would run (langchain documents it as the coming default)."""
    order = 21

    interrupt_mode = "per_call"
    info = LangGraphAdapter.info.with_mechanisms(
        "langgraph_per_call",
        tool_gate=(
            "HumanInTheLoopMiddleware(interrupt_on={gated tool: approve|edit|reject}, interrupt_mode='per_call') "
            "on create_agent: one interrupt per gated call, in the tool node (ungated calls of the turn run "
            "first); AsyncSqliteSaver checkpoint; resumed with Command(resume={interrupt id: decision})"
        ),
        multi_call=(
            "one interrupt per gated call (Interrupt.id, value.tool_call_id); resumed with Command(resume="
            "{interrupt id: approve | edit(edited_action) | reject(message)}), all in one resume"
        ),
    )


def _user_turn(text: str | None) -> dict[str, Any]:
    """A user turn as create_agent's graph takes it: a plain input dict whose message the `messages` reducer appends."""
    return {"messages": [{"role": "user", "content": text or ""}]}


def _noted(state: dict[str, Any]) -> list[dict[str, str]]:
    """The input added while paused (`add_input`), each a user message, in the order it came."""
    return [{"role": "user", "content": text} for text in state.get("notes", ())]


@asynccontextmanager
async def _checkpointer(ctx: LegContext, state: dict[str, Any], first: bool) -> AsyncIterator[Any]:
    """The leg's checkpointer, open for the leg: the item's AsyncSqliteSaver file (`state["db"]`), or with `--store
    postgres` LangGraph's AsyncPostgresSaver on the item's own database (its tables made by `setup()` on the first
    leg). A new connection each leg, as a new process makes it; nothing is cached across legs."""
    if ctx.store.kind == "postgres":
        from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

        async with AsyncPostgresSaver.from_conn_string(ctx.store.url) as saver:
            if first:
                await saver.setup()
            yield saver
        return
    if ctx.store.kind != "sqlite":  # the `redis` channel is unsupported: the harness declines such a run
        raise RuntimeError(f"LangGraph has no {ctx.store.kind} checkpointer here (see the adapter's "
                           f"{ctx.store.kind} channel)")
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

    async with AsyncSqliteSaver.from_conn_string(state["db"]) as saver:
        yield saver


def _handle(state: dict[str, Any], pause: dict[str, Any]) -> dict[str, Any]:
    """The paused state: where the thread is (the SQLite file, when there is one, and the thread id) and its pause."""
    return {**{k: state[k] for k in ("db", "thread_id") if k in state}, "pause": pause}


async def _leg(ctx: LegContext, state: dict[str, str], graph_input: Any, http: Any,
               interrupt_mode: str = "batched", first: bool = False) -> LegResult:
    """One leg: reopen the checkpointer, run the graph until it ends or interrupts, close it.

    `graph_input` is a user turn (the first leg's input, or a new message sent at a pause), None to run the thread
    on from its last checkpoint (a recovery), or the human's `Decision` for a resume: it is turned into
    the `Command(resume=...)` the pending interrupt, read back from the checkpoint, expects.
    """
    from langsmith import tracing_context

    config = {"configurable": {"thread_id": state["thread_id"]}, "recursion_limit": RECURSION_LIMIT}
    async with _checkpointer(ctx, state, first) as saver:
        agent = _build_agent(ctx, saver, http, interrupt_mode)
        if isinstance(graph_input, (Decision, DecisionSet)):
            graph_input = _resume_command(state.get("pause", {}), graph_input, _noted(state))
        with tracing_context(enabled=False):  # no LangSmith tracing, whatever the environment says
            if ctx.stream:  # as a UI runs it: the stream read to its end, then the thread's state as checkpointed
                # with delegates, subgraphs=True: the delegates' own updates (their calls, results, interrupts)
                await _tell(agent.astream(graph_input, config, stream_mode=["updates", "messages"], durability=DURABILITY,
                                          **({"subgraphs": True} if ctx.agents else {})), ctx)
                snapshot = await agent.aget_state(config)
                output = {**snapshot.values, "__interrupt__": snapshot.interrupts}
            else:
                output = await agent.ainvoke(graph_input, config, version="v2", durability=DURABILITY)
        if hasattr(output, "interrupts"):
            values, interrupts = output.value, output.interrupts
        else:  # langgraph before 1.1 (`-a langgraph@1.0.10`): the state dict, its interrupts under "__interrupt__"
            values, interrupts = output, output.get("__interrupt__", ())
        held = await _held_in(saver, state["thread_id"], interrupts) if ctx.agents and interrupts else {}
    messages = values["messages"]
    if interrupts and ctx.agents:
        pending, pause = _delegated(interrupts, held, ctx)
        handle = _handle(state, pause)
        return LegResult.suspended(pending if len(pending) > 1 else pending[0], handle)
    if interrupts:
        handle = _handle(state, _pause_of(interrupts, messages))
        several = _gated_calls(interrupts, messages)
        if len(several) > 1:
            return LegResult.suspended(several, handle)
        return LegResult.suspended(_pending(interrupts[0].value, messages), handle)
    return LegResult.finished(_text(messages[-1].content) if messages else "")


async def _held_in(saver: Any, thread_id: str, interrupts: Any) -> dict[str, tuple[str, list[Any]]]:
    """Where each interrupt of a pause was raised, as the checkpointer kept it: interrupt id -> (the checkpoint
    namespace of the (sub)graph whose task raised it, that graph's checkpointed messages). A delegate's graph has
    checkpoints of its own under the thread, in the namespace of the task that ran it (`<node>:<task id>`, e.g.
    `booking_agent:...` for a handoff node, `tools:...` for the desk's tool that invoked it), and its interrupting
    task's `__interrupt__` write is a pending write of its latest checkpoint there."""
    ids = {i.id for i in interrupts}
    found: dict[str, tuple[str, list[Any]]] = {}
    async for tup in saver.alist({"configurable": {"thread_id": thread_id}}):  # every namespace, newest first
        ns = tup.config["configurable"].get("checkpoint_ns", "")
        if not ns:
            continue
        for _task, channel, value in tup.pending_writes or ():
            if channel != "__interrupt__":
                continue
            for i in value if isinstance(value, (list, tuple)) else [value]:
                if getattr(i, "id", None) in ids and i.id not in found:
                    found[i.id] = (ns, list(tup.checkpoint["channel_values"].get("messages") or []))
    return found


def _delegated(interrupts: Any, held: dict[str, tuple[str, list[Any]]],
               ctx: LegContext) -> tuple[list[PendingRequest], dict[str, Any]]:
    """The calls a pause among delegates holds, and what the paused state records to answer each interrupt.

    The agent of a held call: the node of the namespace its interrupt was raised in, when that node is a delegate
    (a handoff's subgraph node); else (a delegate run inside the desk's tool, whose namespace names the desk's
    `tools` node) the `name` create_agent put on the AIMessage that made the call, in that namespace's messages.
    The call id: a per-call interrupt names it; a batched one's action requests are matched to that AIMessage."""
    names = {a.name for a in ctx.agents}
    pending: list[PendingRequest] = []
    pause: dict[str, Any] = {"mode": "delegated", "interrupts": {}}
    for i in interrupts:
        ns, messages = held.get(i.id, ("", []))
        node = ns.split("|")[0].split(":")[0]
        value = i.value
        if _is_call_request(value):
            kind, asked = "per_call", [(value["name"], value["args"], value["tool_call_id"])]
        elif _is_gate_request(value):
            kind, calls, asked = "batched", _last_calls(messages), []
            for a in value["action_requests"]:
                taken = {c for _, _, c in asked}
                call_id = next((c["id"] for c in calls if c["name"] == a["name"] and c["args"] == a["args"]
                                and c["id"] not in taken), None)
                asked.append((a["name"], a["args"], call_id))
        else:
            kind, asked = "value", [(value.get("tool"), value.get("args") or {}, value.get("call_id"))]
        for tool, args, call_id in asked:
            maker = next((m for m in reversed(messages)
                          if any(c["id"] == call_id for c in getattr(m, "tool_calls", None) or ())), None)
            agent = node if node in names else getattr(maker, "name", None)
            pending.append(PendingRequest(tool=tool, args=args, call_id=call_id, agent=agent))
        pause["interrupts"][i.id] = {"kind": kind, "ns": ns, "calls": [c for _, _, c in asked],
                                     "names": {c: t for t, _, c in asked}}
    return pending, pause


async def _tell(stream: Any, ctx: LegContext) -> None:
    """Read a streamed leg to its end, handing over what its updates tell: each AIMessage's tool calls, each
    ToolMessage (a tool's result), each interrupt of the '__interrupt__' update (the call it waits on). The
    'messages' mode (the model's tokens) is read too, as a UI shows them, and tells nothing of tools."""
    async for part in stream:
        mode, chunk = part[-2:]  # (namespace, mode, chunk) with subgraphs=True
        if mode != "updates" or not isinstance(chunk, dict):
            continue
        for node, update in chunk.items():
            if node == "__interrupt__":
                for interrupt in update or ():
                    for tool, call_id in _waits_on(interrupt.value):
                        ctx.told("pause", tool, call_id)
                continue
            messages = update.get("messages") if isinstance(update, dict) else None
            for message in messages if isinstance(messages, list) else ():
                for call in getattr(message, "tool_calls", None) or ():
                    ctx.told("tool_call", call["name"], call.get("id"))
                if getattr(message, "type", None) == "tool":
                    ctx.told("tool_result", str(message.name), message.tool_call_id, _text(message.content))


def _waits_on(value: Any) -> list[tuple[str, str | None]]:
    """(tool, call id) of each call an interrupt's value says the run waits on."""
    if _is_call_request(value):
        return [(value["name"], value.get("tool_call_id"))]
    if _is_gate_request(value):  # the batched request names no call ids
        return [(a["name"], None) for a in value["action_requests"]]
    if isinstance(value, dict) and "tool" in value:
        return [(value["tool"], value.get("call_id"))]
    return []


def _pause_of(interrupts: Any, messages: list[Any]) -> dict[str, Any]:
    """What the paused state records of its pause, so that a resume answers THIS pause as it was asked:
    which kind of interrupt it is, each interrupt's id, and the held calls' ids (the model's)."""
    values = [i.value for i in interrupts]
    if values and all(_is_call_request(v) for v in values):
        return {"mode": "per_call", "interrupts": {v["tool_call_id"]: i.id for i, v in zip(interrupts, values)},
                "names": {v["tool_call_id"]: v["name"] for v in values}}
    if len(values) == 1 and _is_gate_request(values[0]):
        calls = _gated_calls(interrupts, messages) or [_pending(values[0], messages)]
        return {"mode": "batched", "calls": [c.call_id for c in calls], "names": {c.call_id: c.tool for c in calls}}
    return {"mode": "value"}


def _is_gate_request(value: Any) -> bool:
    """The middleware's batched HITLRequest (tool gate), rather than our approval tool's interrupt."""
    return isinstance(value, dict) and "action_requests" in value


def _is_call_request(value: Any) -> bool:
    """The middleware's per-call ToolApprovalRequest (interrupt_mode="per_call"): one interrupt per gated call."""
    return isinstance(value, dict) and value.get("type") == "tool_approval"


def _last_calls(messages: list[Any]) -> list[dict[str, Any]]:
    return next((m.tool_calls for m in reversed(messages) if getattr(m, "tool_calls", None)), [])


def _gated_calls(interrupts: Any, messages: list[Any]) -> list[PendingRequest]:
    """Every gated call the pause holds, with the id the model gave it.

    Per-call mode: one interrupt per call, each naming its tool_call_id. Batched mode: one interrupt
    whose action requests carry no ids; they are the gated calls of the last AIMessage, in its order.
    """
    values = [i.value for i in interrupts]
    if values and all(_is_call_request(v) for v in values):
        return [PendingRequest(tool=v["name"], args=v["args"], call_id=v["tool_call_id"]) for v in values]
    if len(values) == 1 and _is_gate_request(values[0]):
        asked = [(a["name"], a["args"]) for a in values[0]["action_requests"]]
        gated = [c for c in _last_calls(messages) if (c["name"], c["args"]) in asked]
        if [(c["name"], c["args"]) for c in gated] == asked:
            return [PendingRequest(tool=c["name"], args=c["args"], call_id=c["id"]) for c in gated]
    return []


def _pending(value: dict[str, Any], messages: list[Any]) -> PendingRequest:
    if _is_call_request(value):
        return PendingRequest(tool=value["name"], args=value["args"], call_id=value["tool_call_id"])
    if _is_gate_request(value):
        # HumanInTheLoopMiddleware's HITLRequest: the gated calls of one model turn (the harness is
        # shown the first). An action request carries name and args; the call id is read from the
        # checkpointed AIMessage that made the call.
        action = value["action_requests"][0]
        calls = next((m.tool_calls for m in reversed(messages) if getattr(m, "tool_calls", None)), [])
        call_id = next((c["id"] for c in calls if c["name"] == action["name"] and c["args"] == action["args"]), None)
        return PendingRequest(tool=action["name"], args=action["args"], call_id=call_id)
    return PendingRequest(tool=value["tool"], args=value["args"], call_id=value.get("call_id"))


def _gate_answer(decision: Decision, name: str | None) -> dict[str, Any] | None:
    """One decision as HumanInTheLoopMiddleware reads it; a null decision is None, passed on as it is."""
    if decision.kind is DecisionKind.null:
        return None
    if decision.kind is DecisionKind.edit and decision.args is not None:
        return {"type": "edit", "edited_action": {"name": name, "args": decision.args}}
    if decision.approved:
        return {"type": "approve"}  # the middleware's approve carries no message
    # a deny; an answer is not a decision the gate knows, so it rejects too, with the text
    return {"type": "reject", "message": decision.as_text()}


def _resume_command(pause: dict[str, Any], decision: Decision | DecisionSet,
                    notes: list[dict[str, str]] | None = None) -> Any:
    """The resume for the pause the state recorded (`_resume_value`); input added while paused (`notes`, user
    messages) goes in the same Command as its `update`, which LangGraph applies to the thread as it resumes."""
    from langgraph.types import Command

    if notes:
        return Command(resume=_resume_value(pause, decision), update={"messages": list(notes)})
    return Command(resume=_resume_value(pause, decision))


def _resume_value(pause: dict[str, Any], decision: Decision | DecisionSet) -> Any:
    """The resume value for the pause the state recorded, built from the decisions as given.

    Per-call interrupts are answered by their interrupt ids, which the state kept (a decision naming a
    call the pause did not hold goes under that call id); the batched interrupt by its `decisions` list
    in the held calls' order (a held call without a decision leaves a gap: the list is shorter, and a
    decision for a call not held is appended). Nothing is checked against the checkpoint first: what
    LangGraph does with a malformed, repeated or stale resume is what resume_safety measures.
    """
    mode = pause.get("mode", "value")
    names = pause.get("names", {})
    if mode == "delegated":  # each delegate's interrupt answered by its id (a dict of interrupt ids: a resume map)
        return {iid: answer for iid, held in pause["interrupts"].items()
                if (answer := _delegated_answer(held, decision)) is not None or held["kind"] == "value"}
    if mode == "per_call":
        ids = pause["interrupts"]
        if isinstance(decision, DecisionSet):
            return {ids.get(d.call_id, d.call_id): _gate_answer(d, names.get(d.call_id)) for d in decision.decisions}
        return {i: _gate_answer(decision, names.get(c)) for c, i in ids.items()}
    if mode == "batched":
        if isinstance(decision, DecisionSet):
            ordered = [d for c in pause["calls"] if (d := decision.for_call(c)) is not None]
            ordered += [d for d in decision.decisions if d.call_id not in pause["calls"]]
            return {"decisions": [_gate_answer(d, names.get(d.call_id)) for d in ordered]}
        return {"decisions": [_gate_answer(decision, names.get(c)) for c in pause["calls"]]}
    if isinstance(decision, DecisionSet):  # not a gate: the one decision, as the approval tool reads it
        decision = decision.decisions[0] if decision.decisions else Decision(kind=DecisionKind.null)
    return None if decision.kind is DecisionKind.null else decision.model_dump(mode="json")


def _delegated_answer(held: dict[str, Any], decision: Decision | DecisionSet) -> Any:
    """One delegate's interrupt answered: the decision for each call it holds (a DecisionSet's by call id)."""
    def pick(call_id: str | None) -> Decision | None:
        return decision.for_call(call_id) if isinstance(decision, DecisionSet) else decision

    calls, names = held["calls"], held["names"]
    if held["kind"] == "per_call":
        d = pick(calls[0])
        return None if d is None else _gate_answer(d, names.get(calls[0]))
    if held["kind"] == "batched":
        decided = [(c, d) for c in calls if (d := pick(c)) is not None]
        return {"decisions": [_gate_answer(d, names.get(c)) for c, d in decided]} if decided else None
    d = pick(calls[0])
    return None if d is None or d.kind is DecisionKind.null else d.model_dump(mode="json")


def _build_agent(ctx: LegContext, checkpointer: Any, http: Any, interrupt_mode: str = "batched") -> Any:
    from langchain.agents import create_agent
    from langchain_openai import ChatOpenAI

    model = ChatOpenAI(
        model=ctx.model.name,
        base_url=ctx.model.base_url,
        api_key=ctx.model.api_key,
        max_retries=0,
        http_async_client=http,
        # never used (every call is async), but without it ChatOpenAI builds a blocking client that loads the CA
        # certificates again for every leg (its cache is keyed by the base URL, which is the item's own)
        http_client=blocking_client(),
    )
    if ctx.agents:
        return _build_team(ctx, model, checkpointer, interrupt_mode)
    tools = [
        _approval_tool(spec) if spec.kind is ToolKind.approval
        else _body_tool(spec, ctx) if spec.body_pause else _harness_tool(spec, ctx)
        for spec in ctx.tools.specs
    ]
    middleware = _gate(ctx.gated_tools, interrupt_mode)
    return create_agent(
        model, tools, system_prompt=ctx.instructions, checkpointer=checkpointer, middleware=middleware
    )


def _gate(gated: list[str], interrupt_mode: str) -> list[Any]:
    """HumanInTheLoopMiddleware over the gated tools an agent holds (none: no middleware)."""
    if not gated:
        return []
    from langchain.agents.middleware import HumanInTheLoopMiddleware

    gate = {name: {"allowed_decisions": ["approve", "edit", "reject"]} for name in gated}
    # batched is the middleware's default, and its only mode before langchain had `interrupt_mode`
    # (`-a langgraph@1.1.10` resolves such a langchain): pass the mode only when it is another
    mode = {} if interrupt_mode == "batched" else {"interrupt_mode": interrupt_mode}
    return [HumanInTheLoopMiddleware(interrupt_on=gate, **mode)]


DESK = "travel_desk"  # the run's own agent's node name in the handoff graph


def _build_team(ctx: LegContext, model: Any, checkpointer: Any, interrupt_mode: str) -> Any:
    """The run's agent and its delegates (delegation), each a `create_agent` graph named after its agent (its
    AIMessages carry that name) holding its own tools, and its gated tools behind its own HumanInTheLoopMiddleware.

    A delegate `via: tool` is the langchain "subagents" pattern: a tool named after it whose body invokes the
    delegate's compiled graph on the task (`await graph.ainvoke({"messages": [task]})`) and returns its last message;
    compiled without a checkpointer, the graph runs as a subgraph of the calling task and inherits the top graph's.
    A delegate `via: handoff` is a node of a parent `StateGraph(MessagesState)` (the desk's graph is another), and
    the desk reaches it with a `transfer_to_<name>` tool returning `Command(goto=<name>, graph=Command.PARENT,
    update={"messages": [...the desk's messages, the tool's ToolMessage]})` (LangGraph's handoff pattern, docs
    "multi-agent", "Handoffs"). The checkpointer is the top graph's only."""
    from langchain.agents import create_agent

    delegates = {
        a.name: create_agent(
            model, [_harness_tool(s, ctx) for s in ctx.own_tools(a.name)], system_prompt=a.instructions,
            middleware=_gate([s.name for s in ctx.own_tools(a.name) if s.requires_approval], interrupt_mode),
            name=a.name,
        )
        for a in ctx.agents
    }
    own = ctx.own_tools(None)
    tools = [
        *(_approval_tool(s) if s.kind is ToolKind.approval else _harness_tool(s, ctx) for s in own),
        *(_agent_tool(a, delegates[a.name]) if a.via == "tool" else _handoff_tool(a) for a in ctx.agents),
    ]
    gated = [s.name for s in own if s.requires_approval]
    handoffs = [a for a in ctx.agents if a.via == "handoff"]
    if not handoffs:  # the desk is the top graph; its delegates run inside its tools
        return create_agent(model, tools, system_prompt=ctx.instructions, checkpointer=checkpointer,
                            middleware=_gate(gated, interrupt_mode), name=DESK)
    from langgraph.graph import START, MessagesState, StateGraph

    desk = create_agent(model, tools, system_prompt=ctx.instructions, middleware=_gate(gated, interrupt_mode),
                        name=DESK)
    builder = StateGraph(MessagesState)
    builder.add_node(DESK, desk, destinations=tuple(a.name for a in handoffs))
    for a in handoffs:
        builder.add_node(a.name, delegates[a.name])
    builder.add_edge(START, DESK)
    return builder.compile(checkpointer=checkpointer)


def _agent_tool(agent: AgentSpec, graph: Any) -> Any:
    """A delegate called as a tool: its graph invoked inside the tool on the task, its last message the result. An
    interrupt inside it (its gate) stops the whole run; on resume LangGraph runs this tool again from its first
    line, and the delegate's graph goes on from its own checkpoint under the calling task's namespace."""
    from langchain_core.tools import StructuredTool

    async def run(input: str) -> str:
        result = await graph.ainvoke({"messages": [{"role": "user", "content": input}]})
        return _text(result["messages"][-1].content) if result.get("messages") else ""

    params = {"type": "object", "properties": {"input": {"type": "string", "description": "the task"}},
              "required": ["input"]}
    return StructuredTool(name=agent.name, description=agent.description, args_schema=params, coroutine=run)


def _handoff_tool(agent: AgentSpec) -> Any:
    """transfer_to_<name>: LangGraph's handoff tool, a `Command` to the parent graph that goes to the agent's node
    with the desk's messages and this call's ToolMessage."""
    from langchain_core.messages import ToolMessage
    from langchain_core.tools import StructuredTool
    from langgraph.prebuilt import ToolRuntime
    from langgraph.types import Command

    name = f"transfer_to_{agent.name}"

    async def run(runtime: Any) -> Any:
        done = ToolMessage(content=f"Successfully transferred to {agent.name}", name=name,
                           tool_call_id=runtime.tool_call_id)
        return Command(goto=agent.name, graph=Command.PARENT,
                       update={"messages": [*runtime.state["messages"], done]})

    run.__annotations__ = {"runtime": ToolRuntime, "return": Any}
    return StructuredTool(name=name, description=f"Hand the conversation to {agent.name}: {agent.description}",
                          args_schema={"type": "object", "properties": {}}, coroutine=run)


def _harness_tool(spec: ToolSpec, ctx: LegContext) -> Any:
    """A LangChain tool whose whole body is one harness call (which logs it), under LangGraph's id for the call."""
    from langchain_core.tools import StructuredTool
    from langgraph.prebuilt import ToolRuntime

    async def run(runtime: Any, **kwargs: Any) -> str:
        return await ctx.tools.acall(spec.name, kwargs, call_id=runtime.tool_call_id)

    # ToolNode injects `runtime` (ToolRuntime: this call's id) by the annotation; the model's schema is args_schema.
    run.__annotations__ = {"runtime": ToolRuntime, "kwargs": Any, "return": str}
    return StructuredTool(name=spec.name, description=spec.description, args_schema=spec.parameters, coroutine=run)


def _body_tool(spec: ToolSpec, ctx: LegContext) -> Any:
    """A tool whose body pauses: prepare, `interrupt()` with what it will charge, then commit or abort.

    On resume LangGraph runs the tool again from its first line; `interrupt()` then returns the resume
    value at once. Whatever ran before it (the prepare step) runs again: the tool log shows it.
    """
    from langchain_core.tools import StructuredTool
    from langgraph.prebuilt import ToolRuntime
    from langgraph.types import interrupt

    async def body(runtime: Any, **kwargs: Any) -> str:
        call_id = runtime.tool_call_id  # LangGraph's id for this call (the model's), as ToolNode hands it over
        prepared = await bodypause.prepare(ctx.tools, spec, kwargs, call_id=call_id)
        if not bodypause.ready(prepared):
            return bodypause.refused(prepared)
        shown = bodypause.pending(spec, kwargs, prepared, call_id)
        answer = interrupt({"tool": shown.tool, "args": shown.args, "call_id": shown.call_id})
        return await bodypause.finish(ctx.tools, spec, prepared, Decision.model_validate(answer), call_id=call_id)

    body.__annotations__ = {"runtime": ToolRuntime, "kwargs": Any, "return": str}
    return StructuredTool(name=spec.name, description=spec.description, args_schema=spec.parameters, coroutine=body)


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
