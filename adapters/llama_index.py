"""LlamaIndex workflows adapter: a tool waits for a `HumanResponseEvent` (`Context.wait_for_event`), the pause is
the workflow going idle on that wait.

The agent is llama-index's `FunctionAgent` (a `Workflow`) over `llama_index.llms.litellm.LiteLLM("openai/<name>")`
pointed at the harness endpoint (non-streaming Chat Completions). The harness tools become `FunctionTool`s built
from their JSON schemas; each ordinary tool's body is one harness call (`ctx.tools.acall`, with llama-index's
own id for the call, the model's `tool_id`).

The pause (every channel): llama-index has no tool-approval flag; its documented human-in-the-loop form is a tool
that takes the workflow `Context` and awaits `ctx.wait_for_event(HumanResponseEvent, waiter_event=
InputRequiredEvent(...), waiter_id=<call id>, requirements={"call_id": <call id>})`. The approval tool's body is
only that wait (it returns the decision text: that is what the model reads); a gated tool's body waits, then makes
the harness call if approved; a body-pause tool prepares, waits, then commits or aborts. The adapter streams the
run's events (`handler.stream_events(expose_internal=True)`); when the workflow reports `WorkflowIdleEvent` with
`InputRequiredEvent`s seen, every step is blocked on a wait: that is the suspension. The leg saves
`handler.ctx.to_dict()` (llama-index's own JSON serialisation of the run: store, queues, in-progress steps,
waiters) in a new file under the item's work directory (one per pause, so an older state keeps pointing at its own
snapshot) and ends the run with `handler.cancel_run()`. The state is that file's path plus the pending calls
(JSON).

Resume (any process): `Context.from_dict(agent, saved)`, `handler = agent.run(ctx=ctx)`; restoring runs every
step that was waiting again (it waits again), and once the restored run reports `WorkflowIdleEvent` (it is waiting)
the leg sends one `handler.ctx.send_event(HumanResponseEvent(response=decision.as_text(), call_id=...,
decision=...))` per decision, then reads the stream until the run stops or goes idle again. Why after the idle:
events sent at once (right after `run(ctx=ctx)`, as the docs show for one wait) raced the re-run of several waiting
steps (doc_review's dr-01, 7 held calls: some steps ran twice, one never). **llama-index
replays the waiting step in full** when the event arrives (documented: "replays the entire step"): the tool body
above the wait runs once more when the context is restored and once more when the event arrives (a body-pause
tool's prepare shows twice in the resuming leg, and prepares at the price of that moment). Memory trap: the
agent's chat memory (`ctx.store["memory"]`, a `ChatMemoryBuffer`) is skipped by `to_dict()` (UnserializableKeyWarning); the leg saves
its messages beside the context and the resume puts them back with `ctx.store.set("memory", ...)` before the
first event is sent.

A sibling call (a consequential tool in the same model turn as the approval request): FunctionAgent sends every
tool call of the turn as its own `ToolCall` event and runs them at once (`call_tool`, 4 workers); only the calls
whose body waits are held, so a sibling `book_room` executes in the pausing leg, before the workflow goes idle.
Its result is kept in the serialised context (collected for `aggregate_tool_results`), never executed again.

A deny reason: the decision travels as the `HumanResponseEvent` the waiting body receives; the approval tool
returns `decision.as_text()` ("DENIED: reason") as its result, and a gated call denied returns the same text as
its result without running. An approval note reaches the model through the approval tool, not through a gated
call (whose result is the tool's own). An edit is not emulated: a gated call answered with an edit does not run
and returns `decision.as_text()` (the human's arguments, as text) - `edit_args=False`.

Several held calls (multi_call): each gated call of the turn waits under its own `waiter_id`/requirement (its call
id), so one idle pause holds them all; the resume sends exactly one event per decision given, keyed by its
`call_id` (a decision naming a call that is not held is sent too, under that id: nothing waits for it and
llama-index reports it unhandled; a held call without a decision gets no event and keeps waiting, so the run goes
idle again and the leg suspends again on it). A null decision is sent as an event with `decision` kind null,
which the body reads as not approved.

A new message instead of a decision (`message`, interruptions): llama-index documents one way for a human's input
to reach a run that waits on a prompt, the `HumanResponseEvent` the waiting step asked for (its HITL pages: the
caller reads the `InputRequiredEvent`, takes what the human enters - `input()`, a web form, a websocket reply - and
sends `HumanResponseEvent(response=...)`). The resume sends the message that way, as any decision: restore,
`agent.run(ctx=ctx)`, and at the idle one `HumanResponseEvent(response=<the text>, call_id=<the held call>)` (to
the first held call when several wait; the others keep waiting). The gated body reads it as no approval: the call
does not run and its result is the text, which the model reads as the tool's output (not as a user turn). The
multi-turn form, `agent.run(user_msg=..., ctx=ctx)`, does not apply to a paused run: a restored snapshot
`is_running`, so `Workflow.run` sends no start event and `BaseWorkflowAgent.run` discards `user_msg` (the run just
waits again on the same call: the message never reaches the model). The first pause's snapshot keeps no record of
the message: resumed again with an approval (a late approval), its replayed step books.

No "approve always" (`always`, interruptions int-15..17): llama-index has no tool-approval API at all, so nothing
of its own decides later calls of a tool from one decision (no always_approve, session permission or approval
policy in llama-index-core's agent/tools or llama-index-workflows, nor in its HITL docs: a HumanResponseEvent
answers the one wait_for_event that asked for it). Declared unsupported; not emulated.

Input while paused (`input`, int-19..21, emulated): llama-index documents no way to add input to a waiting run
without answering it (the HumanResponseEvent the waiter asked for decides the call; `agent.run(user_msg=..., ctx=ctx)`
drops user_msg on a paused context, see `message`). `add_input` writes a new snapshot whose saved chat memory ends
with the text as a user `ChatMessage`; the resume puts that memory back (`ctx.store.set("memory", ...)`) and the
agent's next LLM call is `memory.aget()` + the scratchpad (FunctionAgent.take_step), so the model reads the note
after the request and before the whole turn in progress (its tool calls and results, held call included).

Streamed run (`stream`): every leg already drives `handler.stream_events()` to the stop or the idle, so a streamed
leg reads the same stream the same way and also hands over what it tells, as a UI reads the agent's events: each
`ToolCall` (written when the call's step starts: a replayed waiting step writes it again, at the restore and when
the decision arrives), each `ToolCallResult` (the tool's output: for a held call, whatever its body returned,
also a denial or an edit answered with its text) and each `InputRequiredEvent` (a body waits on its call, written
once per wait). The suspension and the answer are read as in a plain leg.

A new process: the saved context file is all a resume needs (durable_state); crash_recovery resumes the same saved
context again with the same decision: the replayed step makes its harness call again under the same call id (the
model's, which the harness's airline de-duplicates). Nothing in the snapshot records that it was resumed: the same
state resumed twice (resume_safety) books twice, and an older snapshot resumes after the run has moved on.

Delegation (`ctx.agents`, the delegation arena): the run is an `AgentWorkflow` whose root agent (`arena`, the
desk's instructions and its own tools) is a FunctionAgent, following llama-index's multi-agent docs
(understanding/agent/multi_agent). `handoff` (native): each `via: handoff` delegate is another FunctionAgent of the
same workflow (its instructions, the tools it holds, `can_handoff_to=[]`), and the root has `can_handoff_to=[...]`:
AgentWorkflow offers the root its own handoff tool, named `handoff` with required string arguments `to_agent` and
`reason` (the name is fixed: AgentWorkflow.aggregate_tool_results and FunctionAgent.handle_tool_call_results test
`tool_name == "handoff"`, so it cannot be named `transfer_to_<agent>`). The tool sets `next_agent`; the workflow
makes it `current_agent_name` and the delegate goes on with the shared chat memory. Its gated call waits in the same
workflow, so the pause, the saved `Context.to_dict()` (with `current_agent_name` in its store) and the resume are
the tool_gate channel's, from any process; `PendingRequest.agent` is the store's `current_agent_name` when the
InputRequiredEvent arrives (llama-index's record of whose turn it is). `nested` (unsupported): llama-index's
agent-as-tool is its Orchestrator pattern, a FunctionTool whose body awaits `sub_agent.run(user_msg=...)`; the
adapter builds it that way (a tool named after the agent, one `input` argument) but the sub-agent is a separate
workflow run with its own Context: its gated tool's wait pauses only that inner run, its InputRequiredEvent never
reaches the outer stream, and the outer call_tool step keeps awaiting it, so the run never pauses (del-01 timed
out with book_flight held inside the booking agent). Nothing in llama-index forwards a nested wait or serialises
an inner run, so the channel is declared unsupported and its items are not measured.

Offline: `LITELLM_LOCAL_MODEL_COST_MAP`, `LITELLM_OFFLINE_MODE`, `LITELLM_MODE=PRODUCTION` and `OTEL_SDK_DISABLED`
are set (setdefault) before the first import, LiteLLM's callbacks are emptied; llama-index-core has no telemetry
of its own, and its tokenizer (the chat memory counts tokens) reads cl100k_base from a bundled cache
(`TIKTOKEN_CACHE_DIR`, set by LiteLLM to its own bundled tokenizers). No client retries: `LiteLLM(max_retries=1)`
(tenacity: one attempt) and `num_retries=0` (LiteLLM's openai client's max_retries).
"""

from __future__ import annotations

import contextvars
import json
import os
import threading
import uuid
import warnings
from typing import Any

from arena.for_adapters import (
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
    bodypause,
)
from arena_builtins.adapters._litellm import DEFERRED_MODELS

CONTEXT_PREFIX = "llama_index_context"  # one file per pause: <prefix>-<id>.json
AGENT_NAME = "arena"

OFFLINE_ENV = {
    "LITELLM_LOCAL_MODEL_COST_MAP": "True",  # no fetch of the model-cost map at import
    "LITELLM_OFFLINE_MODE": "true",  # no catalog/tokenizer fetches
    "LITELLM_MODE": "PRODUCTION",  # no .env autoload
    "OTEL_SDK_DISABLED": "true",
}

# llama-index's id of the tool call being run (the model's tool_id), set by the agent's call_tool step
_CALL_ID: contextvars.ContextVar[str | None] = contextvars.ContextVar("arena_llama_index_call_id", default=None)

_LI: dict[str, Any] = {}
_LI_LOCK = threading.Lock()


def _import() -> dict[str, Any]:
    """Import llama-index and LiteLLM once per process, offline, and return what the adapter uses."""
    with _LI_LOCK:
        if not _LI:
            _LI.update(_do_import())
    return _LI


def _do_import() -> dict[str, Any]:
    for key, value in OFFLINE_ENV.items():
        os.environ.setdefault(key, value)
    import litellm  # slow (seconds)

    for name in ("callbacks", "success_callback", "failure_callback", "input_callback", "service_callback"):
        setattr(litellm, name, [])
    litellm._async_success_callback = []
    litellm._async_failure_callback = []
    litellm.telemetry = False

    from llama_index.core.agent.workflow import AgentWorkflow, FunctionAgent
    from llama_index.core.agent.workflow.workflow_events import ToolCall, ToolCallResult
    from llama_index.core.llms import ChatMessage
    from llama_index.core.memory import ChatMemoryBuffer
    from llama_index.core.tools import FunctionTool, ToolMetadata
    from llama_index.core.workflow import Context, HumanResponseEvent, InputRequiredEvent, StopEvent, step
    from llama_index.llms.litellm import LiteLLM
    from pydantic import BaseModel, ConfigDict
    from workflows.events import StepState, StepStateChanged, UnhandledEvent, WorkflowIdleEvent

    class ArenaAgent(FunctionAgent):
        """FunctionAgent whose call_tool step makes llama-index's id of the call (`ToolCall.tool_id`) visible to
        the tool body (a context variable), so the harness logs it and a wait is keyed by it."""

        @step
        async def call_tool(self, ctx: Context, ev: ToolCall) -> ToolCallResult:
            token = _CALL_ID.set(ev.tool_id)
            try:
                return await FunctionAgent.call_tool(self, ctx, ev)
            finally:
                _CALL_ID.reset(token)

    class ArenaWorkflow(AgentWorkflow):
        """AgentWorkflow (several agents, handoffs) whose call_tool step makes llama-index's id of the call
        visible to the tool body, as ArenaAgent's does (in an AgentWorkflow the workflow's own steps run the
        agents' tools, not the agents' steps)."""

        @step
        async def call_tool(self, ctx: Context, ev: ToolCall) -> ToolCallResult:
            token = _CALL_ID.set(ev.tool_id)
            try:
                return await AgentWorkflow.call_tool(self, ctx, ev)
            finally:
                _CALL_ID.reset(token)

    class ArenaLiteLLM(LiteLLM):
        """LiteLLM for the harness endpoint: an OpenAI-compatible server with tool calling, which LiteLLM's model
        map may not know by name ("scripted"); its context window is not 2048 tokens (the fallback)."""

        @property
        def metadata(self) -> Any:
            meta = super().metadata
            return meta.model_copy(update={"is_function_calling_model": True,
                                           "context_window": max(meta.context_window, 128_000)})

    def schema_model(spec: ToolSpec) -> type:
        params = dict(spec.parameters)

        class Schema(BaseModel):
            model_config = ConfigDict(extra="allow")

            @classmethod
            def model_json_schema(cls, *args: Any, **kwargs: Any) -> dict[str, Any]:
                return dict(params)

        Schema.__name__ = Schema.__qualname__ = f"{spec.name}_args"
        return Schema

    return {
        "ArenaAgent": ArenaAgent, "ArenaWorkflow": ArenaWorkflow, "ArenaLiteLLM": ArenaLiteLLM,
        "ChatMemoryBuffer": ChatMemoryBuffer, "ChatMessage": ChatMessage, "Context": Context,
        "FunctionTool": FunctionTool, "ToolMetadata": ToolMetadata,
        "HumanResponseEvent": HumanResponseEvent, "InputRequiredEvent": InputRequiredEvent, "StopEvent": StopEvent,
        "WorkflowIdleEvent": WorkflowIdleEvent, "ToolCall": ToolCall, "ToolCallResult": ToolCallResult,
        "StepStateChanged": StepStateChanged, "StepState": StepState, "UnhandledEvent": UnhandledEvent, "schema_model": schema_model,
    }


def _tell(li: dict[str, Any], event: Any, ctx: LegContext) -> None:
    """Hand over what one event of a streamed leg tells, as a UI reads the agent's stream: a ToolCall (the model's
    call, written as its step starts), a ToolCallResult (the tool's output), an InputRequiredEvent (a tool waits
    for a human on its call)."""
    if isinstance(event, li["ToolCall"]):
        ctx.told("tool_call", event.tool_name, event.tool_id)
    elif isinstance(event, li["ToolCallResult"]):
        ctx.told("tool_result", event.tool_name, event.tool_id, str(event.tool_output.content))
    elif isinstance(event, li["InputRequiredEvent"]):
        ctx.told("pause", str(event.get("tool")), event.get("call_id"))


def _decision_of(event: Any) -> Decision:
    raw = event.get("decision")
    return Decision.model_validate(raw) if raw else Decision(kind=DecisionKind.null)


class LlamaIndexAdapter:
    order = 75  # where it stands in `arena list` and the reports (lower first)
    requires = ("llama-index-llms-litellm", "litellm")
    # LiteLLM keeps a process-wide logging worker bound to one event loop: each item in a forked worker of its own
    concurrent = False
    # what a fork server imports before it forks workers (arena/worker/forkserver.py)
    preload = (
        "litellm",
        "llama_index.core",
        "llama_index.core.agent.workflow",
        "llama_index.core.memory",
        "llama_index.core.tools",
        "llama_index.core.workflow",
        "llama_index.llms.litellm",
        "workflows",
        "workflows.events",
        "workflows.runtime.control_loop.runner",
        "workflows.plugins.basic",
        "workflows.representation.build",
        "workflows.representation.validate",
        "workflows.runtime.verbose",
        "tiktoken",
        # what LiteLLM imports at its first call
        "litellm.proxy._types",
        "litellm.llms.litellm_proxy.chat.transformation",
        "litellm.llms.github_copilot.authenticator",
        "litellm.llms.github_copilot.github_host",
        "litellm.llms.github_copilot.per_user_auth",
        "litellm._service_logger",
        "litellm.llms.openai.chat.gpt_audio_transformation",
        "litellm.llms.openai_like.dynamic_config",
        "litellm.integrations.generic_api.generic_api_callback",
        "litellm.integrations.prometheus_services",
        "litellm.litellm_core_utils.logging_callback_manager",
        "litellm.proxy.openai_files_endpoints.common_utils",
        "litellm.proxy.spend_tracking.savings",
    )
    # the pydantic models LiteLLM builds at a worker's first call (it defers them): built once in the fork server
    complete = DEFERRED_MODELS

    @staticmethod
    def warm() -> None:
        """The tokenizer llama_index's chat memory builds once per process (tiktoken's BPE tables, from LiteLLM's
        bundled copy): in a fork server, so that a worker forked per item does not parse it again."""
        from llama_index.core.utils import get_tokenizer

        get_tokenizer()

    info = AdapterInfo(
        name="llama_index",
        framework="llama-index-core",
        channels=(
            Channel(
                name="ask",
                kind="native",
                mechanism=(
                    "the approval tool's body awaits Context.wait_for_event(HumanResponseEvent, waiter_event="
                    "InputRequiredEvent, waiter_id=call id); on WorkflowIdleEvent the leg saves Context.to_dict() to a "
                    "file and cancel_run(); resume: Context.from_dict, agent.run(ctx=ctx), and once the restored run is idle "
                    "ctx.send_event(HumanResponseEvent(response=decision text)) - the waiting step is replayed"
                ),
                carries=Capabilities(
                    deny_reason=True, approve_note=True, free_text=True,
                    notes=("the decision text is the HumanResponseEvent's response, which the approval tool returns as "
                           "its result. State = llama-index's own Context.to_dict() JSON in the item's work dir, plus "
                           "the chat memory's messages (to_dict skips the memory)."),
                ),
            ),
            Channel(
                name="tool_gate",
                kind="native",
                mechanism=(
                    "llama-index has no tool-approval flag; its documented HITL form, a tool body that awaits "
                    "Context.wait_for_event(HumanResponseEvent) before it acts: the gated tool waits, then makes the "
                    "harness call only if the event approves it (the wait is the framework's own pause and resume)"
                ),
                carries=Capabilities(
                    deny_reason=True, approve_note=False, free_text=False, edit_args=False,
                    notes=("a denied call returns the decision text (\"DENIED: reason\") as its result; an approved "
                           "call's result is the tool's own (no note); an edit is not run with the human's arguments: "
                           "it returns the decision text"),
                ),
            ),
            Channel(
                name="body_pause",
                kind="native",
                mechanism=(
                    "the tool prepares, then awaits Context.wait_for_event(HumanResponseEvent), then commits or aborts; "
                    "llama-index replays the whole step on resume (once at restore, once when the event arrives), so prepare "
                    "runs twice more"
                ),
            ),
            Channel(
                name="multi_call",
                kind="native",
                mechanism=(
                    "each gated call of the turn waits under its own waiter_id / requirements={'call_id': id}; one idle "
                    "pause holds them all; resume sends one HumanResponseEvent per decision, keyed by call_id"
                ),
            ),
            Channel(
                name="recover",
                kind="native",
                mechanism=(
                    "the Context.to_dict() saved at the pause is restored again with Context.from_dict in a new process "
                    "and the same HumanResponseEvent sent (llama-index docs: serialise the Context to resume a run); "
                    "the replayed tool step calls the harness under the same call id"
                ),
            ),
            Channel(
                name="stream",
                kind="native",
                mechanism=(
                    "handler.stream_events(expose_internal=True), the stream the plain leg already drives to the "
                    "stop or the idle, read as a UI reads it: ToolCall, ToolCallResult and InputRequiredEvent (the "
                    "pause, on its call); the suspension is the WorkflowIdleEvent after it, read as in the plain leg"
                ),
            ),
            Channel(
                name="message",
                kind="native",
                mechanism=(
                    "the text sent as the waiting call's HumanResponseEvent(response=text) (llama-index's HITL docs: "
                    "what the human enters at the prompt is the HumanResponseEvent), after Context.from_dict + "
                    "agent.run(ctx=ctx) as for a decision; the gated body reads it as no approval and returns the "
                    "text as its result (agent.run(user_msg=..., ctx=ctx) on the paused context drops user_msg)"
                ),
            ),
            Channel(
                name="always",
                kind="unsupported",
                mechanism=(
                    "llama-index has no approve/reject-always: it has no tool-approval API at all (FunctionTool, "
                    "ToolMetadata and BaseWorkflowAgent have no approval flag or policy; the HITL docs' "
                    "InputRequiredEvent/HumanResponseEvent answer one wait_for_event, keyed by its waiter_id), and "
                    "nothing in llama-index-core 0.14 / llama-index-workflows 2.26 or its docs applies a decision "
                    "to later calls"
                ),
            ),
            Channel(
                name="nested",
                kind="unsupported",
                mechanism=(
                    "llama-index's agent-as-tool is its Orchestrator pattern (docs: understanding/agent/multi_agent): "
                    "a FunctionTool whose body awaits sub_agent.run(user_msg=...), a separate workflow run with its "
                    "own Context. A wait (Context.wait_for_event) in the sub-agent's tool pauses only that inner run: its "
                    "InputRequiredEvent goes to the inner handler's stream, which the outer run never sees, and the "
                    "outer call_tool step stays busy awaiting the inner handler, so the outer run never goes idle and "
                    "never pauses (observed: del-01 timed out, book_flight held inside the booking agent). Nothing "
                    "forwards a nested wait to the caller or serialises an inner run inside the outer "
                    "Context.to_dict() (llama-index-core 0.14.25 / llama-index-workflows 2.26.1: no nested-workflow support; the HITL "
                    "docs cover a tool of the running workflow only)"
                ),
            ),
            Channel(
                name="handoff",
                kind="native",
                mechanism=(
                    "AgentWorkflow(agents=[root, *delegates], root_agent=root) with the root's "
                    "can_handoff_to=[delegates]: llama-index's own handoff tool, named `handoff(to_agent, reason)` (the name is fixed: "
                    "AgentWorkflow.aggregate_tool_results and FunctionAgent.handle_tool_call_results test "
                    "tool_name == 'handoff'), sets current_agent_name in the run's store; the delegate's gated tool "
                    "waits (Context.wait_for_event) in the same workflow, so the pause, Context.to_dict() and the "
                    "resume are the tool_gate channel's; PendingRequest.agent is the store's current_agent_name"
                ),
            ),
            Channel(
                name="input",
                kind="emulated",
                mechanism=(
                    "add_input writes a new snapshot whose saved chat memory has the text appended as a user "
                    "ChatMessage (the ChatMemoryBuffer the resume puts back with ctx.store.set('memory')); the "
                    "agent's next LLM call reads memory.aget() + scratchpad, so the note comes before the held "
                    "turn. llama-index documents no input to a waiting run but the HumanResponseEvent, which "
                    "decides the call, and agent.run(user_msg=..., ctx=ctx) drops user_msg on a paused context"
                ),
            ),
            # `--store postgres|redis`: no store of llama-index's own for the paused Context in this environment
            Channel(
                name="postgres",
                kind="unsupported",
                mechanism=(
                    "llama-index-workflows 2.26.1 serialises the paused run as Context.to_dict() and keeps it in no "
                    "store of its own; LlamaIndex's PostgreSQL run stores (PostgresWorkflowStore of "
                    "llama-agents-server 0.8.0, DBOSRuntime of llama-agents-dbos 0.7.0) are not in .venv"
                ),
            ),
            Channel(
                name="redis",
                kind="unsupported",
                mechanism=(
                    "llama-index-workflows 2.26.1 serialises the paused run as Context.to_dict() and has no Redis "
                    "store for it (llama-agents-server 0.8.0's workflow stores are memory, SQLite, PostgreSQL and "
                    "AgentData only); llama-index-storage-chat-store-redis keeps chat memory, not the paused Context"
                ),
            ),
        ),
    )

    def __init__(self) -> None:
        self._agent: Any = None
        self._llm: Any = None

    async def aclose(self) -> None:
        self._agent = None

    # -- construction ----------------------------------------------------------------------------

    def _build(self, ctx: LegContext) -> Any:
        if self._agent is not None:
            return self._agent
        li = _import()
        tools = ctx.tools

        def waiter(spec: ToolSpec, args: dict[str, Any], call_id: str | None, shown: dict[str, Any] | None = None) -> Any:
            return li["InputRequiredEvent"](prefix=f"approve {spec.name}?", tool=spec.name,
                                            args=shown if shown is not None else args, call_id=call_id)

        async def wait(wctx: Any, spec: ToolSpec, args: dict[str, Any], call_id: str | None,
                       shown: dict[str, Any] | None = None) -> Any:
            return await wctx.wait_for_event(
                li["HumanResponseEvent"], waiter_event=waiter(spec, args, call_id, shown),
                waiter_id=call_id, requirements={"call_id": call_id}, timeout=None)

        def function_for(spec: ToolSpec) -> Any:
            if spec.kind is ToolKind.approval:

                async def ask(wctx: Any, **kwargs: Any) -> str:
                    event = await wait(wctx, spec, kwargs, _CALL_ID.get())
                    return _decision_of(event).as_text()  # what the model reads

                return ask
            if spec.body_pause:

                async def body(wctx: Any, **kwargs: Any) -> str:
                    call_id = _CALL_ID.get()
                    prepared = await bodypause.prepare(tools, spec, kwargs, call_id=call_id)
                    if not bodypause.ready(prepared):
                        return bodypause.refused(prepared)
                    shown = {**kwargs, "amount": prepared.get("amount")}
                    event = await wait(wctx, spec, kwargs, call_id, shown)
                    return await bodypause.finish(tools, spec, prepared, _decision_of(event), call_id=call_id)

                return body
            if spec.requires_approval:

                async def gated(wctx: Any, **kwargs: Any) -> str:
                    call_id = _CALL_ID.get()
                    decision = _decision_of(await wait(wctx, spec, kwargs, call_id))
                    if decision.kind is not DecisionKind.approve:  # deny, edit (not emulated), null
                        return decision.as_text()
                    return str(await tools.acall(spec.name, kwargs, call_id=call_id))

                return gated

            async def execute(**kwargs: Any) -> str:
                return str(await tools.acall(spec.name, kwargs, call_id=_CALL_ID.get()))

            return execute

        def tool(spec: ToolSpec) -> Any:
            fn = function_for(spec)
            if "wctx" in fn.__code__.co_varnames[: fn.__code__.co_argcount]:
                fn.__annotations__ = {"wctx": li["Context"], "return": str}  # FunctionTool passes the Context
            metadata = li["ToolMetadata"](name=spec.name, description=spec.description,
                                          fn_schema=li["schema_model"](spec))
            return li["FunctionTool"](async_fn=fn, metadata=metadata)

        llm = li["ArenaLiteLLM"](
            model="openai/" + ctx.model.name, api_base=ctx.model.base_url, api_key=ctx.model.api_key,
            max_retries=1,  # tenacity's stop_after_attempt(1): one attempt
            # LiteLLM's openai client: no retries either (`num_retries` is LiteLLM's name for the client's
            # max_retries; llama-index's own `max_retries` keyword would clash with it)
            additional_kwargs={"num_retries": 0},
        )
        self._llm = llm
        if ctx.agents:
            self._agent = self._delegation(ctx, li, tool, llm)
            return self._agent
        self._agent = li["ArenaAgent"](name=AGENT_NAME, tools=[tool(s) for s in ctx.tools.specs], llm=llm,
                                       system_prompt=ctx.instructions, streaming=False, timeout=None)
        return self._agent

    @staticmethod
    def _delegation(ctx: LegContext, li: dict[str, Any], tool: Any, llm: Any) -> Any:
        """The run's agent and its delegates (`ctx.agents`), in llama-index's two documented multi-agent patterns
        (docs: understanding/agent/multi_agent): an AgentWorkflow whose root agent (the run's, its own tools) may hand
        off (`can_handoff_to`) to each `via: handoff` delegate, a FunctionAgent in the same workflow holding its own
        tools (the delegates cannot hand off again); and, for each `via: tool` delegate, the Orchestrator pattern: a
        FunctionTool named after the agent whose body awaits that agent's own `run(user_msg=task)` (a separate
        workflow run, with its own Context)."""
        def delegate(spec: AgentSpec) -> Any:
            return li["ArenaAgent"](name=spec.name, description=spec.description, system_prompt=spec.instructions,
                                    tools=[tool(s) for s in ctx.own_tools(spec.name)], llm=llm, streaming=False,
                                    timeout=None, can_handoff_to=[])

        def as_tool(spec: AgentSpec) -> Any:
            sub = delegate(spec)

            async def call(input: str) -> str:  # noqa: A002  (the task, the tool's one argument)
                return str(await sub.run(user_msg=input))

            params = {"type": "object", "properties": {"input": {"type": "string", "description": "the task"}},
                      "required": ["input"]}
            schema = li["schema_model"](ToolSpec(name=spec.name, description=spec.description, parameters=params))
            return li["FunctionTool"](async_fn=call, metadata=li["ToolMetadata"](
                name=spec.name, description=spec.description, fn_schema=schema))

        handoffs = [delegate(a) for a in ctx.agents if a.via == "handoff"]
        desk = li["ArenaAgent"](
            name=AGENT_NAME, description="The run's own agent.", system_prompt=ctx.instructions, llm=llm,
            tools=[tool(s) for s in ctx.own_tools(None)] + [as_tool(a) for a in ctx.agents if a.via == "tool"],
            streaming=False, timeout=None, can_handoff_to=[a.name for a in handoffs])
        return li["ArenaWorkflow"](agents=[desk, *handoffs], root_agent=AGENT_NAME, timeout=None)

    # -- legs ------------------------------------------------------------------------------------

    async def start(self, ctx: LegContext) -> LegResult:
        agent = self._build(ctx)
        handler = agent.run(user_msg=ctx.item.input)
        return await self._drive(handler, ctx, held=[])

    async def add_input(self, state: dict[str, Any], text: str, ctx: LegContext) -> dict[str, Any]:
        """Input while paused (the `input` channel, emulated): a copy of the saved snapshot (a new file: the state
        handed back at the pause keeps pointing at its own) whose chat memory ends with the text as a user
        message; the resume puts that memory back, and the agent's next LLM call reads it before the held turn
        (memory, then the scratchpad)."""
        li = _import()
        with open(state["context"]) as f:
            saved = json.load(f)
        note = li["ChatMessage"](role="user", content=text)
        saved["memory"] = [*saved["memory"], note.model_dump(mode="json")]
        path = self._save(saved, ctx)
        return {**state, "context": path}

    async def resume(self, state: dict[str, Any], decision: Decision | DecisionSet, ctx: LegContext) -> LegResult:
        li = _import()
        agent = self._build(ctx)
        with open(state["context"]) as f:
            saved = json.load(f)
        restored = li["Context"].from_dict(agent, saved["context"])
        handler = agent.run(ctx=restored)
        history = [li["ChatMessage"].model_validate(m) for m in saved["memory"]]
        await handler.ctx.store.set("memory", li["ChatMemoryBuffer"].from_defaults(chat_history=history, llm=self._llm))
        pending = [PendingRequest.model_validate(p) for p in state["pending"]]
        if isinstance(decision, DecisionSet):
            # exactly the decisions given, each under the call id it names (one the pause does not hold too)
            given = [(d.call_id if d.call_id is not None else pending[0].call_id, d) for d in decision.decisions]
        else:
            given = [(pending[0].call_id, decision)]
        events = [li["HumanResponseEvent"](response=d.as_text(), call_id=call_id, decision=d.model_dump(mode="json"))
                  for call_id, d in given]
        return await self._drive(handler, ctx, held=pending, deliver=events)

    async def _drive(self, handler: Any, ctx: LegContext, held: list[PendingRequest],
                     deliver: list[Any] | None = None) -> LegResult:
        """Read the run's events until it stops (its answer) or goes idle on waits (the suspension).

        A resume (`deliver`: the decisions' events) sends them once the restored run reports it is idle: restoring
        re-runs every step that was waiting (they wait again), and events sent while that re-run is under way were
        delivered out of order (a step run twice, another never: observed in doc_review, see the docstring). The
        calls still held at the next idle are those not answered, plus any new wait of this leg."""
        li = _import()
        asked: dict[Any, PendingRequest] = {p.call_id: p for p in held}  # call id -> what it asks, in order
        answered: set[Any] = set()
        delivered = deliver is None

        async def suspend() -> LegResult:
            waiting = [p for call_id, p in asked.items() if call_id not in answered]
            if not waiting:
                await handler.cancel_run()
                return LegResult.errored("the workflow went idle waiting for an event nothing asked for")
            return await self._suspend(handler, waiting, ctx)

        async for event in handler.stream_events(expose_internal=True):
            if ctx.stream:
                _tell(li, event, ctx)
            if isinstance(event, li["InputRequiredEvent"]):
                call_id = event.get("call_id")
                if call_id not in asked:
                    # delegation: the agent whose tool waits is the AgentWorkflow's current agent (its own record,
                    # `current_agent_name` in the run's store: the agent handed the conversation)
                    agent = await handler.ctx.store.get("current_agent_name", default=None) if ctx.agents else None
                    asked[call_id] = PendingRequest(tool=event.get("tool"), args=dict(event.get("args") or {}),
                                                    call_id=call_id, agent=agent)
            elif isinstance(event, li["WorkflowIdleEvent"]) or (
                    isinstance(event, li["UnhandledEvent"]) and event.idle and delivered):
                if delivered:
                    return await suspend()
                delivered = True
                assert deliver is not None
                if not deliver:  # an empty decision set: nothing to send, the run keeps waiting
                    return await suspend()
                for sent in deliver:
                    answered.add(sent.get("call_id"))
                    handler.ctx.send_event(sent)
            elif isinstance(event, li["StopEvent"]):
                break
        result = await handler
        response = getattr(result, "response", None)
        return LegResult.finished(response.content if response is not None and response.content else str(result))

    async def _suspend(self, handler: Any, pending: list[PendingRequest], ctx: LegContext) -> LegResult:
        """Save llama-index's own serialisation of the run (a new file per pause, so an older state still
        points at its own snapshot) and the chat memory it leaves out, then end the run."""
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # UnserializableKeyWarning: the memory, saved below
            context = handler.ctx.to_dict()
        memory = await handler.ctx.store.get("memory")
        messages = [m.model_dump(mode="json") for m in memory.get_all()]
        path = self._save({"context": context, "memory": messages}, ctx)
        await handler.cancel_run()
        state = {"context": path, "pending": [p.model_dump(mode="json") for p in pending]}
        return LegResult.suspended(pending if len(pending) > 1 else pending[0], state)

    @staticmethod
    def _save(saved: dict[str, Any], ctx: LegContext) -> str:
        """Write a snapshot (context + memory) to a new file under the item's work directory; its path."""
        path = os.path.join(ctx.workdir, f"{CONTEXT_PREFIX}-{uuid.uuid4().hex[:12]}.json")
        tmp = f"{path}.tmp"
        with open(tmp, "w") as f:
            json.dump(saved, f)
        os.replace(tmp, path)
        return path
