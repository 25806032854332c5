"""What pydantic-ai offers for each pause channel, in its own terms: the adapter's `AdapterInfo`."""

from __future__ import annotations

from arena.for_adapters import AdapterInfo, Capabilities, Channel
from arena_builtins.arenas.delegation.channel import HANDOFF, NESTED
from arena_builtins.arenas.run_context.channel import RUN_CONTEXT

INFO = AdapterInfo(
    name="pydantic_ai",
    framework="pydantic-ai-slim",
    channels=(
        Channel(
            name="ask",
            kind="native",
            mechanism=(
                "deferred tool: request_approval raises CallDeferred(kind='question'), the run ends with "
                "DeferredToolRequests (output_type=[str, DeferredToolRequests]); resume with "
                "agent.run(message_history=..., "
                "deferred_tool_results=DeferredToolResults(calls={tool_call_id: decision text}))"
            ),
            carries=Capabilities(
                deny_reason=True,
                approve_note=True,
                free_text=True,
                notes=(
                    "The decision is the deferred call's result (DeferredToolResults.calls), a free "
                    "string, so approve notes, deny reasons and free answers all reach the model as the "
                    "request_approval tool result. State = pydantic-ai's own JSON message history + call id. "
                    "Gated tools (requires_approval): a denial's text reaches the model as ToolDenied.message; "
                    "ToolApproved has no note field, so an approval note is not carried there."
                ),
            ),
        ),
        Channel(
            name="tool_gate",
            kind="native",
            mechanism=(
                "Tool(requires_approval=True) on each gated tool: the run ends with DeferredToolRequests.approvals; "
                "resume with agent.run(message_history=..., deferred_tool_results=DeferredToolResults(approvals="
                "{tool_call_id: True | ToolApproved(override_args=...) | ToolDenied(message=decision text)}))"
            ),
            carries=Capabilities(
                deny_reason=True, approve_note=False, free_text=False, edit_args=True,
                notes="ToolDenied.message is the held call's result; ToolApproved has no note field; "
                      "ToolApproved(override_args=...) runs the call with the human's arguments",
            ),
        ),
        Channel(
            name="body_pause",
            kind="native",
            mechanism=(
                "the tool prepares, then raises ApprovalRequired(metadata=...) unless RunContext.tool_call_approved; "
                "resumed with DeferredToolResults(approvals={id: True | ToolDenied}): pydantic-ai calls the function "
                "again from the top once approved (a denial never calls it again)"
            ),
        ),
        Channel(
            name="multi_call",
            kind="native",
            mechanism=(
                "every gated call of the turn in DeferredToolRequests.approvals; DeferredToolResults(approvals={"
                "tool_call_id: True | ToolApproved(override_args=...) | ToolDenied(message=...)}), one per call"
            ),
        ),
        Channel(
            name="recover",
            kind="native",
            mechanism=(
                "the message history stored at the pause (ModelMessagesTypeAdapter) is run again in a new process"
                " with the same DeferredToolResults (pydantic-ai docs, deferred tools: resume from stored "
                "history)"
            ),
        ),
        Channel(
            name="message",
            kind="native",
            mechanism=(
                "agent.run(text, message_history=repair_messages(paused history)): a new user prompt on the "
                "paused run's history, closed out first with pydantic_ai.messages.repair_messages (documented "
                "for a new prompt on a history with unanswered tool calls, which Agent.run refuses); "
                "pydantic-ai answers each pending call with its synthesized 'interrupted' ToolReturnPart"
            ),
        ),
        Channel(
            name="always",
            kind="unsupported",
            mechanism=(
                "pydantic-ai has no decision that stands for later calls: DeferredToolResults.approvals answers "
                "each held call by its tool_call_id (True | ToolApproved | ToolDenied, no scope field), "
                "DeferredToolRequests.build_results(approve_all=True) approves only the calls pending at that "
                "pause, and requires_approval / ApprovalRequiredToolset / HandleDeferredToolCalls are policies the "
                "application writes itself (pydantic_ai/_deferred.py, toolsets/approval_required.py, "
                "capabilities/deferred_tool_handler.py in 2.68; docs/deferred-tools.md). Pydantic AI Harness's "
                "PermissionPolicy doc says rule persistence ('always allow') is out of scope"
            ),
        ),
        Channel(
            name="input",
            kind="native",
            mechanism=(
                "add_input stages the text in the paused state (pydantic-ai keeps no paused run: the history is "
                "the caller's); the resume is agent.run(text, message_history=..., deferred_tool_results=...), "
                "the user_prompt pydantic-ai documents alongside deferred results (docs/deferred-tools.md: "
                "'optionally a new user_prompt ... alongside the deferred results'): a UserPromptPart after the "
                "held calls' results in the same request"
            ),
        ),
        Channel(
            name=NESTED,
            kind="emulated",
            mechanism=(
                "pydantic-ai's 'agent delegation' (docs/multi-agent-applications.md): a Tool of the desk named after "
                "the delegate whose body runs delegate.run(task, usage=ctx.usage). pydantic-ai does not carry a "
                "delegate's DeferredToolRequests to the parent (issue #3527; #4302 open; not in the 2.68 docs), so "
                "the adapter forwards it by hand, the pattern of #3274 / PR #7036: the body raises "
                "ApprovalRequired(metadata={delegate's message history JSON, its held calls}), the desk's run ends "
                "with that call in DeferredToolRequests.approvals; resume = the desk's agent.run(message_history=..., "
                "deferred_tool_results=DeferredToolResults(approvals={desk call id: True}, metadata={desk call id: "
                "{..., human's verdicts}})), pydantic-ai calls the body again (ctx.tool_call_approved, "
                "ctx.tool_call_metadata), which runs the delegate on its history with DeferredToolResults(approvals="
                "{call id: True | ToolApproved(override_args) | ToolDenied(message)})"
            ),
            carries=Capabilities(
                deny_reason=True, approve_note=False, free_text=False, edit_args=True,
                notes="the delegate's own gate: ToolDenied.message is the held call's result in the delegate's "
                      "run; ToolApproved(override_args=...) runs it as edited; ToolApproved has no note field",
            ),
        ),
        Channel(
            name=HANDOFF,
            kind="emulated",
            mechanism=(
                "the model-called handoff pydantic-ai documents, an output function (docs/output.md 'Output "
                "functions', hand_off_to_sql_agent; multi-agent-applications.md: 'to hand off control to another "
                "agent completely ... use an output function'): ToolOutput(fn, name='transfer_to_<name>'), fn runs "
                "delegate.run(message_history=ctx.messages[:-1]) and its output is the run's output. A paused "
                "delegate's DeferredToolRequests is that output; which agent's run paused is kept by the adapter "
                "(not by pydantic-ai, which keeps no run), and the resume is that delegate's agent.run("
                "message_history=its all_messages, deferred_tool_results=DeferredToolResults(approvals=...))"
            ),
            carries=Capabilities(
                deny_reason=True, approve_note=False, free_text=False, edit_args=True,
                notes="the delegate's own tool gate, as tool_gate",
            ),
        ),
        Channel(
            name="postgres",
            kind="native",
            mechanism=(
                "the message history as ModelMessagesTypeAdapter JSON (result.all_messages_json()) in a table of "
                "the item's database (pydantic_ai_paused_runs, created by arena's KeptRecords with asyncpg; one row "
                "per pause: the history and the held calls' ids and kinds), the documented way (docs 'Messages and "
                "chat history', storing messages to JSON: 'store the messages history of an agent run on disk or "
                "in a database'); Pydantic AI has no store class. The leg's state is the row's id; the resume "
                "reads the row and runs agent.run(message_history=ModelMessagesTypeAdapter.validate_json(...), "
                "deferred_tool_results=...)"
            ),
        ),
        Channel(
            name="redis",
            kind="native",
            mechanism=(
                "the message history as ModelMessagesTypeAdapter JSON (result.all_messages_json()) in a Redis hash "
                "under the item's key prefix (<prefix>pydantic_ai:paused_run:<id>, arena's KeptRecords with "
                "redis.asyncio; the history and the held calls' ids and kinds), the documented way (docs 'Messages "
                "and chat history', storing messages to JSON: 'store the messages history of an agent run on disk "
                "or in a database'); Pydantic AI has no store class. The leg's state is the key's id; the resume "
                "reads the hash and runs agent.run(message_history=ModelMessagesTypeAdapter.validate_json(...), "
                "deferred_tool_results=...)"
            ),
        ),
        Channel(
            name=RUN_CONTEXT,
            kind="native",
            mechanism="the run's deps: agent.run(..., deps=context) at the start and on every resume with the paused "
                      "history; Agent(instructions=callable) writes the instructions from RunContext.deps at each "
                      "model request",
        ),
        Channel(
            name="stream",
            kind="native",
            mechanism=(
                "agent.run_stream_events(...) read to its end (FunctionToolCallEvent, FunctionToolResultEvent, "
                "DeferredToolRequestsEvent for the paused calls); the run's result from its AgentRunResultEvent"
            ),
        ),
    ),
)
