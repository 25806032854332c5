"""What the CrewAI adapter declares: its pause channels, each in CrewAI's terms."""

from __future__ import annotations

from arena.for_adapters import AdapterInfo, Capabilities, Channel

INFO = AdapterInfo(
    name="crewai",
    framework="crewai",
    channels=(
        Channel(
            name="ask",
            kind="native",
            mechanism=(
                "Flow step with @human_feedback(provider=...) raising HumanFeedbackPending after the agent's "
                "result_as_answer approval tool ends its turn; SQLiteFlowPersistence; "
                "Flow.from_pending(flow_id).resume_async(feedback)"
            ),
            carries=Capabilities(
                deny_reason=True,
                approve_note=True,
                free_text=True,
                notes=(
                    "the flow's feedback is free text; the listener hands decision.as_text() to the model as the "
                    "approval call's tool result. CrewAI runs a turn's tool calls in order and stops at the "
                    "result_as_answer approval tool: later siblings never run and are reported to the model as "
                    "not executed"
                ),
            ),
        ),
        Channel(
            name="recover",
            kind="native",
            mechanism=(
                "Flow.from_pending(flow_id, SQLiteFlowPersistence) in a new process and resume_async with the "
                "decision again (crewai docs, human feedback in flows: resume a pending flow from its "
                "persistence)"
            ),
        ),
        Channel(
            name="stream",
            kind="native",
            mechanism=(
                "Flow.astream() read to its end (CrewAI's StreamFrames; the agent's LLM(stream=True)); a resume "
                "is resume_async wrapped in astream's own frame stream (create_async_frame_generator + "
                "AsyncStreamSession), CrewAI having no streamed resume. Told: llm_call_completed tool-call "
                "answers (with the calls' ids), tool_usage_finished (no call id in CrewAI's tool events), "
                "flow_paused (its state's pending approval call); the pause is the session's "
                "HumanFeedbackPending result"
            ),
        ),
        # `--store postgres|redis`: CrewAI's one flow persistence is SQLite
        Channel(
            name="postgres",
            kind="unsupported",
            mechanism=(
                "crewai 1.15.30 keeps a paused flow (HumanFeedbackPending) only through FlowPersistence, whose "
                "one implementation is SQLiteFlowPersistence (any other backend is the user's own FlowPersistence "
                "subclass, given per flow or by set_flow_persistence_factory): no PostgreSQL flow persistence"
            ),
        ),
        Channel(
            name="redis",
            kind="unsupported",
            mechanism=(
                "crewai 1.15.30 keeps a paused flow (HumanFeedbackPending) only through FlowPersistence, whose "
                "one implementation is SQLiteFlowPersistence (any other backend is the user's own FlowPersistence "
                "subclass, given per flow or by set_flow_persistence_factory): no Redis flow persistence"
            ),
        ),
    ),
)
