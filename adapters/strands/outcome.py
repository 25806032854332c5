"""How a leg ended, from strands' result: finished with the model's text, or paused on the adapter's interrupts
(`stop_reason == "interrupt"`, `result.interrupts`), the state naming the session and the interrupt ids."""

from __future__ import annotations

from typing import Any

from arena.for_adapters import LegResult, PendingRequest
from arena_builtins.arenas.delegation.channel import held_call


def outcome(result: Any, session_id: str, storage_dir: str) -> LegResult:
    """How the leg ended, from the AgentResult (or, a handoff run, the SwarmResult: status INTERRUPTED with
    its interrupts, or its last node's AgentResult)."""
    swarm = hasattr(result, "node_history")  # a SwarmResult
    if swarm and result.status.value != "interrupted":
        last = result.node_history[-1].node_id if result.node_history else None
        node = result.results.get(last) if last is not None else None
        if result.status.value != "completed" or node is None:
            ended = f"the swarm ended {result.status.value}: {getattr(node, 'result', None)!r}"
            return LegResult.errored(ended[:500])
        result, swarm = node.result, False  # the last node's AgentResult
    if not swarm and result.stop_reason != "interrupt":
        content = (result.message or {}).get("content") or []
        return LegResult.finished("".join(b["text"] for b in content if isinstance(b, dict) and "text" in b))
    interrupts = list(result.interrupts or [])
    mine = [i for i in interrupts if isinstance(i.reason, dict) and i.reason.get("kind") in ("ask", "gate", "body")]
    if not mine or len(mine) != len(interrupts):
        return LegResult.errored(f"the run stopped on interrupts the adapter did not raise: "
                                 f"{[i.name for i in interrupts]}")
    pending: list[PendingRequest] = []
    for i in mine:
        args = dict(i.reason["args"])
        if i.reason["kind"] == "body" and i.reason.get("amount") is not None:  # what the paused body will charge
            args["amount"] = i.reason["amount"]
        pending.append(held_call(i.reason["tool"], args, i.reason["call_id"], i.reason.get("agent")))
    state = {"session_id": session_id, "storage_dir": storage_dir,
             "interrupts": {i.id: {"kind": i.reason["kind"], "call_id": i.reason["call_id"]} for i in mine}}
    return LegResult.suspended(pending if len(pending) > 1 else pending[0], state)
