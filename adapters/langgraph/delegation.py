"""Delegation (`agents_of`): every agent a `create_agent` graph named after it; a delegate `via: tool` runs inside a
tool of the desk (nested), a delegate `via: handoff` is a node of a parent `StateGraph(MessagesState)` reached by the
desk's `transfer_to_<agent>` tool. A delegate's interrupt stops the whole top graph: where each interrupt was raised
(its checkpoint namespace, that graph's messages) is read from the checkpointer, and names the agent of a held call."""

from __future__ import annotations

from typing import Any

from arena.for_adapters import LegContext, PendingRequest, ToolKind
from arena_builtins.arenas.delegation.channel import AgentSpec, agents_of, held_call, own_tools

from .outcome import is_call_request, is_gate_request, last_calls, text_of
from .tools import approval_tool, gate, harness_tool

DESK = "travel_desk"  # the run's own agent's node name in the handoff graph


def build_team(ctx: LegContext, model: Any, checkpointer: Any, interrupt_mode: str) -> Any:
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
            model, [harness_tool(s, ctx) for s in own_tools(ctx, a.name)], system_prompt=a.instructions,
            middleware=gate([s.name for s in own_tools(ctx, a.name) if s.requires_approval], interrupt_mode),
            name=a.name,
        )
        for a in agents_of(ctx)
    }
    own = own_tools(ctx, None)
    tools = [
        *(approval_tool(s) if s.kind is ToolKind.approval else harness_tool(s, ctx) for s in own),
        *(_agent_tool(a, delegates[a.name]) if a.via == "tool" else _handoff_tool(a) for a in agents_of(ctx)),
    ]
    gated = [s.name for s in own if s.requires_approval]
    handoffs = [a for a in agents_of(ctx) if a.via == "handoff"]
    if not handoffs:  # the desk is the top graph; its delegates run inside its tools
        return create_agent(model, tools, system_prompt=ctx.instructions, checkpointer=checkpointer,
                            middleware=gate(gated, interrupt_mode), name=DESK)
    from langgraph.graph import START, MessagesState, StateGraph

    desk = create_agent(model, tools, system_prompt=ctx.instructions, middleware=gate(gated, interrupt_mode),
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
        return text_of(result["messages"][-1].content) if result.get("messages") else ""

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


async def held_in(saver: Any, thread_id: str, interrupts: Any) -> dict[str, tuple[str, list[Any]]]:
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


def delegated(interrupts: Any, held: dict[str, tuple[str, list[Any]]],
               ctx: LegContext) -> tuple[list[PendingRequest], dict[str, Any]]:
    """The calls a pause among delegates holds, and what the paused state records to answer each interrupt.

    The agent of a held call: the node of the namespace its interrupt was raised in, when that node is a delegate
    (a handoff's subgraph node); else (a delegate run inside the desk's tool, whose namespace names the desk's
    `tools` node) the `name` create_agent put on the AIMessage that made the call, in that namespace's messages.
    The call id: a per-call interrupt names it; a batched one's action requests are matched to that AIMessage."""
    names = {a.name for a in agents_of(ctx)}
    pending: list[PendingRequest] = []
    pause: dict[str, Any] = {"mode": "delegated", "interrupts": {}}
    for i in interrupts:
        ns, messages = held.get(i.id, ("", []))
        node = ns.split("|")[0].split(":")[0]
        value = i.value
        if is_call_request(value):
            kind, asked = "per_call", [(value["name"], value["args"], value["tool_call_id"])]
        elif is_gate_request(value):
            kind, calls, asked = "batched", last_calls(messages), []
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
            pending.append(held_call(tool, args, call_id, agent))
        pause["interrupts"][i.id] = {"kind": kind, "ns": ns, "calls": [c for _, _, c in asked],
                                     "names": {c: t for t, _, c in asked}}
    return pending, pause
