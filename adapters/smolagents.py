"""smolagents adapters. smolagents (1.26) has no approval, interrupt-and-resume or deferred-tool primitive.

Both adapters run a real `ToolCallingAgent` over smolagents' `OpenAIServerModel` (the `openai`
client, Chat Completions) pointed at the harness's loopback base URL. The harness tools become
smolagents `Tool`s (inputs from the JSON schema, `output_type="string"`) whose `forward` makes ONE
harness call (`ctx.tools.call`); system prompt: `ctx.instructions` as the agent's `instructions`
(smolagents inserts them into its own ToolCallingAgent system prompt); task: `ctx.item.input`.

`SmolagentsAdapter` (pause kind `unsupported`): smolagents cannot pause, so request_approval is an
ordinary tool whose body is the harness's own request_approval. The harness answers it with
"NOT APPROVED: request_approval was executed instead of pausing ..." and records the call, so the
trace shows that the framework never stopped. The run goes to completion in one leg
(`agent.run(task)`); `suspended` fails on every item.

`SmolagentsEmulatedAdapter` (pause kind `emulated`), built from smolagents' own pieces as in its
plan-customization human-in-the-loop example: the request_approval tool is adapter-owned (it never
reaches the harness) and returns a placeholder observation; an `ActionStep` step callback sees the
request_approval call in the finished step and calls `agent.interrupt()`. smolagents checks the
interrupt switch only at the start of the next step, so the whole step has run by then, sibling
tool calls included (smolagents runs a step's tool calls in a thread pool), and `agent.run` raises
`AgentError("Agent interrupted.")`. The leg returns suspended; its state is the agent object itself
(its `AgentMemory`), which smolagents cannot serialise and rebuild, hence `emulated`: nothing
survives a process restart. Resume: the decision text replaces the placeholder in that step's
`observations` (memory edited in place, as smolagents' example edits a `PlanningStep.plan`), then
`agent.run(task, reset=False)` continues with the memory kept. smolagents appends the task again as
a new `TaskStep` ("New task: ..."), exactly as `run(..., reset=False)` always does.

Wire format (what the model sees): smolagents sends its history as TEXT, never as native tool
messages: content is a list of text parts; a step's tool calls are an assistant message
"Calling tools:\\n[{'id': ..., 'type': 'function', 'function': {'name': ..., 'arguments': {...}}}]"
(a Python repr), and their results one user message "Observation:\\n<result>\\n<result>..." (results
of one step joined by newlines, in call-id order). Requests carry `tool_choice="required"` and
`stop=["Observation:", "Calling tools:"]`; the final answer is a `final_answer` tool call. The
decision therefore reaches the model as the text of the request_approval step's observation.

Offline: `HF_HUB_OFFLINE=1` and `HF_HUB_DISABLE_TELEMETRY=1` are set (setdefault) before smolagents
is imported; smolagents 1.26 itself has no telemetry (no OpenTelemetry unless the user instruments
it via openinference). No hub tools/models are loaded (`add_base_tools=False`), the logger is off
(`LogLevel.OFF`), the `openai` client has `max_retries=0`. Parallel tool calls run with
`max_tool_threads=1` so the harness's log records a step's calls in the model's order (still all of
them, as smolagents always does): deterministic traces, nothing held or dropped.

Other arenas: neither adapter has a tool-level gate (`tool_gate` stays `unsupported`): a tool marked
`requires_approval` is an ordinary tool and runs when called. The emulated adapter's state is not
JSON, so where legs must resume in a new process the harness refuses the resume (item errored).
"""

from __future__ import annotations

import asyncio
import os
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any

from arena import http
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

MAX_STEPS = 20
# The observation the adapter-owned request_approval returns until the human's decision replaces it.
PENDING = "PENDING: waiting for the human's decision on this request"
# both adapters stream the same way (`_SmolagentsBase._run_agent`)
STREAM = Channel(
    name="stream",
    kind="native",
    mechanism=(
        "agent.run(task, stream=True) read to its end on an agent with stream_outputs=True "
        "(model answers via generate_stream; ToolCall and ToolOutput events, the FinalAnswerStep)"
    ),
)
# `--store postgres|redis`: smolagents keeps no run anywhere, so neither adapter has a store on a server
STORES = tuple(
    Channel(
        name=kind,
        kind="unsupported",
        mechanism=(
            "smolagents 1.26.0 cannot persist a run: agent.to_dict()/save() keep the agent's definition (tools, "
            "model, prompts), not its AgentMemory, which has no loader, so there is no paused state to keep in "
            f"{title}"
        ),
    )
    for kind, title in (("postgres", "PostgreSQL"), ("redis", "Redis"))
)


def _smolagents() -> Any:
    """Import smolagents lazily, with the Hugging Face hub kept offline and its telemetry off."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
    import smolagents

    return smolagents


def _inputs(parameters: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """smolagents `Tool.inputs` from a JSON schema: type + description; optional ones are nullable."""
    required = set(parameters.get("required") or [])
    inputs: dict[str, dict[str, Any]] = {}
    for name, prop in (parameters.get("properties") or {}).items():
        entry: dict[str, Any] = {"type": prop.get("type", "any"), "description": prop.get("description") or name}
        if "enum" in prop:
            entry["enum"] = prop["enum"]
        if name not in required:
            entry["nullable"] = True
        inputs[name] = entry
    return inputs


_TOOL_CLASS: Any = None


def _tool_class() -> Any:
    """One smolagents `Tool` subclass whose instances wrap one callable each (built once, lazily)."""
    global _TOOL_CLASS
    if _TOOL_CLASS is None:
        from smolagents import Tool

        class HarnessTool(Tool):
            # The signature is generic (**kwargs), as in smolagents' own wrapper tools.
            skip_forward_signature_validation = True
            output_type = "string"

            def __init__(self, spec: ToolSpec, body: Any) -> None:
                self.name = spec.name
                self.description = spec.description
                self.inputs = _inputs(spec.parameters)
                self._body = body
                super().__init__()

            def forward(self, **kwargs: Any) -> str:
                return self._body(kwargs)

        _TOOL_CLASS = HarnessTool
    return _TOOL_CLASS


def _final_text(output: Any) -> str:
    return "" if output is None else str(output)


class _SmolagentsBase(ABC):
    """Builds the agent; subclasses decide what the approval tool does."""

    # what a fork server imports before it forks workers (arena/worker/forkserver.py); smolagents imports openai at its
    # first model client, and its prompts and the console's colour style at its first agent
    preload = ("smolagents", "smolagents.utils", "openai", "smolagents.prompts", "pygments.styles.gh_dark")

    def __init__(self) -> None:
        self._model: Any = None

    async def aclose(self) -> None:
        if self._model is not None:
            self._model.client.close()
            self._model = None

    @abstractmethod
    def _approval_body(self, ctx: LegContext, spec: ToolSpec) -> Any:
        """What the approval tool does in this adapter."""

    def _step_callbacks(self, ctx: LegContext) -> dict[Any, Any] | None:
        return None

    def _build(self, ctx: LegContext) -> Any:
        smolagents = _smolagents()
        HarnessTool = _tool_class()

        def harness_body(spec: ToolSpec) -> Any:
            return lambda kwargs: ctx.tools.call(spec.name, kwargs)

        tools = [
            HarnessTool(s, self._approval_body(ctx, s) if s.kind is ToolKind.approval else harness_body(s))
            for s in ctx.tools.specs
        ]
        self._model = smolagents.OpenAIServerModel(
            model_id=ctx.model.name,
            api_base=ctx.model.base_url,
            api_key=ctx.model.api_key,
            # the SDK's default blocking client, on the harness's shared TLS context (arena.http.client)
            client_kwargs={"max_retries": 0, "http_client": http.client()},
        )
        return smolagents.ToolCallingAgent(
            tools=tools,
            model=self._model,
            instructions=ctx.instructions,
            max_steps=MAX_STEPS,
            add_base_tools=False,
            verbosity_level=smolagents.LogLevel.OFF,
            max_tool_threads=1,
            step_callbacks=self._step_callbacks(ctx),
            stream_outputs=ctx.stream,  # a streamed leg: the model's answer streamed too (generate_stream)
        )

    @staticmethod
    def _run_agent(agent: Any, task: str, ctx: LegContext, reset: bool = True) -> Any:
        """`agent.run(task)`, or in a streamed leg `agent.run(task, stream=True)` read to its end, handing over each
        ToolCall and ToolOutput it yields; the final answer either way (a streamed run's FinalAnswerStep)."""
        if not ctx.stream:
            return agent.run(task, reset=reset)
        from smolagents.agents import ToolOutput
        from smolagents.memory import FinalAnswerStep, ToolCall

        output = None
        for event in agent.run(task, stream=True, reset=reset):
            if isinstance(event, ToolCall):
                ctx.told("tool_call", event.name, event.id)
            elif isinstance(event, ToolOutput):
                ctx.told("tool_result", event.tool_call.name, event.id, event.observation)
            elif isinstance(event, FinalAnswerStep):
                output = event.output
        return output


class SmolagentsAdapter(_SmolagentsBase):
    order = 80
    info = AdapterInfo(
        name="smolagents",
        framework="smolagents",
        channels=(
            Channel(
                name="ask",
                kind="unsupported",
                mechanism=(
                    "none: smolagents has no interrupt/approval primitive; request_approval is an ordinary tool "
                    "(the harness's own), and agent.run(task) runs to completion in one leg"
                ),
                carries=Capabilities(
                    deny_reason=False,
                    approve_note=False,
                    free_text=False,
                    notes=(
                        "No decision ever reaches the model: the run never pauses, and the request_approval tool is "
                        "executed by the harness, which answers 'NOT APPROVED: request_approval was executed instead "
                        "of pausing for a human'."
                    ),
                ),
            ),
            STREAM,
            *STORES,
        ),
    )

    def _approval_body(self, ctx: LegContext, spec: ToolSpec) -> Any:
        # smolagents cannot pause on it: the call is simply executed, by the harness, which logs it.
        return lambda kwargs: ctx.tools.call(spec.name, kwargs)

    async def start(self, ctx: LegContext) -> LegResult:
        agent = self._build(ctx)
        output = await asyncio.to_thread(self._run_agent, agent, ctx.item.input, ctx)
        return LegResult.finished(_final_text(output))

    async def resume(self, state: Any, decision: Decision, ctx: LegContext) -> LegResult:
        return LegResult.errored("smolagents never suspends, so there is nothing to resume")


@dataclass
class _Interrupted:
    """In-memory state of an interrupted run: the agent (its AgentMemory) and the step to answer."""

    agent: Any
    step: Any  # the smolagents ActionStep holding the request_approval call
    call_id: str


class SmolagentsEmulatedAdapter(_SmolagentsBase):
    order = 81
    info = AdapterInfo(
        name="smolagents_emulated",
        framework="smolagents",
        channels=(
            Channel(
                name="ask",
                kind="emulated",
                mechanism=(
                    "emulated: an ActionStep step callback calls agent.interrupt() after the step that called "
                    "request_approval (adapter-owned tool, placeholder observation); agent.run raises "
                    "AgentError('Agent interrupted.'); resume writes the decision as that call's observation in "
                    "agent.memory and calls agent.run(task, reset=False). State = the live agent object."
                ),
                carries=Capabilities(
                    deny_reason=True,
                    approve_note=True,
                    free_text=True,
                    notes=(
                        "The decision text replaces the request_approval call's observation in the agent's memory, "
                        "so notes, reasons and answers reach the model as that call's result (sent, like all "
                        "smolagents tool results, as 'Observation:' text in a user message). smolagents checks "
                        "agent.interrupt() only between steps: sibling tool calls of the approval step run before "
                        "the pause. The state is the in-memory agent: smolagents cannot persist and reload a run."
                    ),
                ),
            ),
            STREAM,
            *STORES,
        ),
    )

    def __init__(self) -> None:
        super().__init__()
        self._approval_name: str | None = None
        self._interrupted: _Interrupted | None = None

    def _approval_body(self, ctx: LegContext, spec: ToolSpec) -> Any:
        # Adapter-owned: the harness's request_approval is never executed. The observation is a
        # placeholder until resume() replaces it with the human's decision.
        return lambda kwargs: PENDING

    def _step_callbacks(self, ctx: LegContext) -> dict[Any, Any]:
        from smolagents import ActionStep

        approval = {s.name for s in ctx.tools.specs if s.kind is ToolKind.approval}

        def interrupt_on_approval(step: Any, agent: Any) -> None:
            call = next((c for c in step.tool_calls or [] if c.name in approval), None)
            if call is not None and step.observations and PENDING in step.observations:
                self._interrupted = _Interrupted(agent=agent, step=step, call_id=call.id)
                agent.interrupt()  # takes effect when the next step would start

        return {ActionStep: interrupt_on_approval}

    async def _run(self, agent: Any, task: str, reset: bool, ctx: LegContext) -> LegResult:
        from smolagents.utils import AgentError

        self._interrupted = None
        try:
            output = await asyncio.to_thread(self._run_agent, agent, task, ctx, reset)
        except AgentError as exc:
            if self._interrupted is None or str(exc) != "Agent interrupted.":
                raise  # any other framework error is the item's error
            paused = self._interrupted
            call = next(c for c in paused.step.tool_calls if c.id == paused.call_id)
            args = call.arguments if isinstance(call.arguments, dict) else {"_raw": call.arguments}
            pending = PendingRequest(tool=call.name, args=args, call_id=call.id)
            return LegResult.suspended(pending, paused)
        return LegResult.finished(_final_text(output))

    async def start(self, ctx: LegContext) -> LegResult:
        agent = self._build(ctx)
        return await self._run(agent, ctx.item.input, reset=True, ctx=ctx)

    async def resume(self, state: _Interrupted, decision: Decision, ctx: LegContext) -> LegResult:
        step = state.step
        step.observations = step.observations.replace(PENDING, decision.as_text(), 1)
        return await self._run(state.agent, ctx.item.input, reset=False, ctx=ctx)
