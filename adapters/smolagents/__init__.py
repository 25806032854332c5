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

from .adapter import SmolagentsAdapter, SmolagentsEmulatedAdapter

__all__ = ["SmolagentsAdapter", "SmolagentsEmulatedAdapter"]
