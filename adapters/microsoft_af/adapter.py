"""The Microsoft Agent Framework adapter: each leg runs the Agent on the item's `AgentSession`, restored from its
`to_dict()` on a resume and answered with the approval responses of the decision."""

from __future__ import annotations

from typing import Any

from arena.for_adapters import Adapter, Decision, DecisionKind, DecisionSet, LegContext, LegResult, kit
from arena_builtins.arenas.delegation.channel import agents_of

from .client import build_agent, chat_client, framework
from .decision import answers, holds_rule
from .delegation import desk
from .info import INFO
from .outcome import leg_result
from .stream import run


class MicrosoftAFAdapter(Adapter):
    order = 50  # where it stands in `arena list` and the reports (lower first)
    requires = ("agent-framework-openai",)  # installed besides the framework
    # what a fork server imports before it forks workers (arena/worker/forkserver.py)
    preload = (
        "agent_framework", "agent_framework.observability", "agent_framework.openai", "openai",
        # imported lazily on first use
        "agent_framework._agents", "agent_framework._clients", "agent_framework._sessions", "agent_framework._tools",
        "agent_framework._compaction", "agent_framework._mcp",
        "agent_framework_openai", "agent_framework_openai._chat_completion_client",
        "msgspec", "opentelemetry.propagate", "openai.types.audio", "agent_framework._harness._tool_approval",
    )

    info = INFO

    def __init__(self) -> None:
        self._client: Any = None
        self._grants: list[str] = []  # decision texts the approval body may return, one per approved request

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.client.close()

    def _agent(self, ctx: LegContext, standing: bool = False) -> Any:
        """The leg's Agent. `standing`: the run has an "always approve" (given now, or a rule in the session's
        `tool_approval` state), so the framework's ToolApprovalMiddleware is on for this leg (see `always`)."""
        af = framework()
        if self._client is None:
            self._client = chat_client(ctx)
        if agents_of(ctx):  # delegation: the desk, with each delegate as a tool
            return desk(af, ctx, self._client, self._grant)
        return build_agent(af, ctx, self._client, self._grant, standing)

    def _grant(self) -> str | None:
        """The text the approval body returns for the next approved request, or None: no decision from the harness
        (the body then forwards the call to the harness, which logs it as executed)."""
        return self._grants.pop(0) if self._grants else None

    async def start(self, ctx: LegContext) -> LegResult:
        agent = self._agent(ctx)
        session = agent.create_session()
        response = await run(agent, ctx.item.input, session, ctx)
        return self._leg_result(response, session, ctx)

    async def resume(self, state: dict[str, Any], decision: Decision | DecisionSet, ctx: LegContext) -> LegResult:
        af = framework()
        session = af.AgentSession.from_dict(state["session"])
        agent = self._agent(ctx, standing=holds_rule(session) or any(
            d.always and d.kind is DecisionKind.approve for d in kit.decisions_of(decision)))
        requests = [af.Content.from_dict(r) for r in state["requests"]]
        if isinstance(decision, Decision) and decision.kind is DecisionKind.message:
            # A new message instead of a decision: a new run on the same session with the user's text, as the
            # framework documents new input on a paused run. No approval response: the held calls are left to it.
            self._grants = []
            response = await run(agent, decision.text or "", session, ctx)
            return self._leg_result(response, session, ctx)
        self._grants, responses = answers(af, state, requests, decision, ctx)
        response = await run(agent, af.Message(role="user", contents=responses), session, ctx)
        return self._leg_result(response, session, ctx)

    async def add_input(self, state: dict[str, Any], text: str, ctx: LegContext) -> dict[str, Any]:
        """Input while paused, no decision (the `input` channel): queued on the restored session with the
        framework's `enqueue_messages(session, ...)` (agent_framework._sessions: "Enqueue messages for the next model
        call in the given session"), kept in its state by `to_dict()`; the resumed run's MessageInjectionMiddleware
        drains it into its next model call, after the held calls' results."""
        af = framework()
        session = af.AgentSession.from_dict(state["session"])
        af.enqueue_messages(session, af.Message(role="user", contents=[af.Content.from_text(text)]))
        return {**state, "session": session.to_dict()}

    def _leg_result(self, response: Any, session: Any, ctx: LegContext) -> LegResult:
        self._grants = []
        return leg_result(response, session, ctx)
