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

Delegation (`agents_of(ctx)`; the delegation arena only): every agent is a `create_agent` graph named after it
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

from .adapter import LangGraphAdapter, LangGraphPerCallAdapter

__all__ = ["LangGraphAdapter", "LangGraphPerCallAdapter"]
