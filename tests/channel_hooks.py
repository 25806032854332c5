"""An adapter for an arena's own channel with a hook of its own (`answer_elicitation`) and a decision kind of its own
(`decline_elicitation`), and the channel, registered here as an arena's package would: run in the harness's process
and in a worker (tests/core/test_channel_hooks.py)."""

from __future__ import annotations

from typing import Any

from arena.for_adapters import (
    Adapter,
    AdapterInfo,
    Channel,
    ChannelSpec,
    Decision,
    DecisionSet,
    LegContext,
    LegResult,
    PendingRequest,
    register_channel,
)

ELICITATION = register_channel(ChannelSpec(
    "elicitation_hook_test", "a server asks the human a question through the client while the run is paused",
    hooks=("answer_elicitation",), decisions=("decline_elicitation",), events=("elicited",), provider=__name__))


class Pauses(Adapter):
    """Pauses at once; the resume answers with all the paused state was given, and the decision's kind."""

    info = AdapterInfo(name="pauses", framework="openai",
                       channels=(Channel(name="ask", kind="emulated"), Channel(name=ELICITATION.name, kind="native")))

    async def start(self, ctx: LegContext) -> LegResult:
        return LegResult.suspended(PendingRequest(tool="request_approval", args={}), {"answers": []})

    async def resume(self, state: Any, decision: Decision | DecisionSet, ctx: LegContext) -> LegResult:
        kinds = [d.kind_name for d in (decision.decisions if isinstance(decision, DecisionSet) else [decision])]
        return LegResult.finished(f"answers: {', '.join(state['answers'])}; {', '.join(kinds)}")


class Elicits(Pauses):
    """`answer_elicitation` adds the human's answer to the paused state."""

    info = Pauses.info.model_copy(update={"name": "elicits"})

    async def answer_elicitation(self, state: dict[str, Any], answer: str, ctx: LegContext) -> dict[str, Any]:
        return {"answers": [*state["answers"], answer]}


class ElicitsNot(Pauses):
    """Declares the channel without its hook: keeps Adapter's default (refused by the check at load)."""
