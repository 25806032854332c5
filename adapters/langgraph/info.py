"""What the LangGraph adapters declare: their pause channels, each in LangGraph's terms (`INFO`), and the per-call
mode's own mechanisms for the gate (`PER_CALL_INFO`)."""

from __future__ import annotations

from arena.for_adapters import AdapterInfo, Capabilities, Channel
from arena_builtins.arenas.delegation.channel import HANDOFF, NESTED
from arena_builtins.arenas.run_context.channel import RUN_CONTEXT

INFO = AdapterInfo(
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
            name=RUN_CONTEXT,
            kind="native",
            mechanism="the run's runtime context: ainvoke/astream(..., context=...) at the start and with every "
                      "Command(resume=...); langchain's @dynamic_prompt middleware writes the prompt from "
                      "request.runtime.context at each model call",
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
            name=NESTED,
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
            name=HANDOFF,
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

# the approval middleware's other mode (LangGraphPerCallAdapter): one interrupt per gated call
PER_CALL_INFO = INFO.with_mechanisms(
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
