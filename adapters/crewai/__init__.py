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

from .adapter import CrewAIAdapter

__all__ = ["CrewAIAdapter"]
