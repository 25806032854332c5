"""The harness tools as strands tools, by kind, and the gate hook on the gated ones.

The approval tool's body interrupts (`ask`); a body-pausing tool prepares, then interrupts in its body
(`body_pause`); every other tool is one harness call. A gated tool is held by the `BeforeToolCallEvent` hook
(`tool_gate`), which also keeps the session's (t)rust (`always`)."""

from __future__ import annotations

from typing import Any

from arena.for_adapters import DecisionKind, LegContext, ToolKind, ToolSpec, bodypause
from arena_builtins.arenas.delegation.channel import agents_of

from .decision import decision_of

ASK, GATE, BODY = "arena:request_approval", "arena:approve_tool", "arena:body_pause"
TRUSTED = "arena:trusted_tools"  # agent.state key: the gated tools an "always" approval trusts for the session


def tool(strands: Any, spec: ToolSpec, ctx: LegContext) -> Any:
    """A strands tool from the harness's spec: the schema is the spec's, the arguments the model's."""

    def call(tool_context: Any) -> tuple[dict[str, Any], str]:
        use = tool_context.tool_use
        return dict(use.get("input") or {}), use["toolUseId"]

    if spec.kind is ToolKind.approval:

        async def body(tool_context: Any) -> str:
            args, call_id = call(tool_context)
            # stops the run; on resume strands runs this body again and interrupt() returns the response
            response = tool_context.interrupt(ASK, reason={"kind": "ask", "tool": spec.name, "args": args,
                                                           "call_id": call_id})
            return str(response)

    elif spec.body_pause:

        async def body(tool_context: Any) -> str:
            args, call_id = call(tool_context)
            prepared = await bodypause.prepare(ctx.tools, spec, args, call_id=call_id)  # runs on every pass
            if not bodypause.ready(prepared):
                return bodypause.refused(prepared)
            response = tool_context.interrupt(BODY, reason={"kind": "body", "tool": spec.name, "args": args,
                                                            "call_id": call_id,
                                                            "amount": prepared.get("amount")})
            return await bodypause.finish(ctx.tools, spec, prepared, decision_of(response), call_id=call_id)

    else:

        async def body(tool_context: Any) -> str:
            args, call_id = call(tool_context)
            return str(await ctx.tools.acall(spec.name, args, call_id=call_id))

    # The function takes only the context: the arguments are the model's call as strands received it
    # (tool_context.tool_use["input"]), the schema the model sees is the spec's own.
    return strands.tool(name=spec.name, description=spec.description, inputSchema={"json": dict(spec.parameters)},
                        context=True)(body)


def gate(ctx: LegContext) -> Any:
    """strands' documented approval hook (a HookProvider on BeforeToolCallEvent): interrupt before a gated tool
    runs. With delegates (`agents_of(ctx)`), the interrupt's reason also names the agent whose call it holds,
    `event.agent.name` (the strands Agent the hook event belongs to)."""
    from strands.hooks import BeforeToolCallEvent, HookProvider, HookRegistry

    gated = set(ctx.gated_tools) - {s.name for s in ctx.body_pause_tools}
    named = bool(agents_of(ctx))

    class Gate(HookProvider):
        """strands' documented approval hook: interrupt before a gated tool runs."""

        def register_hooks(self, registry: HookRegistry, **kwargs: Any) -> None:
            registry.add_callback(BeforeToolCallEvent, self.approve)

        def approve(self, event: Any) -> None:
            use = event.tool_use
            if use["name"] not in gated:
                return
            # (t)rust, strands docs "Interrupts", Session Management: a tool trusted in the session's agent.state
            # runs without an interrupt; checked before interrupting, as there (and in the vended
            # HumanInTheLoop(enable_trust=True), `_requires_approval`)
            trusted = list(event.agent.state.get(TRUSTED) or [])
            if use["name"] in trusted:
                return
            reason = {"kind": "gate", "tool": use["name"], "args": dict(use.get("input") or {}),
                      "call_id": use["toolUseId"]}
            if named:
                reason["agent"] = event.agent.name
            response = event.interrupt(GATE, reason=reason)
            decision = decision_of(response)
            if decision.always and decision.kind is DecisionKind.approve:
                # trust: approves this call and records the tool in agent.state (session-persisted); strands
                # has no "reject always", so a deny marked always is this call's denial alone
                event.agent.state.set(TRUSTED, [*trusted, use["name"]])
            if decision.kind is DecisionKind.edit and decision.args is not None:
                event.tool_use = {**use, "input": dict(decision.args)}
            elif not decision.approved:
                event.cancel_tool = decision.as_text()

    return Gate()
